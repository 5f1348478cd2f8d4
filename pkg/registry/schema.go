package registry

import (
	"embed"
	"sync"

	"github.com/dome-registry/dome/pkg/schemaval"
)

// Schemas are embedded so that validation never depends on files outside
// the binary; the README points at them.
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Schema file names, also used as the names in error messages.
const (
	SchemaTool           = "tool.schema.json"
	SchemaProfile        = "profile.schema.json"
	SchemaGeneratorsLock = "generators_lock.schema.json"
	SchemaResolverSpec   = "resolver_spec.schema.json"
	SchemaPolicySpec     = "policy_spec.schema.json"
)

// SchemaBytes returns an embedded schema by file name.
func SchemaBytes(name string) ([]byte, error) { return schemaFS.ReadFile("schemas/" + name) }

// schemas compiles the embedded schemas on first use, once per Registry, so
// a command pays only for the schemas of the files it reads.
type schemas struct {
	mu       sync.Mutex
	compiled map[string]*schemaval.Schema
}

func (s *schemas) get(name string) *schemaval.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.compiled[name]; ok {
		return c
	}
	b, err := SchemaBytes(name)
	if err != nil {
		panic(err) // embedded; TestSchemasCompile keeps this unreachable
	}
	c := schemaval.MustCompile(name, b)
	if s.compiled == nil {
		s.compiled = map[string]*schemaval.Schema{}
	}
	s.compiled[name] = c
	return c
}

// Validate validates data read from source against the named embedded schema.
func (r *Registry) validate(schema, source string, data []byte) error {
	return r.schemas.get(schema).Validate(source, data)
}
