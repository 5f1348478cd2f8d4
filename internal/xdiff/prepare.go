package xdiff

// Before the search, lines that cannot or should not take part are set
// aside and marked changed outright: the equal lines at both ends are
// matched first, a line that never occurs on the other side can only be
// changed, and a line that occurs very often on the other side is set
// aside when it sits among lines that have no match (there it would only
// make the search align stray blank lines or braces across changed
// blocks). The search then runs on what is left.

const (
	// frequentCap caps the occurrence count above which a line is
	// "frequent" (the bound is otherwise about the square root of the
	// file's length).
	frequentCap = 1024
	// scanWindow is how far from a frequent line the neighbourhood that
	// decides its fate extends, each way.
	scanWindow = 100
	// frequentShare: a frequent line is set aside when the lines without
	// a match in its neighbourhood outnumber three times the frequent ones
	// there (F*frequentShare < F+unmatched, F counting the line itself
	// twice).
	frequentShare = 4
)

// lineKind is what the preparation decided about a line.
type lineKind uint8

const (
	unmatched lineKind = iota // no equal line on the other side
	matchable                 // takes part in the search
	frequent                  // too many equal lines on the other side
)

// roughSqrt is the size bound derived from n lines: the power of two with
// as many binary digits as n has base-4 digits, a cheap stand-in for a
// square root rounded up.
func roughSqrt(n int) int {
	r := 1
	for ; n > 0; n >>= 2 {
		r <<= 1
	}
	return r
}

// align marks the changed lines of a and b (given as class ids; nclass
// classes in all): the common ends are matched, some lines set aside, and
// the rest aligned by the Myers search.
func align(a, b []int32, nclass int, changedA, changedB []bool) {
	// occurrences of each class in each whole file
	countA, countB := make([]int32, nclass), make([]int32, nclass)
	for _, id := range a {
		countA[id]++
	}
	for _, id := range b {
		countB[id]++
	}
	// the common ends
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA--
		hiB--
	}
	keptA, posA := sift(a[lo:hiA], lo, countB, roughSqrt(len(a)), changedA)
	keptB, posB := sift(b[lo:hiB], lo, countA, roughSqrt(len(b)), changedB)
	s := &search{a: keptA, b: keptB, posA: posA, posB: posB, changedA: changedA, changedB: changedB}
	s.run()
}

// sift decides which lines of the middle part of one file (lines, the
// first at index base of the file) take part in the search, given how
// often each class occurs in the other file and the bound above which a
// line counts as frequent. Lines set aside are marked changed; the kept
// lines are returned with their indexes in the file.
func sift(lines []int32, base int, other []int32, bound int, changed []bool) (kept []int32, pos []int) {
	bound = min(bound, frequentCap)
	kinds := make([]lineKind, len(lines))
	for i, id := range lines {
		switch n := int(other[id]); {
		case n == 0:
			kinds[i] = unmatched
		case n >= bound:
			kinds[i] = frequent
		default:
			kinds[i] = matchable
		}
	}
	kept = make([]int32, 0, len(lines))
	pos = make([]int, 0, len(lines))
	for i, id := range lines {
		keep := kinds[i] == matchable || kinds[i] == frequent && !amongUnmatched(kinds, i)
		if keep {
			kept = append(kept, id)
			pos = append(pos, base+i)
		} else {
			changed[base+i] = true
		}
	}
	return kept, pos
}

// amongUnmatched reports whether the frequent line at i is surrounded by
// lines that will be changed anyway: the runs of not-matchable lines just
// before and just after it (each looked at over at most scanWindow lines)
// both hold an unmatched line, and the unmatched lines in them outnumber
// three times the frequent ones, the line itself counting as two (git's
// weighting, measured: a lone frequent line goes among 7 unmatched
// neighbours, two adjacent ones among 10, three among 13).
func amongUnmatched(kinds []lineKind, i int) bool {
	run := func(step int) (unm, freq int) {
		for j, r := i+step, 1; j >= 0 && j < len(kinds) && r <= scanWindow; j, r = j+step, r+1 {
			switch kinds[j] {
			case matchable:
				return unm, freq
			case frequent:
				freq++
			default:
				unm++
			}
		}
		return unm, freq
	}
	unmBefore, freqBefore := run(-1)
	if unmBefore == 0 {
		return false
	}
	unmAfter, freqAfter := run(1)
	if unmAfter == 0 {
		return false
	}
	freq := 2 + freqBefore + freqAfter
	return freq*frequentShare < freq+unmBefore+unmAfter
}
