package aicontract

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// mapSource is a catalog in memory: path -> bytes.
type mapSource map[string][]byte

func (m mapSource) ReadFile(name string) ([]byte, error) {
	b, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return b, nil
}

func (m mapSource) List(dir string) ([]string, error) {
	var out []string
	for k := range m {
		if path.Dir(k) == dir {
			out = append(out, path.Base(k))
		}
	}
	if out == nil {
		return nil, fs.ErrNotExist
	}
	sort.Strings(out)
	return out, nil
}

func (m mapSource) Name(name string) string { return "policy/contracts/" + name }

// repoCatalog reads policy/contracts/ of this repository into a mapSource.
func repoCatalog(t testing.TB) mapSource {
	t.Helper()
	root := "../../policy/contracts"
	m := mapSource{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fixture is a small catalog that tests edit: rules r-<severity>-<n>.
type fixture struct {
	commands    []map[string]any
	rules       []map[string]any
	presets     []map[string]any
	constraints []map[string]any
	projects    map[string]map[string]any
}

func newFixture() *fixture {
	return &fixture{
		commands: []map[string]any{
			{"id": "gen", "displayName": "Generate thing", "intentId": "generate", "templateId": "contract-v1"},
			{"id": "ref", "displayName": "Refactor thing", "intentId": "refactor", "templateId": "contract-v1"},
			{"id": "rev", "displayName": "Review thing", "intentId": "review", "templateId": "contract-v1"},
		},
		rules: []map[string]any{
			rule("base-error", "error", true, "generate", "refactor"),
			rule("review-only", "error", true, "review"),
		},
		presets: []map[string]any{
			{"id": "p", "displayName": "Preset P", "stack": []any{"Go 1.26", "SQLite"}, "constraints": map[string]any{"maxFilesChanged": 9, "styling": "plain"}},
		},
		constraints: []map[string]any{
			{"key": "maxFilesChanged", "type": "integer", "minimum": 0, "description": "files"},
			{"key": "allowNewDependencies", "type": "boolean", "description": "deps"},
			{"key": "styling", "type": "string", "enum": []any{"plain", "fancy"}, "description": "style"},
			{"key": "paths", "type": "string-list", "description": "paths"},
		},
		projects: map[string]map[string]any{
			"proj": {"schemaVersion": "dome.contract_project/v1", "id": "proj", "stackPresetId": "p"},
		},
	}
}

func rule(id, severity string, on bool, intents ...string) map[string]any {
	var in []any
	for _, i := range intents {
		in = append(in, i)
	}
	return map[string]any{"id": id, "title": "Rule " + id, "description": "d", "severity": severity,
		"appliesToIntents": in, "directive": "Directive of " + id + ".", "defaultEnabled": on}
}

func (f *fixture) rule(id string) map[string]any {
	for _, r := range f.rules {
		if r["id"] == id {
			return r
		}
	}
	panic("no rule " + id)
}

func (f *fixture) source(t testing.TB) mapSource {
	t.Helper()
	enc := func(v any) []byte {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m := mapSource{
		CommandsFile:    enc(map[string]any{"schemaVersion": "dome.contract_commands/v1", "commands": f.commands}),
		RulesFile:       enc(map[string]any{"schemaVersion": "dome.contract_rules/v1", "rules": f.rules}),
		PresetsFile:     enc(map[string]any{"schemaVersion": "dome.contract_presets/v1", "presets": f.presets}),
		ConstraintsFile: enc(map[string]any{"schemaVersion": "dome.contract_constraints/v1", "constraints": f.constraints}),
	}
	for id, p := range f.projects {
		m[ProjectsDir+"/"+id+".json"] = enc(p)
	}
	return m
}

func (f *fixture) resolve(t testing.TB, project, command, input string) *Result {
	t.Helper()
	src := f.source(t)
	c, err := LoadCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(c, src, Request{ProjectID: project, CommandID: command, UserInput: input}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func appliedIDs(r *Result) string {
	var ids []string
	for _, x := range r.Contract.Meta.RulesApplied {
		ids = append(ids, x.ID)
	}
	return strings.Join(ids, ",")
}
