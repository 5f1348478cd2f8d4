package xdiff

// Change is one hunk of a diff of a into b: lines a[I1:I1+Chg1] are
// replaced by b[I2:I2+Chg2] (0-based; an insertion has Chg1 == 0).
type Change struct {
	I1, I2     int
	Chg1, Chg2 int
}

// Lines splits data into lines, each with its "\n" (the last may lack it).
func Lines(data []byte) []string {
	n := 0
	for _, c := range data {
		if c == '\n' {
			n++
		}
	}
	out := make([]string, 0, n+1)
	start := 0
	for i, c := range data {
		if c == '\n' {
			out = append(out, string(data[start:i+1]))
			start = i + 1
		}
	}
	if start < len(data) {
		out = append(out, string(data[start:]))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Diff returns the changes that turn a into b, in order: the alignment
// git diff --diff-algorithm=myers --no-indent-heuristic shows (see the
// package doc for the rules that pick it among equally short ones).
func Diff(a, b []string) []Change {
	ca, cb := markChanges(a, b)
	return changes(ca, cb)
}

// markChanges aligns a and b and returns, for each line of either side,
// whether it is changed (deleted from a, inserted into b).
func markChanges(a, b []string) (changedA, changedB []bool) {
	ida, idb, nclass := classify(a, b)
	changedA, changedB = make([]bool, len(a)), make([]bool, len(b))
	align(ida, idb, nclass, changedA, changedB)
	slide(ida, changedA, changedB)
	slide(idb, changedB, changedA)
	return changedA, changedB
}

// classify numbers the distinct lines of a and b: equal lines get equal
// ids, so the rest of the work compares ints.
func classify(a, b []string) (ida, idb []int32, n int) {
	ids := make(map[string]int32, len(a)+len(b))
	number := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ida = number(a)
	idb = number(b)
	return ida, idb, len(ids)
}

// changes reads the hunks off the change marks: each maximal stretch where
// either side has changed lines, between lines that match.
func changes(ca, cb []bool) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if (i < len(ca) && ca[i]) || (j < len(cb) && cb[j]) {
			c := Change{I1: i, I2: j}
			for i < len(ca) && ca[i] {
				i++
			}
			for j < len(cb) && cb[j] {
				j++
			}
			c.Chg1, c.Chg2 = i-c.I1, j-c.I2
			out = append(out, c)
			continue
		}
		i, j = i+1, j+1
	}
	return out
}
