package registry

import (
	"embed"

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

// schemas holds the compiled schemas of one Registry.
type schemas struct {
	tool, profile, genLock, resolver, policy *schemaval.Schema
}

func compileSchemas() schemas {
	c := func(name string) *schemaval.Schema {
		b, err := SchemaBytes(name)
		if err != nil {
			panic(err) // embedded; TestSchemasCompile keeps this unreachable
		}
		return schemaval.MustCompile(name, b)
	}
	return schemas{
		tool:     c(SchemaTool),
		profile:  c(SchemaProfile),
		genLock:  c(SchemaGeneratorsLock),
		resolver: c(SchemaResolverSpec),
		policy:   c(SchemaPolicySpec),
	}
}
