package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// toolDocs are the tool.json files of the example registry and of the test
// fixtures (the webui's registry, and testdata/tooljson: the shapes the CLI
// stories use, valid and not), and documents that use every member of the
// schema.
func toolDocs(tb testing.TB) [][]byte {
	var docs [][]byte
	for _, glob := range []string{"../../registry/tools/*/tool.json", "../*/testdata/*/*/tools/*/tool.json", "testdata/tooljson/*.json"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			docs = append(docs, b)
		}
	}
	for _, s := range []string{
		`{"schema_version": "dome.tool/v1", "id": "a.b-c_d", "title": "T \u00e9\ud83d\ude00 \"q\"", "description": "",
		  "owners": ["o", "p <p@example.com>"], "spec": "spec/v1/x.json", "default_profile": "ro", "labels": [],
		  "homepage": "https://example.com/x?y#z", "deprecated": {"reason": "r", "since": "v1.2.3", "replacement": "b"}}`,
		`{"deprecated": {"reason": "gone"}, "spec": "spec/a.yml", "owners": ["x"], "title": "t", "id": "x", "schema_version": "dome.tool/v1", "labels": ["k:v", "a"]}`,
	} {
		docs = append(docs, []byte(s))
	}
	return docs
}

// checkToolOf reports whether toolOf reads data as decodeStrict does; ok is
// false if data is not a valid tool.json, which toolOf never sees.
func checkToolOf(t *testing.T, data []byte) (ok bool) {
	t.Helper()
	doc, err := (&schemas{}).get(SchemaTool).ValidateDecode("tool.json", data)
	if err != nil {
		return false
	}
	got, err := toolOf(doc)
	if err != nil {
		t.Fatalf("toolOf(%s): %v", data, err)
	}
	want := &Tool{}
	if err := decodeStrict(data, want); err != nil {
		t.Fatalf("decodeStrict(%s): %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ntoolOf       %#v\ndecodeStrict %#v", data, got, want)
	}
	return true
}

func TestToolOfMatchesDecodeStrict(t *testing.T) {
	valid := 0
	for _, d := range toolDocs(t) {
		if checkToolOf(t, d) {
			valid++
		}
	}
	if valid < 20 {
		t.Fatalf("only %d valid tool.json documents to compare", valid)
	}
}

func FuzzToolOf(f *testing.F) {
	for _, d := range toolDocs(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkToolOf(t, data) })
}

// TestToolOfKnowsEveryField: a document with every member Tool's json tags
// name (whatever the schema says of them) reads the same through toolOf as
// through encoding/json, so a field added to Tool without its mapping fails.
func TestToolOfKnowsEveryField(t *testing.T) {
	doc := sampleOf(t, reflect.TypeFor[Tool](), "")
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := &Tool{}
	if err := decodeStrict(data, want); err != nil {
		t.Fatal(err)
	}
	got, err := toolOf(doc)
	if err != nil {
		t.Fatalf("toolOf(%s): %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ntoolOf       %#v\ndecodeStrict %#v", data, got, want)
	}
}

// sampleOf returns a decoded JSON value (as schemaval returns one) that sets
// every field of a value of type typ, each to a value of its own.
func sampleOf(t *testing.T, typ reflect.Type, name string) any {
	switch {
	case typ.Kind() == reflect.String:
		return "value of " + name
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.String:
		return []any{"first of " + name, "second of " + name}
	case typ.Kind() == reflect.Pointer:
		return sampleOf(t, typ.Elem(), name)
	case typ.Kind() == reflect.Struct:
		m := map[string]any{}
		for f := range typ.Fields() {
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" {
				continue
			}
			if key == "" {
				key = f.Name
			}
			m[key] = sampleOf(t, f.Type, name+"/"+key)
		}
		return m
	}
	t.Fatalf("%s: no sample of a %s; teach sampleOf and toolOf", name, typ)
	return nil
}
