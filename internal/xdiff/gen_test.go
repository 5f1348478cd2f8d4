package xdiff

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
)

// Generators of the differential tests' inputs. The hard cases for
// agreeing with git are the ambiguous ones: texts of few distinct lines
// (many equally short alignments, the set-aside rules for frequent
// lines), code-like texts where blank lines and braces sit among lines
// that have no match, and texts large enough for the cost bounds.

// gen makes a text of n lines drawn from an alphabet of k distinct lines.
func gen(r *rand.Rand, n, k int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "l%d\n", r.Intn(k))
	}
	return b.Bytes()
}

// codeLine draws a line of a code-like text: a fresh line (no match
// anywhere, most likely), a very common one, or one of k medium ones.
func codeLine(r *rand.Rand, k int) string {
	switch x := r.Intn(20); {
	case x < 6:
		return fmt.Sprintf("u%d\n", r.Int63())
	case x < 10:
		return "}\n"
	case x < 13:
		return "\n"
	case x < 14:
		return "\treturn nil\n"
	case x < 15:
		return "}\r\n"
	default:
		return fmt.Sprintf("\tm%d()\n", r.Intn(k))
	}
}

// genCode makes a code-like text of n lines.
func genCode(r *rand.Rand, n, k int) []byte {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(codeLine(r, k))
	}
	return []byte(b.String())
}

// mutate edits a text: lines deleted, inserted, replaced, blocks copied.
// New lines come from gen's alphabet of k lines, or with code set from
// codeLine (then inserted runs can be long: past the scan window of the
// set-aside rule).
func mutate(r *rand.Rand, data []byte, edits, k int) []byte {
	return mutateWith(r, data, edits, k, false)
}

func mutateWith(r *rand.Rand, data []byte, edits, k int, code bool) []byte {
	line := func() string {
		if code {
			return codeLine(r, k)
		}
		return fmt.Sprintf("l%d\n", r.Intn(k))
	}
	ls := Lines(data)
	for e := 0; e < edits; e++ {
		pos := 0
		if len(ls) > 0 {
			pos = r.Intn(len(ls) + 1)
		}
		kinds := 4
		if code {
			kinds = 5
		}
		switch r.Intn(kinds) {
		case 0: // delete a run
			n := min(1+r.Intn(4), len(ls)-pos)
			if n > 0 {
				ls = append(ls[:pos], ls[pos+n:]...)
			}
		case 1: // insert a run
			var ins []string
			n := r.Intn(4)
			if code && r.Intn(8) == 0 {
				n = 80 + r.Intn(160)
			}
			for i := n; i >= 0; i-- {
				ins = append(ins, line())
			}
			ls = append(ls[:pos], append(ins, ls[pos:]...)...)
		case 2: // replace a line
			if pos < len(ls) {
				if code {
					ls[pos] = line()
				} else {
					ls[pos] = fmt.Sprintf("n%d\n", r.Intn(k))
				}
			}
		case 3: // copy a block elsewhere
			if len(ls) > 4 {
				s := r.Intn(len(ls) - 3)
				blk := append([]string(nil), ls[s:s+3]...)
				ls = append(ls[:pos], append(blk, ls[pos:]...)...)
			}
		case 4: // replace a run by fresh lines
			n := min(1+r.Intn(6), len(ls)-pos)
			for i := 0; i < n; i++ {
				ls[pos+i] = line()
			}
		}
	}
	out := []byte(strings.Join(ls, ""))
	if len(out) > 0 && r.Intn(8) == 0 {
		out = out[:len(out)-1] // no newline at the end
	}
	return out
}

// cases are the pairs of the differential tests: small ones with many
// repeated lines, and large ones where the search hits git's cost bounds.
func cases(seed int64) []pair {
	r := rand.New(rand.NewSource(seed))
	var out []pair
	for i := 0; i < 150; i++ {
		k := 2 + r.Intn(8)
		a := gen(r, r.Intn(40), k)
		out = append(out, pair{a, mutate(r, a, 1+r.Intn(6), k)})
	}
	for i := 0; i < 6; i++ {
		k := 20 + r.Intn(200)
		a := gen(r, 2000+r.Intn(2000), k)
		out = append(out, pair{a, mutate(r, a, 200+r.Intn(600), k)})
	}
	// unrelated large texts: the cost bound decides
	out = append(out, pair{gen(r, 3000, 40), gen(r, 3000, 40)})
	// distinct lines in shuffled blocks longer than a long run; past 65536
	// diagonals the cost bound rises above 256 and the long-run rule
	// decides
	for _, n := range []int{4000, 4000, 36000} {
		a := gen(r, n, 1<<30)
		ls := Lines(a)
		var blocks [][]string
		for len(ls) > 0 {
			n := min(22+r.Intn(30), len(ls))
			blocks = append(blocks, ls[:n])
			ls = ls[n:]
		}
		r.Shuffle(len(blocks)/2, func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		var b []byte
		for _, blk := range blocks {
			b = append(b, strings.Join(blk, "")...)
		}
		out = append(out, pair{a, mutate(r, b, 50, 1<<30)})
	}
	// one long common diagonal with, every few dozen lines, a line
	// replaced by a copy of a far one: an edit cost past 512 inside one
	// box, long runs between the edits
	a := gen(r, 36000, 1<<30)
	ls := Lines(a)
	b := append([]string(nil), ls...)
	for i := 10; i < len(b); i += 25 + r.Intn(30) {
		b[i] = ls[r.Intn(len(ls))]
	}
	out = append(out, pair{a, []byte(strings.Join(b, ""))})
	return out
}

// moreCases are further pairs, many small and medium ones: sizes around
// the steps of the frequent-line bound (it doubles at 4, 16, 64, 256 and
// 1024 lines), alphabets that make lines just frequent or just not,
// code-like texts, and texts with long runs of fresh lines among braces.
func moreCases(seed int64, n int) []pair {
	r := rand.New(rand.NewSource(seed))
	sizes := []int{1, 2, 3, 4, 5, 14, 15, 16, 17, 18, 62, 63, 64, 65, 66, 254, 255, 256, 257, 258, 1023, 1024, 1025}
	var out []pair
	for i := 0; i < n; i++ {
		size := sizes[r.Intn(len(sizes))]
		switch r.Intn(4) {
		case 0: // few distinct lines, the counts near the bound
			k := max(1, size/(1+r.Intn(roughSqrt(size)+1)))
			a := gen(r, size, k)
			out = append(out, pair{a, mutate(r, a, 1+r.Intn(size/8+3), k)})
		case 1: // code-like
			k := 1 + r.Intn(30)
			a := genCode(r, size, k)
			out = append(out, pair{a, mutateWith(r, a, 1+r.Intn(size/8+3), k, true)})
		case 2: // code-like on one side, few distinct lines on the other
			k := 2 + r.Intn(6)
			a := genCode(r, size, k)
			b := mutateWith(r, a, 1+r.Intn(size/4+3), k, false)
			out = append(out, pair{b, a})
		default: // a text edited twice, swapped at random
			k := 3 + r.Intn(40)
			a := genCode(r, size, k)
			b := mutateWith(r, mutateWith(r, a, 1+r.Intn(size/10+2), k, true), 1+r.Intn(4), k, false)
			if r.Intn(2) == 0 {
				a, b = b, a
			}
			out = append(out, pair{a, b})
		}
	}
	return out
}

// shuffled makes a text of n distinct lines and a copy cut into blocks of
// lo..hi lines, a share of which (in 1/8ths) are shuffled, then edited a
// little: past the cost bound, where the long-run rule and the furthest
// frontier point decide, with runs of matches near the rule's length.
func shuffled(r *rand.Rand, n, lo, hi, share8, edits int) pair {
	a := gen(r, n, 1<<30)
	ls := Lines(a)
	var blocks [][]string
	for len(ls) > 0 {
		k := min(lo+r.Intn(hi-lo+1), len(ls))
		blocks = append(blocks, ls[:k])
		ls = ls[k:]
	}
	for i := range blocks {
		if r.Intn(8) < share8 {
			j := r.Intn(len(blocks))
			blocks[i], blocks[j] = blocks[j], blocks[i]
		}
	}
	var b []byte
	for _, blk := range blocks {
		b = append(b, strings.Join(blk, "")...)
	}
	return pair{a, mutate(r, b, edits, 1<<30)}
}

// heuristicCases are texts for the cost bounds: shuffled blocks around the
// long-run length, and sizes at a step of the cost bound (the rough
// square root of the number of lines searched plus three: 256 for 65,532
// lines, 512 for 65,533).
func heuristicCases(seed int64) []pair {
	r := rand.New(rand.NewSource(seed))
	var out []pair
	// the long-run rule applies past 256 steps, and under 65,533 searched
	// lines the cost bound (256) stops the search first: so sizes past it,
	// with blocks about as long as a long run
	for i := 0; i < 6; i++ {
		lo := 17 + r.Intn(5)
		out = append(out, shuffled(r, 33000+r.Intn(4000), lo, lo+r.Intn(4), 1+r.Intn(8), r.Intn(20)))
	}
	for size := 19; size <= 22; size++ {
		out = append(out, shuffled(r, 34000, size, size, 2, 0), shuffled(r, 34000, size, size, 8, 5))
	}
	for i := 0; i < 6; i++ {
		lo := 17 + r.Intn(5)
		out = append(out, shuffled(r, 2000+r.Intn(4000), lo, lo+r.Intn(4), 1+r.Intn(8), r.Intn(20)))
	}
	// one long common diagonal broken every period lines (give or take
	// jitter) by a copy of a far line, replacing or inserted: runs of
	// matches just under, at and over the long-run length all the way,
	// and now and then a copy of a far run about as long, off the
	// diagonal, where the rules may cut
	for p := 19; p <= 24; p++ {
		for _, insert := range []bool{false, true} {
			n, period := 36000, p
			if p == 24 {
				// past 262,141 searched lines the cost bound is 1024: the
				// halves after a rule's cut search long enough for the
				// rules to apply again
				n, period = 140000, 21
			}
			a := gen(r, n, 1<<30)
			ls := Lines(a)
			var b []string
			for i := 0; i < len(ls); {
				step := period
				if period == 23 {
					step = 19 + r.Intn(5)
				}
				b = append(b, ls[i:min(i+step, len(ls))]...)
				i += step
				if !insert {
					i++
				}
				b = append(b, ls[r.Intn(len(ls))])
				if r.Intn(12) == 0 { // a decoy: a copy of a far run
					k := r.Intn(len(ls) - 30)
					b = append(b, ls[k:k+period-2+r.Intn(5)]...)
				}
			}
			out = append(out, pair{a, []byte(strings.Join(b, ""))})
		}
	}
	// all lines distinct and present on both sides, none at the ends in
	// common: every line is searched
	for _, dup := range []bool{false, true} {
		for {
			p := shuffled(r, 32766, 20, 40, 3, 0)
			if dup {
				ls := Lines(p.b)
				p.b = append(p.b, ls[r.Intn(len(ls))]...)
			}
			la, lb := Lines(p.a), Lines(p.b)
			if la[0] != lb[0] && la[len(la)-1] != lb[len(lb)-1] {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
