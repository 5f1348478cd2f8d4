package yamlcore

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("v: "+src+"\n"), &doc); err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return doc.Content[0].Content[1]
}

// TestResolve_CoreSchema follows the YAML 1.2.2 core schema table
// (section 10.3.2), including the YAML 1.1 forms that must not apply.
func TestResolve_CoreSchema(t *testing.T) {
	for _, tt := range []struct {
		src  string
		kind Kind
		text string // number literal or string
		b    bool
	}{
		{"", Null, "", false},
		{"~", Null, "", false},
		{"null", Null, "", false},
		{"NULL", Null, "", false},
		{"nUll", String, "nUll", false},
		{"true", Bool, "", true},
		{"False", Bool, "", false},
		{"yes", String, "yes", false},
		{"off", String, "off", false},
		{"010", Number, "10", false},
		{"08", Number, "8", false},
		{"09", Number, "9", false},
		{"-007", Number, "-7", false},
		{"+12", Number, "12", false},
		{"-0", Number, "0", false},
		{"0o17", Number, "15", false},
		{"0x1F", Number, "31", false},
		{"0xff", Number, "255", false},
		{"0X1F", String, "0X1F", false},
		{"0O17", String, "0O17", false},
		{"0o19", String, "0o19", false},
		{"0b101", String, "0b101", false},
		{"1_000", String, "1_000", false},
		{"12345678901234567890123", Number, "12345678901234567890123", false},
		{"1.5", Number, "1.5", false},
		{"1.50", Number, "1.50", false},
		{".5", Number, "0.5", false},
		{"-.5", Number, "-0.5", false},
		{"1.", Number, "1", false},
		{"+1.5e3", Number, "1500", false},
		{"1e3", Number, "1e3", false},
		{"1E-3", Number, "1E-3", false},
		{"1e", String, "1e", false},
		{"1.5.1", String, "1.5.1", false},
		{"2024-05-01", String, "2024-05-01", false},
		{"1:30", String, "1:30", false},
		{"'010'", String, "010", false},
		{`"true"`, String, "true", false},
		{"!!str 12", String, "12", false},
		{"!!int 12", Number, "12", false},
		{"!!float 12", Number, "12", false},
		{"!!binary aGk=", String, "aGk=", false},
		{"3.0.3", String, "3.0.3", false},
	} {
		s, err := Resolve(node(t, tt.src))
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if s.Kind != tt.kind || (s.Kind != Bool && s.Text != tt.text) || s.Bool != tt.b {
			t.Errorf("%q = %+v, want kind %d %q %v", tt.src, s, tt.kind, tt.text, tt.b)
		}
	}
}

func TestResolve_Refused(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"1e400", "out of the range"},
		{"-1e400", "out of the range"},
		{".inf", "not a JSON number"},
		{"-.Inf", "not a JSON number"},
		{".NaN", "not a JSON number"},
		{"!!int 1.5", "not a valid !!int"},
		{"!!bool yes", "not a valid !!bool"},
		{"!custom x", "tag !custom is not supported"},
		{"!!set x", "not supported"},
	} {
		_, err := Resolve(node(t, tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.src, err, tt.want)
		}
	}
}

func TestIsMergeKey(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("<<: {a: 1}\n'<<': 2\n!!merge <<: {b: 1}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0].Content
	if !IsMergeKey(m[0]) || IsMergeKey(m[2]) || !IsMergeKey(m[4]) {
		t.Errorf("IsMergeKey: plain %v, quoted %v, tagged %v", IsMergeKey(m[0]), IsMergeKey(m[2]), IsMergeKey(m[4]))
	}
}

// FuzzPlain checks that every plain scalar resolves without panicking and
// that a number is a JSON number literal.
func FuzzPlain(f *testing.F) {
	for _, s := range []string{"010", "0x1F", "0o7", ".5", "1e400", "-", "+", ".", "1_000", "0x", "0o", "+.e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Plain(s)
		if err != nil || v.Kind != Number {
			return
		}
		if !jsonNumber(v.Text) {
			t.Fatalf("Plain(%q) = %q, not a JSON number", s, v.Text)
		}
	})
}
