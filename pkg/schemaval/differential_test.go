package schemaval_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// oracle compiles a schema with santhosh-tekuri/jsonschema, the reference
// implementation this package is checked against (tests only).
func oracle(t testing.TB, name string, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///"+name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func agree(t testing.TB, name string, ours *schemaval.Schema, theirs *jsonschema.Schema, doc []byte) {
	t.Helper()
	if !json.Valid(doc) {
		return
	}
	if schemaval.CheckJSON("doc", doc) != nil {
		return // duplicate keys or too deep: refused before validation, by design
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return
	}
	errOurs := ours.Validate("doc", doc)
	errTheirs := theirs.Validate(inst)
	if (errOurs == nil) != (errTheirs == nil) {
		t.Fatalf("%s: verdicts differ on %s\nours:   %v\ntheirs: %v", name, doc, errOurs, errTheirs)
	}
}

// schemaFiles are every schema dome ships, with documents to try.
func schemaFiles(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("../registry/schemas/*.schema.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no schemas found: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// mutations derives documents from a valid one: each field removed, set to
// other types, and an unknown field added, at every level.
func mutations(doc any) []any {
	alts := []any{nil, true, json.Number("0"), json.Number("-1"), json.Number("1.5"), "", "x y", "v1.2.3", []any{}, []any{"a"}, map[string]any{}}
	var out []any
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			for _, alt := range alts {
				c := clone(d)
				c[k] = alt
				out = append(out, c)
			}
			c := clone(d)
			delete(c, k)
			out = append(out, c)
			for _, m := range mutations(v) {
				c := clone(d)
				c[k] = m
				out = append(out, c)
			}
		}
		c := clone(d)
		c["zz_unknown"] = "x"
		out = append(out, c)
	case []any:
		for i, v := range d {
			for _, m := range mutations(v) {
				c := append([]any(nil), d...)
				c[i] = m
				out = append(out, c)
			}
		}
		out = append(out, append(append([]any(nil), d...), d...)) // duplicates
	}
	return out
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestAgreesWithReference runs both validators over every shipped schema,
// the example documents and thousands of their mutations.
func TestAgreesWithReference(t *testing.T) {
	examples := map[string][]string{
		"tool.schema.json":            {"../../registry/tools/*/tool.json"},
		"profile.schema.json":         {"../../registry/tools/*/profiles/*.profile.json"},
		"resolver_spec.schema.json":   {"../../policy/resolver_spec.json"},
		"policy_spec.schema.json":     {"../../policy/policy_spec.json"},
		"generators_lock.schema.json": {"../../registry/tools/*/generators.lock.json", "testdata/generators.lock.json"},
	}
	total := 0
	for name, data := range schemaFiles(t) {
		ours, err := schemaval.Compile(name, data)
		if err != nil {
			t.Fatal(err)
		}
		theirs := oracle(t, name, data)
		var docs [][]byte
		for _, pattern := range examples[name] {
			paths, _ := filepath.Glob(pattern)
			for _, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := ours.Validate(p, b); err != nil {
					t.Errorf("example %s: %v", p, err)
				}
				docs = append(docs, b)
			}
		}
		if len(docs) == 0 {
			t.Fatalf("%s: no example documents", name)
		}
		for _, d := range docs {
			var v any
			dec := json.NewDecoder(bytes.NewReader(d))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			for _, m := range append(mutations(v), v) {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				agree(t, name, ours, theirs, b)
				total++
			}
		}
	}
	t.Logf("%d documents checked against the reference validator", total)
}

func FuzzAgreesWithReference(f *testing.F) {
	data, err := os.ReadFile("../registry/schemas/profile.schema.json")
	if err != nil {
		f.Fatal(err)
	}
	ours := schemaval.MustCompile("profile.schema.json", data)
	theirs := oracle(f, "profile.schema.json", data)
	for _, s := range []string{`{"schema_version":"dome.profile/v1","id":"x"}`, `{"id":"x","allow":{"operations":["a","a"]}}`, `{"budgets":{"max_calls_by_family":{"a":-1}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		agree(t, "profile.schema.json", ours, theirs, doc)
	})
}
