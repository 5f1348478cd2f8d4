package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
)

// OperationsIndexKind is operations.json's schema_version.
const OperationsIndexKind = "dome.operations_index/v1"

// OperationsIndex is a client's operations.json: every operation the client
// exposes, with the symbol that exposes it, for cross-SDK equivalence checks.
type OperationsIndex struct {
	SchemaVersion string           `json:"schema_version"`
	ToolID        string           `json:"tool_id"`
	ProfileID     string           `json:"profile_id"`
	Language      string           `json:"language"`
	Bundle        string           `json:"bundle"`
	Operations    []IndexOperation `json:"operations"`
}

// IndexOperation is one operation of an index.
type IndexOperation struct {
	OperationID string `json:"operation_id"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	// Auth lists the alternatives of the effective security requirement:
	// scheme name -> scopes; empty means no authentication.
	Auth   []map[string][]string `json:"auth"`
	Symbol string                `json:"symbol"`
}

func buildIndex(toolID, profileID string, b *Bundle, m *Model) *OperationsIndex {
	idx := &OperationsIndex{SchemaVersion: OperationsIndexKind, ToolID: toolID, ProfileID: profileID, Language: b.Spec.Language, Bundle: b.Spec.ID, Operations: []IndexOperation{}}
	for _, op := range m.Operations {
		auth := op.Security
		if auth == nil {
			auth = []map[string][]string{}
		}
		idx.Operations = append(idx.Operations, IndexOperation{OperationID: op.ID, Method: op.Method, Path: op.Path, Auth: auth, Symbol: op.Name})
	}
	sort.Slice(idx.Operations, func(i, j int) bool { return idx.Operations[i].OperationID < idx.Operations[j].OperationID })
	return idx
}

// Encode returns the index as indented canonical JSON with a final newline.
func (x *OperationsIndex) Encode() ([]byte, error) {
	c, err := canonical.Marshal(x)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// ParseOperationsIndex decodes an operations.json.
func ParseOperationsIndex(source string, data []byte) (*OperationsIndex, error) {
	var x OperationsIndex
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if x.SchemaVersion != OperationsIndexKind {
		return nil, &errkind.InputError{Source: source, Field: "/schema_version", Problem: fmt.Sprintf("want %s, got %q", OperationsIndexKind, x.SchemaVersion)}
	}
	return &x, nil
}

// Symbol renders a bundle's symbol_pattern for one operation symbol.
func Symbol(pattern, name string) string { return strings.ReplaceAll(pattern, "{name}", name) }
