package schemaval

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
)

// FuzzCanonicalImpliesTokens proves what CheckJSON's fast path rests on:
// whatever RFC 8785's parser accepts (with canonicalOptions), the token pass
// accepts too, and so does decode. CheckJSON then says what the two passes
// in turn said before it: nothing if both accept, else the token pass's
// refusal if it has one.
func FuzzCanonicalImpliesTokens(f *testing.F) {
	for _, b := range jsonSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, cerr := canonical.TransformWith(data, canonicalOptions)
		terr := checkTokens("f.json", data)
		if cerr == nil {
			if terr != nil {
				t.Fatalf("RFC 8785's parser accepts %q, the token pass refuses it: %v", data, terr)
			}
			if _, err := decode(data); err != nil {
				t.Fatalf("RFC 8785's parser accepts %q, decode refuses it: %v", data, err)
			}
		}
		err := CheckJSON("f.json", data)
		switch {
		case (err == nil) != (cerr == nil && terr == nil):
			t.Fatalf("CheckJSON(%q) = %v; token pass: %v, RFC 8785: %v", data, err, terr, cerr)
		case terr != nil && err.Error() != terr.Error():
			t.Fatalf("CheckJSON(%q) = %v, want the token pass's %v", data, err, terr)
		}
	})
}

// TestCheckJSON_DepthLimits: the two passes count nesting differently (open
// arrays and objects, levels of values) but CheckJSON refuses at the same
// depths as ever, with the same messages.
func TestCheckJSON_DepthLimits(t *testing.T) {
	for _, tt := range []struct {
		arrays int
		inner  string
		want   string // "" accepted
	}{
		{maxDepth, "", ""},
		{maxDepth, "1", ""},
		{maxDepth + 1, "", "nesting deeper than 1000 arrays and objects"}, // the token pass accepts it
		{maxDepth + 1, "1", "nesting deeper than 1000 levels"},
	} {
		doc := []byte(strings.Repeat("[", tt.arrays) + tt.inner + strings.Repeat("]", tt.arrays))
		err := CheckJSON("f.json", doc)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%d arrays around %q: %v, want %q", tt.arrays, tt.inner, err, tt.want)
		}
	}
}

// jsonSeeds are the JSON texts of the repository's test data and example
// registry, and texts at the edges of what either pass accepts.
func jsonSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, glob := range []string{
		"testdata/*.json",
		"../canonical/testdata/rfc8785/input/*.json",
		"../../registry/tools/*/tool.json",
		"../*/schemas/*.json",
	} {
		files, err := filepath.Glob(glob)
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	for _, dir := range []string{"testdata/fuzz/FuzzDecodeLocated", "../canonical/testdata/fuzz/FuzzTransform"} {
		files, err := filepath.Glob(dir + "/*")
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range files {
			seeds = append(seeds, corpusBytes(tb, p))
		}
	}
	nest := func(n int, inner string) string {
		return strings.Repeat(`{"a":[`, n) + inner + strings.Repeat(`]}`, n)
	}
	for _, s := range []string{
		`{"a":1,"\u0061":2}`, `{"\u00e9":1,"é":2}`, `{"\ud83d\ude00":1,"😀":2}`, `{"a\/b":1,"a/b":2}`,
		"{\"\xff\":1,\"\\ufffd\":2}", `{"\ud800":1,"\ufffd":2}`, `{"b":1,"a":2,"b":3}`,
		`{"a":{"x":1},"b":{"x":1,"y":[1,{"x":2,"x":3}]}}`,
		"\xef\xbb\xbf{}", `1 2`, `{} `, " \t\r\n[]\n", ``, ` `, `"\ud800"`, `"\udc00\ud800"`,
		`1e400`, `-0`, `1E5`, `0.1e-400`, `-`, `01`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `[1 2]`,
		"\"\x7f\"", "\"\x1f\"", `"\u0000"`, `tru`, `nul`, `NaN`, `[Infinity]`,
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
		strings.Repeat("[", maxDepth) + "1" + strings.Repeat("]", maxDepth),
		strings.Repeat("[", maxDepth+1) + "1" + strings.Repeat("]", maxDepth+1),
		nest(maxDepth/2, ""), nest(maxDepth/2, "1"), nest(maxDepth/2, "[]"), nest(maxDepth/2+1, ""),
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// corpusBytes reads the one []byte value of a file of a fuzz corpus.
func corpusBytes(tb testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) != 2 || string(lines[0]) != "go test fuzz v1" {
		tb.Fatalf("%s: not a corpus file of one value", path)
	}
	lit, ok := strings.CutPrefix(string(lines[1]), "[]byte(")
	lit, ok2 := strings.CutSuffix(lit, ")")
	s, err := strconv.Unquote(lit)
	if !ok || !ok2 || err != nil {
		tb.Fatalf("%s: not a []byte value: %q", path, lines[1])
	}
	return []byte(s)
}
