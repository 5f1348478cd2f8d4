package specfilter

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseYAML_ToJSONModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a: 1", `{"a":1}`},
		{"a: 0x1F", `{"a":31}`},
		{"a: 0o17", `{"a":15}`},
		{"a: -12", `{"a":-12}`},
		{"a: 1.5e3", `{"a":1.5e3}`},
		{"a: .5", `{"a":0.5}`},
		{"a: 123456789012345678901234567890", `{"a":123456789012345678901234567890}`},
		{"a: true\nb: null\nc: ~\nd: yes", `{"a":true,"b":null,"c":null,"d":"yes"}`},
		{"200: ok\n'201': created", `{"200":"ok","201":"created"}`},
		{"d: 2023-08-16", `{"d":"2023-08-16"}`},
		{"s: 'x-y'\nt: \"\\u00e9\"", `{"s":"x-y","t":"é"}`},
		// YAML 1.2 core schema, not 1.1 (internal/yamlcore).
		{"a: 010\nb: 08\nc: 09\nd: 1_000\ne: 0b101\nf: +7", `{"a":10,"b":8,"c":9,"d":"1_000","e":"0b101","f":7}`},
		{"a: 0X1F\nb: on\nc: 1.\nd: '<<'", `{"a":"0X1F","b":"on","c":1,"d":"<<"}`},
		{"'<<': quoted is a plain key", `{"<<":"quoted is a plain key"}`},
		{"a: &a {k: v}\nb: [*a, *a]", `{"a":{"k":"v"},"b":[{"k":"v"},{"k":"v"}]}`},
		{"- 1\n- [2, {a: b}]", `[1,[2,{"a":"b"}]]`},
	}
	for _, tt := range tests {
		v, err := ParseYAML([]byte(tt.in), Limits{})
		if err != nil {
			t.Errorf("ParseYAML(%q): %v", tt.in, err)
			continue
		}
		if got := string(v.AppendJSON(nil)); got != tt.want {
			t.Errorf("ParseYAML(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseYAML_BadInput(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate key", "a: 1\nb: 2\na: 3", `line 3: /a: duplicate key "a" (first at line 1)`},
		{"duplicate after conversion", "200: a\n'200': b", `duplicate key "200"`},
		{"nested duplicate", "x:\n  y:\n    k: 1\n    k: 2", `line 4: /x/y/k: duplicate key "k"`},
		{"sequence key", "? [a]\n: 1", "a mapping key must be a scalar"},
		{"nan", "a: .nan", "is not a JSON number"},
		{"inf", "a: -.inf", "is not a JSON number"},
		{"custom tag", "a: !include x.yaml", "YAML tag !include is not supported"},
		{"float overflow", "a: 1\nb: 1e400", "line 2: /b: 1e400 is out of the range of a JSON number"},
		{"merge key", "base: &b {x: 1}\nobj:\n  <<: *b\n  y: 3", "line 3: /obj: YAML merge keys (<<) are not supported"},
		{"tagged merge key", "obj:\n  !!merge <<: {x: 1}", "line 2: /obj: YAML merge keys"},
		{"tag mismatch", "a: !!int 1.5", "not a valid !!int"},
		{"two documents", "a: 1\n---\nb: 2", "more than one YAML document"},
		{"empty", "", "empty document"},
		{"syntax", "a: [1, 2", "invalid YAML"},
		{"merge of a scalar", "a: &a 1\nb:\n  <<: *a", "merge keys (<<) are not supported"},
	}
	for _, tt := range tests {
		_, err := ParseYAML([]byte(tt.in), Limits{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseYAML(%q) error = %v, want it to contain %q", tt.name, tt.in, err, tt.want)
		}
	}
}

func TestParseJSON_BadInput(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate key", `{"a":1,"b":{"c":1,"c":2}}`, `/b/c: duplicate key "c"`},
		{"duplicate spelled with escapes", `{"a":1,"\u0061":2}`, `duplicate key "a"`},
		{"duplicate in a big object", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k3":0}`, `duplicate key "k3"`},
		{"trailing data", `{} {}`, "after the JSON value"},
		{"lone surrogate", `{"a":"\ud800"}`, "lone UTF-16 surrogate"},
		{"invalid utf-8", "{\"a\":\"\xff\"}", "invalid UTF-8"},
		{"control character", "{\"a\":\"\x01\"}", "control character"},
		{"leading zero", `{"a":01}`, "expected ','"},
		{"bad exponent", `{"a":1e}`, "exponent"},
		{"unterminated", `{"a":"x`, "unterminated"},
		{"nan", `{"a":NaN}`, "unexpected character"},
		{"empty", ``, "unexpected end"},
		{"out of double range", `{"a":1e400}`, "out of the IEEE 754 double range"},
	}
	for _, tt := range tests {
		_, err := ParseJSON([]byte(tt.in), Limits{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ParseJSON(%q) error = %v, want it to contain %q", tt.name, tt.in, err, tt.want)
		}
	}
}

func TestParseJSON_KeepsNumbersAndOrder(t *testing.T) {
	in := `{"z":1.0,"a":[1e300,-0,12345678901234567890],"m":{"b":"\u00e9\n","a":null}}`
	v, err := ParseJSON([]byte(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1.0,"a":[1e300,-0,12345678901234567890],"m":{"b":"é\n","a":null}}`
	if got := string(v.AppendJSON(nil)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// billionLaughs is the classic alias bomb: 9^9 strings if expanded.
func billionLaughs() []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [")
		for i := 0; i < 9; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	return []byte(b.String())
}

// bounded runs f and fails when it takes longer than d or allocates more
// than maxAlloc bytes.
func bounded(t *testing.T, name string, d time.Duration, maxAlloc uint64, f func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := f()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if elapsed > d {
		t.Errorf("%s took %v, want under %v", name, elapsed, d)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
		t.Errorf("%s allocated %d MB, want under %d MB", name, alloc>>20, maxAlloc>>20)
	}
	return err
}

func TestHostileYAML_FailsFastWithBoundedMemory(t *testing.T) {
	deepSeq := "openapi: 3.0.3\nx: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	deepMap := "openapi: 3.0.3\nx: " + strings.Repeat("{a: ", 9000) + "1" + strings.Repeat("}", 9000)
	var deepBlock strings.Builder
	deepBlock.WriteString("openapi: 3.0.3\n")
	for i := 0; i < 2000; i++ {
		deepBlock.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	deepJSON := `{"openapi":"3.0.3","x":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "}"
	selfAlias := "a: &a\n  b: *a\n"
	tests := []struct {
		name, file, want string
		data             []byte
	}{
		{"billion laughs", "bomb.yaml", "alias bomb", billionLaughs()},
		{"deep flow sequences", "deep.yaml", "nesting deeper than 512", []byte(deepSeq)},
		{"deep flow mappings", "deep.yaml", "nesting deeper than 512", []byte(deepMap)},
		{"deep block mappings", "deep.yaml", "nesting deeper than 512", []byte(deepBlock.String())},
		{"deep JSON", "deep.json", "nesting deeper than 512", []byte(deepJSON)},
		{"alias of itself", "self.yaml", "", []byte(selfAlias)},
	}
	for _, tt := range tests {
		// Through the real path: Load -> parseFile -> YAML/JSON -> Value.
		err := bounded(t, tt.name, 2*time.Second, 64<<20, func() error {
			_, err := LoadBytes(tt.file, tt.data, LoadOptions{})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tt.name, err, tt.want)
		}
		var ie interface{ Unwrap() error }
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %T is not an input error", tt.name, err)
		}
	}
}

func TestParsePointer(t *testing.T) {
	for _, s := range []string{"", "/a", "/a~1b/c~0d", "/0/", "/components/schemas/Pet"} {
		p, ok := ParsePointer(s)
		if !ok || p.String() != s {
			t.Errorf("ParsePointer(%q) = %q, %v", s, p.String(), ok)
		}
	}
	for _, s := range []string{"a", "/a~2", "/a~"} {
		if _, ok := ParsePointer(s); ok {
			t.Errorf("ParsePointer(%q) accepted", s)
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `{"a":1,"a":2}`, `"\ud83d\ude00"`, `[1e5,-0.5]`, `{"a":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseJSON(data, Limits{MaxDepth: 64})
		if err != nil {
			return
		}
		// What parses re-encodes to JSON that parses to the same tree.
		out := v.AppendJSON(nil)
		v2, err := ParseJSON(out, Limits{MaxDepth: 64})
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", out, err)
		}
		if string(v2.AppendJSON(nil)) != string(out) {
			t.Fatalf("round trip changed %q", out)
		}
	})
}

func FuzzParseYAML(f *testing.F) {
	for _, s := range []string{"a: 1", "a: &a [1]\nb: *a", "<<: {a: 1}", "- [a, {b: c}]", string(billionLaughs()), "a: !!binary aGk=", "? a\n: b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseYAML(data, Limits{MaxDepth: 64, MaxAliasNodes: 10000})
		if err != nil {
			return
		}
		if _, err := ParseJSON(v.AppendJSON(nil), Limits{MaxDepth: 128}); err != nil {
			t.Fatalf("YAML converted to invalid JSON: %v", err)
		}
	})
}
