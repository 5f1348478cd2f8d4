package contracttest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/schemaval"
)

//go:embed schemas/case.schema.json
var schemaFS embed.FS

// CasesDir is where a tool keeps its golden cases, relative to its folder.
const CasesDir = "contract-tests/cases"

// Case is one golden case: a request to an operation and the response a
// server gives to it.
type Case struct {
	Name        string   `json:"-"` // the file name without .json
	File        string   `json:"-"` // relative to the tool folder
	Description string   `json:"description,omitempty"`
	OperationID string   `json:"operation_id"`
	Request     Request  `json:"request"`
	Response    Response `json:"response"`
}

// Request is the request a client must send.
type Request struct {
	PathParams map[string]any    `json:"path_params,omitempty"`
	Query      map[string]any    `json:"query,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       json.RawMessage   `json:"body,omitempty"`
}

// Response is what the mock server answers.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
}

var caseSchema = sync.OnceValue(func() *schemaval.Schema {
	b, err := schemaFS.ReadFile("schemas/case.schema.json")
	if err != nil {
		panic(err)
	}
	return schemaval.MustCompile("contract_case.schema.json", b)
})

// ParseCase validates and decodes one case file; source names it.
func ParseCase(source, name string, data []byte) (*Case, error) {
	if err := caseSchema().Validate(source, data); err != nil {
		return nil, err
	}
	var c Case
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	c.Name = name
	return &c, nil
}

// LoadCases reads every contract-tests/cases/*.json of a resolved tool,
// sorted by name. A tool without cases has none (not an error).
func LoadCases(reg *registry.Registry, t *registry.ToolResolution) ([]*Case, error) {
	var out []*Case
	for _, f := range t.Files {
		dir, base := path.Split(f.Path)
		if dir != CasesDir+"/" || !strings.HasSuffix(base, ".json") {
			continue
		}
		data, _, err := reg.ReadFile(t, f.Path)
		if err != nil {
			return nil, err
		}
		c, err := ParseCase(t.ToolPath+"/"+f.Path+"@"+t.Commit.Short(), strings.TrimSuffix(base, ".json"), data)
		if err != nil {
			return nil, err
		}
		c.File = f.Path
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// scalar renders a JSON scalar (json.Number, string, bool) as text.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

// queryValues renders a case's query as URL values (arrays exploded).
func queryValues(q map[string]any) map[string][]string {
	out := map[string][]string{}
	for k, v := range q {
		if arr, ok := v.([]any); ok {
			for _, x := range arr {
				out[k] = append(out[k], scalar(x))
			}
			continue
		}
		out[k] = append(out[k], scalar(v))
	}
	return out
}

// expandPath substitutes path parameters into a path template.
func expandPath(tmpl string, params map[string]any) string {
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		b.WriteString(scalar(params[rest[i+1:j]]))
		rest = rest[j+1:]
	}
}
