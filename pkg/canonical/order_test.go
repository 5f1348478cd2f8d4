package canonical

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestTransform_MemberOrderRandom builds objects with random names drawn from
// the ranges where UTF-8 and UTF-16 order differ (and names that need
// escapes), in random order, and checks the output order against a sort by
// UTF-16 code units.
func TestTransform_MemberOrderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(8785, 1))
	pools := [][2]rune{{0x00, 0x7f}, {0x80, 0x7ff}, {0xd700, 0xd7ff}, {0xe000, 0xffff}, {0x10000, 0x10ffff}, {'a', 'c'}}
	randName := func() string {
		var b strings.Builder
		for n := rng.IntN(4); n >= 0; n-- {
			p := pools[rng.IntN(len(pools))]
			b.WriteRune(p[0] + rng.Int32N(p[1]-p[0]+1))
		}
		return b.String()
	}
	for round := 0; round < 500; round++ {
		seen := map[string]bool{}
		var names []string
		for len(names) < 1+rng.IntN(30) {
			n := randName()
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		var in strings.Builder
		in.WriteByte('{')
		for i, n := range names {
			if i > 0 {
				in.WriteByte(',')
			}
			q, _ := json.Marshal(n) // escapes < > & as \u003c etc.: decoded before sorting
			in.Write(q)
			in.WriteString(":0")
		}
		in.WriteByte('}')
		out, err := Transform([]byte(in.String()))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		d := json.NewDecoder(strings.NewReader(string(out)))
		d.Token()
		for d.More() {
			k, _ := d.Token()
			got = append(got, k.(string))
			d.Token()
		}
		want := slices.Clone(names)
		slices.SortFunc(want, func(a, b string) int {
			return compareUTF16(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		if !slices.Equal(got, want) {
			t.Fatalf("order of %q:\n got %q\nwant %q", in.String(), got, want)
		}
	}
}
