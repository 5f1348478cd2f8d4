package agentlock

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/dome-registry/dome/pkg/schemaval"
)

// The JSON Schemas of the inputs and outputs, embedded so validation never
// depends on files outside the binary.
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Schema file names.
const (
	SchemaAgents     = "agents.schema.json"
	SchemaIndex      = "mcp_index.schema.json"
	SchemaLock       = "agents_lock.schema.json"
	SchemaResolution = "agents_resolution.schema.json"
)

// SchemaBytes returns an embedded schema by file name.
func SchemaBytes(name string) ([]byte, error) { return schemaFS.ReadFile("schemas/" + name) }

// schema compiles an embedded schema. Compiling one of these takes tens of
// microseconds, so it is done per use rather than cached in package state.
func schema(name string) *schemaval.Schema {
	b, err := SchemaBytes(name)
	if err != nil {
		panic(err) // embedded; TestSchemasCompile keeps this unreachable
	}
	return schemaval.MustCompile(name, b)
}

// violations validates doc against a schema and returns diagnostics placed
// with pos; hint adds advice per field.
func violations(file, schemaName string, doc any, pos map[string]schemaval.Position, hint func(field, problem string) string) []Diagnostic {
	return schema(schemaName).Diagnose(file, doc, pos, hint)
}

// decodeInto decodes a validated generic document into a typed value.
func decodeInto(doc any, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("re-encode: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}
