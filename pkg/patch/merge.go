package patch

import (
	"bytes"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// MergeLabels name the sides in conflict markers.
type MergeLabels struct {
	Ours, Theirs string
}

// MergeConflict is one region both sides changed differently. Lines are
// 1-based and inclusive in the base (End = Start-1 for an empty range).
type MergeConflict struct {
	BaseStart, BaseEnd int
}

// Merge3 merges ours and theirs, both derived from base, line by line (diff3
// with go-diff's line diffs). Regions changed on one side take that side;
// regions changed identically on both sides are taken once; other regions
// are conflicts, written with markers as `git merge-file` writes them
// ("<<<<<<< ours", "=======", ">>>>>>> theirs"), after moving lines common
// to both sides at the start and end of the region out of it.
func Merge3(base, ours, theirs []byte, labels MergeLabels) ([]byte, []MergeConflict) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	mo, mt := matchLines(b, o), matchLines(b, t)
	var out bytes.Buffer
	var conflicts []MergeConflict
	write := func(ls []string) {
		for _, l := range ls {
			out.WriteString(l)
		}
	}
	i, j, k := 0, 0, 0
	for {
		for i < len(b) && mo[i] == j && mt[i] == k {
			out.WriteString(b[i])
			i, j, k = i+1, j+1, k+1
		}
		if i == len(b) && j == len(o) && k == len(t) {
			break
		}
		// The next base line both sides kept ends the unstable chunk.
		ni, nj, nk := len(b), len(o), len(t)
		for x := i; x < len(b); x++ {
			if mo[x] >= j && mt[x] >= k {
				ni, nj, nk = x, mo[x], mt[x]
				break
			}
		}
		cb, co, ct := b[i:ni], o[j:nj], t[k:nk]
		switch {
		case equalLines(co, cb):
			write(ct)
		case equalLines(ct, cb), equalLines(co, ct):
			write(co)
		default:
			pre := 0
			for pre < len(co) && pre < len(ct) && co[pre] == ct[pre] {
				pre++
			}
			suf := 0
			for suf < len(co)-pre && suf < len(ct)-pre && co[len(co)-1-suf] == ct[len(ct)-1-suf] {
				suf++
			}
			write(co[:pre])
			marker(&out, "<<<<<<<", labels.Ours)
			writeSide(&out, co[pre:len(co)-suf])
			marker(&out, "=======", "")
			writeSide(&out, ct[pre:len(ct)-suf])
			marker(&out, ">>>>>>>", labels.Theirs)
			write(co[len(co)-suf:])
			conflicts = append(conflicts, MergeConflict{BaseStart: i + 1, BaseEnd: ni})
		}
		i, j, k = ni, nj, nk
	}
	return out.Bytes(), conflicts
}

func marker(out *bytes.Buffer, m, label string) {
	out.WriteString(m)
	if label != "" {
		out.WriteString(" " + label)
	}
	out.WriteByte('\n')
}

func writeSide(out *bytes.Buffer, ls []string) {
	for _, l := range ls {
		out.WriteString(l)
	}
	if n := len(ls); n > 0 && !bytes.HasSuffix([]byte(ls[n-1]), []byte("\n")) {
		out.WriteByte('\n')
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// matchLines returns, for each line of a, the index of the line of b it is
// matched with by a line diff, or -1.
func matchLines(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	ids := map[string]rune{}
	enc := func(ls []string) ([]rune, bool) {
		rs := make([]rune, len(ls))
		for i, l := range ls {
			r, ok := ids[l]
			if !ok {
				n := len(ids) + 1
				if n >= 0xD800 {
					n += 0x800 // skip the surrogates: go-diff round-trips runes through strings
				}
				if n > utf8.MaxRune {
					return nil, false
				}
				r = rune(n)
				ids[l] = r
			}
			rs[i] = r
		}
		return rs, true
	}
	ra, ok1 := enc(a)
	rb, ok2 := enc(b)
	if !ok1 || !ok2 {
		return m
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic: never a time-limited, partial diff
	i, j := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for x := 0; x < n; x++ {
				m[i+x] = j + x
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			i += n
		case diffmatchpatch.DiffInsert:
			j += n
		}
	}
	return m
}
