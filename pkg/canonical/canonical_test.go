package canonical

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// transformAll runs every entry point on in and checks they agree.
func transformAll(t *testing.T, in []byte) ([]byte, error) {
	t.Helper()
	got, err := Transform(in)
	readers := map[string]io.Reader{
		"one-byte": iotest.OneByteReader(bytes.NewReader(in)),
		"half":     iotest.HalfReader(bytes.NewReader(in)),
		"data-err": iotest.DataErrReader(bytes.NewReader(in)),
	}
	for name, r := range readers {
		got2, err2 := TransformReader(r, Options{})
		if !sameResult(got, err, got2, err2) {
			t.Errorf("TransformReader(%s) = %q, %v; Transform = %q, %v", name, got2, err2, got, err)
		}
	}
	var buf bytes.Buffer
	err3 := TransformStream(&buf, iotest.OneByteReader(bytes.NewReader(in)), Options{})
	if err == nil && (err3 != nil || !bytes.Equal(buf.Bytes(), got)) {
		t.Errorf("TransformStream = %q, %v; Transform = %q", buf.Bytes(), err3, got)
	}
	if err != nil && !sameErr(err, err3) {
		t.Errorf("TransformStream error %v; Transform error %v", err3, err)
	}
	return got, err
}

func sameResult(a []byte, ea error, b []byte, eb error) bool {
	if ea != nil || eb != nil {
		return sameErr(ea, eb)
	}
	return bytes.Equal(a, b)
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

func TestRFC8785Vectors(t *testing.T) {
	files, err := filepath.Glob("testdata/rfc8785/input/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			in := readFile(t, f)
			want := readFile(t, filepath.Join("testdata/rfc8785/output", name))
			hexText := readFile(t, filepath.Join("testdata/rfc8785/outhex", strings.TrimSuffix(name, ".json")+".txt"))
			wantHex, err := hex.DecodeString(strings.Join(strings.Fields(string(hexText)), ""))
			if err != nil || !bytes.Equal(wantHex, want) {
				t.Fatalf("outhex and output disagree for %s", name)
			}
			got, err := transformAll(t, in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			again, err := Transform(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("not idempotent: %s, %v", again, err)
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTransform(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"scalar number", " 1 ", "1"},
		{"scalar string", `"a"`, `"a"`},
		{"literals", `[true , false,null ]`, `[true,false,null]`},
		{"empty containers", `{ "a" : [ ] , "b" : { } }`, `{"a":[],"b":{}}`},
		{"nested empty", `[[[]],{}]`, `[[[]],{}]`},
		{"minus zero", `[-0, -0.0, 0e5, -0e-5]`, `[0,0,0,0]`},
		{"integers kept", `[123456789012345, -123456789012345]`, `[123456789012345,-123456789012345]`},
		{"big integer", `[9007199254740993, 12345678901234567890]`, `[9007199254740992,12345678901234567000]`},
		{"exponents", `[1E21, 1e20, 1e-6, 1e-7, 1.5E+3, 25e-1]`, `[1e+21,100000000000000000000,0.000001,1e-7,1500,2.5]`},
		{"underflow to zero", `[1e-400, -1e-400]`, `[0,0]`},
		{"escapes", `"\u0000\u001f\b\f\n\r\t\"\\\/\u007f\u2028"`, "\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\u2028\""},
		{"uppercase hex", `"\u00E9\u00e9"`, `"éé"`},
		{"surrogate pair", `"\ud83d\ude00\uD83D\uDE00"`, `"😀😀"`},
		{"raw utf8 kept", `"naïve 😀"`, `"naïve 😀"`},
		{"no unicode normalization", `"A\u030a"`, "\"A\u030a\""},
		{"sort ascii", `{"b":1,"a":2,"c":{"z":1,"y":2}}`, `{"a":2,"b":1,"c":{"y":2,"z":1}}`},
		{"sort prefix first", `{"ab":1,"a":2,"":3}`, `{"":3,"a":2,"ab":1}`},
		{"sort utf16 not utf8", `{"\ufb33":1,"😀":2}`, `{"😀":2,"דּ":1}`},
		{"sort utf16 bmp below surrogates", `{"😀":1,"\ud7ff":2}`, "{\"\ud7ff\":2,\"😀\":1}"},
		{"sort escaped names", `{"\n":1,"\u0001":2,"\"":3,"\\":4," ":5}`, `{"\u0001":2,"\n":1," ":5,"\"":3,"\\":4}`},
		{"sort latin", `{"é":1,"e":2,"z":3}`, `{"e":2,"z":3,"é":1}`},
		{"whitespace everywhere", "\t\r\n [ \n1\t,\r2 ] \n", `[1,2]`},
		{"deep sorted unsorted mix", `{"b":{"d":1,"c":[{"f":1,"e":2}]},"a":0}`, `{"a":0,"b":{"c":[{"e":2,"f":1}],"d":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transformAll(t, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Transform(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestTransform_Rejects(t *testing.T) {
	tests := []struct {
		name, in string
		off      int64
		msg      string
	}{
		{"empty", "", 0, "unexpected end of input"},
		{"only space", "   ", 3, "unexpected end of input"},
		{"duplicate", `{"a":1,"a":2}`, 7, `duplicate object member name "a" (first at byte offset 1)`},
		{"duplicate unsorted", `{"b":1,"a":1,"b":2}`, 13, `duplicate object member name "b" (first at byte offset 1)`},
		{"duplicate via escape", `{"a":1,"\u0061":2}`, 7, `duplicate object member name "a"`},
		{"duplicate escaped slash", `{"/":1,"\/":2}`, 7, `duplicate object member name "/"`},
		{"duplicate nested", `[{"x":{"k":1,"j":0,"k":2}}]`, 19, `duplicate object member name "k"`},
		{"invalid utf8", "\"a\xffb\"", 2, "invalid UTF-8"},
		{"utf8 surrogate", "\"\xed\xa0\x80\"", 1, "invalid UTF-8"},
		{"truncated utf8", "\"\xe2\x82", 1, "invalid UTF-8"},
		{"lone high surrogate", `"\ud83d"`, 1, "lone surrogate \\ud83d"},
		{"high then non-low", `"\ud83d\u0041"`, 1, "lone surrogate"},
		{"lone low surrogate", `"x\ude00"`, 2, "lone surrogate \\ude00"},
		{"nan", `[NaN]`, 1, "NaN and Infinity"},
		{"infinity", `[-Infinity]`, 1, "NaN and Infinity"},
		{"overflow", `[1e309]`, 1, "overflows a double"},
		{"overflow negative", `{"a":-1.8e308}`, 5, "overflows a double"},
		{"trailing data", `{} {}`, 3, "trailing data"},
		{"trailing garbage", `1x`, 1, "trailing data"},
		{"leading zero", `01`, 0, "leading zero"},
		{"plus sign", `+1`, 0, "invalid character '+'"},
		{"bare dot", `1.`, 2, "want a digit after '.'"},
		{"bad exponent", `1e+`, 3, "exponent digit"},
		{"minus alone", `-`, 1, "unexpected end of input in a number"},
		{"trailing comma array", `[1,]`, 3, "want a value"},
		{"trailing comma object", `{"a":1,}`, 7, "trailing comma"},
		{"single quotes", `{'a':1}`, 1, "member name in double quotes"},
		{"missing colon", `{"a" 1}`, 5, "want ':'"},
		{"unclosed array", `[1,2`, 4, "in an array"},
		{"unclosed object", `{"a":1`, 6, "in an object"},
		{"unclosed string", `["abc`, 1, "unexpected end of input in the string"},
		{"raw newline", "\"a\nb\"", 2, "control character U+000A"},
		{"bad escape", `"\x"`, 1, `invalid escape '\x'`},
		{"short unicode escape", `"\u12"`, 1, `want 4 hex digits`},
		{"bom", "\xef\xbb\xbf{}", 0, "byte order mark"},
		{"comment", `[1 /* c */]`, 3, "invalid character '/'"},
		{"bad literal", `[tru]`, 4, `in the literal "true"`},
		{"control outside", "\x00", 0, "invalid character byte 0x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := transformAll(t, []byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Transform(%q) error = %v, want a *SyntaxError", tt.in, err)
			}
			if se.Offset != tt.off || !strings.Contains(se.Msg, tt.msg) {
				t.Fatalf("Transform(%q) = offset %d %q, want offset %d containing %q", tt.in, se.Offset, se.Msg, tt.off, tt.msg)
			}
		})
	}
}

func TestTransform_Depth(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	if _, err := Transform(nest(DefaultMaxDepth)); err != nil {
		t.Fatalf("depth %d: %v", DefaultMaxDepth, err)
	}
	_, err := Transform(nest(DefaultMaxDepth + 1))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != DefaultMaxDepth || !strings.Contains(se.Msg, "nesting deeper than 1000") {
		t.Fatalf("depth %d: %v", DefaultMaxDepth+1, err)
	}
	if _, err := TransformWith(nest(3), Options{MaxDepth: 2}); err == nil {
		t.Fatal("MaxDepth 2 accepted depth 3")
	}
	// A million open brackets: refused at the limit, no stack overflow.
	if _, err := Transform(bytes.Repeat([]byte(`{"a":[`), 1_000_000)); err == nil {
		t.Fatal("deep input accepted")
	}
	deep := strings.Repeat(`{"b":1,"a":`, 900) + "0" + strings.Repeat("}", 900)
	got, err := Transform([]byte(deep))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat(`{"a":`, 900) + "0" + strings.Repeat(`,"b":1}`, 900); string(got) != want {
		t.Fatal("deep unsorted objects not sorted at every level")
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestTransformReader_ReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(`{"a":`), errReader{boom})
	_, err := TransformReader(r, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the read error", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n += len(p)
	return 0, errors.New("disk full")
}

func TestTransformStream_FlushesTopLevelArrays(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("[")
	for i := 0; i < 20000; i++ {
		if i > 0 {
			in.WriteString(",")
		}
		in.WriteString(`{"b":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","a":1}`)
	}
	in.WriteString("]")
	want, err := Transform(in.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var chunks [][]byte
	w := writerFunc(func(p []byte) (int, error) {
		chunks = append(chunks, append([]byte(nil), p...))
		return len(p), nil
	})
	if err := TransformStream(w, bytes.NewReader(in.Bytes()), Options{}); err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("wrote %d chunks, want the array streamed in several", len(chunks))
	}
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, want) {
		t.Fatal("streamed output differs from Transform")
	}
	fw := &failWriter{}
	if err := TransformStream(fw, bytes.NewReader(in.Bytes()), Options{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("write error not reported: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestDigest(t *testing.T) {
	if got, want := Digest([]byte("abc")), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("Digest = %s", got)
	}
	a, err := DigestJSON([]byte(`{"b": [1, 2.0], "a": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DigestJSON([]byte(`{"a":"x","b":[1,2]}`))
	if err != nil || a != b {
		t.Fatalf("reordered keys digest differently: %s %s %v", a, b, err)
	}
	if a != Digest([]byte(`{"a":"x","b":[1,2]}`)) {
		t.Fatal("DigestJSON is not the digest of the canonical bytes")
	}
	c, n, err := DigestReader(strings.NewReader(`{"b": [1, 2.0], "a": "x"}`), Options{})
	if err != nil || c != a || n != int64(len(`{"a":"x","b":[1,2]}`)) {
		t.Fatalf("DigestReader = %s %d %v", c, n, err)
	}
	if _, err := DigestJSON([]byte(`{"a":1,"a":1}`)); err == nil {
		t.Fatal("DigestJSON accepted duplicate keys")
	}
	if _, err := ParseDigest(a); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "sha256:", "sha256:" + strings.Repeat("A", 64), "sha512:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("a", 63)} {
		if _, err := ParseDigest(bad); err == nil {
			t.Errorf("ParseDigest(%q) accepted", bad)
		}
	}
}

func TestMarshal(t *testing.T) {
	type inner struct {
		Z string  `json:"z"`
		A float64 `json:"a"`
	}
	v := map[string]any{"html": "<a&b>", "n": inner{Z: "é", A: 1e21}, "list": []int{3, 1}}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"html":"<a&b>","list":[3,1],"n":{"a":1e+21,"z":"é"}}`; string(got) != want {
		t.Fatalf("Marshal = %s, want %s", got, want)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("Marshal of a func succeeded")
	}
}

func TestPosition(t *testing.T) {
	in := []byte("{\n  \"a\": 1,\n  \"a\": 2\n}")
	_, err := Transform(in)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	if line, col := Position(in, se.Offset); line != 3 || col != 3 {
		t.Fatalf("Position = %d:%d, want 3:3", line, col)
	}
}
