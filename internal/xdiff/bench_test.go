package xdiff

import (
	"math/rand"
	"os"
	"strings"
	"testing"
)

// benchPairs are the benchmark inputs: a real source file with a few
// edits, a large text of distinct lines with scattered edits, a text of
// few distinct lines (many ambiguous matches, the discard heuristics), and
// two unrelated texts (the cost limit).
func benchPairs(b *testing.B) map[string]pair {
	src, err := os.ReadFile("../../pkg/patch/apply.go")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(7))
	ls := Lines(src)
	edited := append([]string(nil), ls...)
	for i := 0; i < 12; i++ {
		p := r.Intn(len(edited))
		edited[p] = strings.ToUpper(edited[p])
	}
	big := gen(r, 20000, 1<<30)
	rep := gen(r, 5000, 6)
	return map[string]pair{
		"source":    {src, []byte(strings.Join(edited, ""))},
		"distinct":  {big, mutate(r, big, 300, 1<<30)},
		"repeated":  {rep, mutate(r, rep, 300, 6)},
		"unrelated": {gen(r, 3000, 40), gen(r, 3000, 40)},
	}
}

func BenchmarkDiff(b *testing.B) {
	for _, name := range []string{"source", "distinct", "repeated", "unrelated"} {
		p := benchPairs(b)[name]
		la, lb := Lines(p.a), Lines(p.b)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Diff(la, lb)
			}
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	ps := benchPairs(b)
	for _, name := range []string{"source", "distinct", "repeated"} {
		p := ps[name]
		r := rand.New(rand.NewSource(9))
		theirs := mutate(r, p.a, 40, 6)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Merge(p.a, p.b, theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: Zealous})
			}
		})
	}
}
