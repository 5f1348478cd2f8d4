package specfilter

import (
	"errors"
	"github.com/dome-registry/dome/pkg/canonical"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ParseYAML reads the event stream; nodeParseYAML (yamlnodes_test.go) is
// the Node-tree conversion it replaced. They must accept the same documents
// with the same trees (lines included) and refuse the same documents with
// the same message, except where an alias is involved in a nesting, budget
// or self-reference refusal: the event reader refuses at the alias, the
// Node conversion at the first value of the expansion past the limit (and
// an alias inside its own anchor, under a low depth limit, can be refused by
// one for its nesting and by the other for the cycle).

// sameValue reports the first difference between two trees ("" if none).
func sameValue(a, b *Value, at string) string {
	switch {
	case a == nil || b == nil:
		if a != b {
			return at + ": one is nil"
		}
		return ""
	case a.Kind != b.Kind || a.Bool != b.Bool || a.Text != b.Text || a.Line != b.Line:
		return at + ": " + string(a.AppendJSON(nil)) + " (line " + itoa(int(a.Line)) + ") vs " + string(b.AppendJSON(nil)) + " (line " + itoa(int(b.Line)) + ")"
	case len(a.Members) != len(b.Members):
		return at + ": lengths differ"
	}
	for i := range a.Members {
		if a.Members[i].Key != b.Members[i].Key {
			return at + ": key " + a.Members[i].Key + " vs " + b.Members[i].Key
		}
		if d := sameValue(a.Members[i].Value, b.Members[i].Value, at+"/"+escapeToken(a.Members[i].Key)); d != "" {
			return d
		}
	}
	return ""
}

// aliasLimitError is a refusal whose place the two readers name
// differently (see above).
func aliasLimitError(msg string) bool {
	return strings.Contains(msg, "alias bomb") || strings.Contains(msg, "through the alias") || strings.Contains(msg, "refers to itself") ||
		(strings.Contains(msg, "nesting deeper") && strings.Contains(msg, "*"))
}

func compareYAMLReaders(t *testing.T, name string, data []byte, lim Limits) {
	t.Helper()
	got, gotErr := ParseYAML(data, lim)
	want, wantErr := nodeParseYAML(data, lim)
	switch {
	case gotErr == nil && wantErr == nil:
		if d := sameValue(got, want, ""); d != "" {
			t.Errorf("%s: trees differ at %s", name, d)
		}
	case gotErr != nil && wantErr != nil:
		g, w := gotErr.Error(), wantErr.Error()
		if g == w {
			return
		}
		if aliasLimitError(g) || aliasLimitError(w) {
			if problemClass(g) != problemClass(w) {
				t.Errorf("%s: refused for different reasons:\n event reader: %s\n node reader:  %s", name, g, w)
			}
			return
		}
		t.Errorf("%s: errors differ:\n event reader: %s\n node reader:  %s", name, g, w)
	case gotErr != nil:
		t.Errorf("%s: the event reader refuses what the node reader reads: %v", name, gotErr)
	default:
		t.Errorf("%s: the event reader reads what the node reader refuses (%v)", name, wantErr)
	}
}

// problemClass is the kind of refusal, without its place.
func problemClass(msg string) string {
	switch {
	case strings.Contains(msg, "alias bomb"):
		return "budget"
	case strings.Contains(msg, "nesting deeper"), strings.Contains(msg, "refers to itself"):
		return "depth or cycle"
	}
	return msg
}

var yamlReaderCases = []string{
	"", "\n", "# only a comment\n", "---\n", "--- \n...\n", "a: 1\n---\nb: 2\n", "a: 1\n--- [\n", "a: [1\n--- b\n",
	"a: 1", "a: 010", "a: 0o17", "a: 0x1F", "a: 1_000", "a: 0b101", "a: 1e400", "a: -1e400", "a: .inf", "a: .NaN", "a: 1.50",
	"a: .5", "a: +1.", "a: 12345678901234567890", "a: ~", "a:", "a: null", "a: True", "a: yes", "a: 2024-05-01",
	"a: '1'", "a: \"1\"", "a: !!str 1", "a: !!int '12'", "a: !!int 1.5", "a: !!float 1", "a: !!bool yes", "a: !!null ''",
	"a: !!binary aGk=", "a: !!timestamp 2001-12-14", "a: !foo 1", "a: ! 12", "a: !<tag:yaml.org,2002:str> 12",
	"%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", "a: |\n  x\n  y\n", "a: >\n  x\n  y\n", "a: |-\n  x\n",
	"<<: {a: 1}", "'<<': 1", "\"<<\": 1", "!!merge <<: {a: 1}", "!!str <<: 1", "a: {<<: {b: 1}}",
	"a: 1\na: 2", "200: a\n'200': b", "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\nk: 11\nl: 12\nm: 13\na: 14",
	"? [a]\n: 1", "? {a: 1}\n: 2", "? a\n: b", "[a, b]: 1", "{a: 1}: 2",
	"a: &x 1\nb: *x", "a: &x [1, {b: c}]\nb: *x\nc: [*x, *x]", "a: &x\n  b: 1\nc: *x", "- &x {a: 1}\n- *x\n- [*x]",
	"a: &x [1, *x]", "a: &x\n  b: *x\n", "&x [*x]", "&y [&x [*y]]", "a: &x [1]\nb: &y [*x, *y]", "a: &x {b: [*x]}",
	"a: *x", "a: &x 1\n? *x\n: 2", "&k a: 1\nb: *k", "? &k 1e400\n: v\nx: *k", "? &k 010\n: v\nx: *k\n*k : w",
	"a: &x [1]\n*x : 2", "a: &x {b: 1}\nc: {*x : 1}", "a: &x 1\na: &x 2\nb: *x", "a: [&x 1, *x]\n---\nb: *x",
	"- a\n- b: c\n  d: e\n- [f, {g: h}]", "{a: [1, 2, {b: [3]}], c: {d: {e: f}}}", "a: 'it''s'", "a: \"\\u00e9\\n\"",
	"a: [1, 2", "a: {b: 1", "a:\n - b\n c: d", "a: b: c", "\ta: 1", "a: @b", "a: `b`", "key: value\n  bad: indent",
	"a: \"unterminated", "a: 'x\n", "- a\nb: c", "a: [b, c]: d", ": a", "? : a", "- ? a\n  : b", "[a: 1, b: 2]",
	"a: !!int 0x1F", "a: !!int 0o17", "a: !!float .inf", "a: !!float 1e400", "a: 9223372036854775808",
	"a: -0", "a: +0", "a: 00", "a: -010", "a: 0.0e0", "a: 1E5", "a: 1e+5", "a: +.5e-3",
	"a:\n  - b\n  # comment\n  - c\n# tail\nd: e\n", "a: 1 # comment\nb: 2",
	"\ufeffa: 1", "a: \x00", "a: \xff", "a: b\r\nc: d\r\n", "{\"openapi\": \"3.0.3\", \"a\": [1, 2]}",
}

func TestParseYAML_MatchesNodeReader(t *testing.T) {
	for _, c := range yamlReaderCases {
		compareYAMLReaders(t, strings.ReplaceAll(c, "\n", `\n`), []byte(c), Limits{})
		compareYAMLReaders(t, strings.ReplaceAll(c, "\n", `\n`)+" (small limits)", []byte(c), Limits{MaxDepth: 2, MaxAliasNodes: 3})
	}
	compareYAMLReaders(t, "billion laughs", billionLaughs(), Limits{})
	deep := "x: " + strings.Repeat("[", 600) + strings.Repeat("]", 600)
	compareYAMLReaders(t, "deep", []byte(deep), Limits{})
	// Every YAML file of the repository, and the Stripe spec when present.
	root := filepath.Join("..", "..")
	files := []string{stripeSpec}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".work" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		compareYAMLReaders(t, f, data, Limits{})
	}
}

func FuzzParseYAMLDifferential(f *testing.F) {
	for _, c := range yamlReaderCases {
		f.Add([]byte(c))
	}
	f.Add(billionLaughs())
	f.Fuzz(func(t *testing.T, data []byte) {
		compareYAMLReaders(t, "input", data, Limits{MaxDepth: 16, MaxAliasNodes: 1000})
	})
}

// AppendCanonical writes what canonical.Transform makes of AppendJSON.
func checkCanonical(t *testing.T, name string, v *Value) {
	t.Helper()
	got, gerr := v.AppendCanonical(nil)
	want, werr := canonical.Transform(v.AppendJSON(nil))
	if (gerr == nil) != (werr == nil) || string(got) != string(want) {
		t.Errorf("%s: AppendCanonical differs from Transform(AppendJSON) (errors %v, %v)", name, gerr, werr)
	}
}

func TestAppendCanonical_MatchesTransform(t *testing.T) {
	for _, c := range yamlReaderCases {
		if v, err := ParseYAML([]byte(c), Limits{}); err == nil {
			checkCanonical(t, c, v)
		}
	}
	files := []string{stripeSpec, "../../../shared/data/stripe-spec3-2021-06.json"}
	matches, _ := filepath.Glob("testdata/*/*.json")
	files = append(files, matches...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := parseFile(f, data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checkCanonical(t, f, v)
	}
}

func FuzzAppendCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.50,-0,1e21,"\u0000\u2028"],"\ufb33":2,"\ud83d\ude00":3}`, `[]`, `{}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, err := ParseJSON(data, Limits{MaxDepth: 64}); err == nil {
			checkCanonical(t, "input", v)
		}
	})
}
