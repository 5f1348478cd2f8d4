package canonical

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/iotest"
	"unicode/utf16"
)

// FuzzTransform checks, for any input Transform accepts: the output is
// canonical (idempotent), encoding/json reads input and output as the same
// value, the output's member names are strictly increasing in UTF-16 order,
// and the streaming forms produce the same bytes or the same error.
func FuzzTransform(f *testing.F) {
	files, _ := filepath.Glob("testdata/rfc8785/input/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"b":1,"a":[1,2.5e10,-0,"x\u0000"],"c":{"\ud83d\ude00":1,"\ufb33":2}}`,
		`[1e21,1e-7,0.000001,123456789012345678901234567890]`,
		`{"a":1,"\u0061":2}`, `"\ud800"`, "\"\xff\"", `[[[[[]]]]]`, `{"":{"":{"":0}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		r, rerr := TransformReader(iotest.OneByteReader(bytes.NewReader(in)), Options{})
		if !sameResult(out, err, r, rerr) {
			t.Fatalf("TransformReader = %q, %v; Transform = %q, %v", r, rerr, out, err)
		}
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T %v, want *SyntaxError", err, err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted input encoding/json calls invalid: %q", in)
		}
		again, err := Transform(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
		a, b := decode(t, in), decode(t, out)
		if !sameValue(a, b) {
			t.Fatalf("value changed: %q -> %q", in, out)
		}
		checkOrder(t, out)
	})
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json: %v on %q", err, b)
	}
	return v
}

func sameValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, err1 := strconv.ParseFloat(string(a), 64)
		y, err2 := strconv.ParseFloat(string(b), 64)
		return err1 == nil && err2 == nil && x == y
	default:
		return a == b
	}
}

// checkOrder walks canonical output with encoding/json's tokenizer and checks
// that every object's names are strictly increasing by UTF-16 code units.
func checkOrder(t *testing.T, out []byte) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	type level struct {
		obj      bool
		wantKey  bool
		last     []uint16
		haveLast bool
	}
	var stack []level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("tokenize %q: %v", out, err)
		}
		if len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].wantKey {
			if s, ok := tok.(string); ok {
				top := &stack[len(stack)-1]
				u := utf16.Encode([]rune(s))
				if top.haveLast && compareUTF16(top.last, u) >= 0 {
					t.Fatalf("names out of order in %q: %q after %q", out, s, string(utf16.Decode(top.last)))
				}
				top.last, top.haveLast, top.wantKey = u, true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{obj: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].wantKey = true
		}
	}
}

func compareUTF16(a, b []uint16) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return cmpInt(int(a[i]), int(b[i]))
		}
	}
	return cmpInt(len(a), len(b))
}

// FuzzAppendNumber checks that every finite double round-trips through its
// canonical text and that Transform reads that text back unchanged.
func FuzzAppendNumber(f *testing.F) {
	for _, bits := range []uint64{0, 1, 0x7fefffffffffffff, 0x444b1ae4d6e2ef50, 0x3eb0c6f7a0b5ed8c, 0xbecbf647612f3696} {
		f.Add(bits)
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return
		}
		s := AppendNumber(nil, x)
		y, err := strconv.ParseFloat(string(s), 64)
		if err != nil || y != x {
			t.Fatalf("%016x: %s reads back as %v (%v)", bits, s, y, err)
		}
		out, err := Transform(s)
		if err != nil || !bytes.Equal(out, s) {
			t.Fatalf("%016x: Transform(%s) = %s, %v", bits, s, out, err)
		}
	})
}
