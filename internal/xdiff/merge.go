package xdiff

import "strings"

// Level is how hard Merge works to avoid or narrow conflicts.
type Level int

const (
	// Minimal: every region both sides change is a conflict.
	Minimal Level = iota
	// Eager: a region both sides change to the same lines is not a
	// conflict.
	Eager
	// Zealous: conflicts are narrowed to the lines that differ and joined
	// when fewer than four lines apart (git apply --3way).
	Zealous
	// ZealousAlnum: Zealous, and conflicts are also joined across lines
	// holding no letter or digit (git merge-file).
	ZealousAlnum
)

// MergeOptions labels the conflict markers and sets the level.
type MergeOptions struct {
	Ours, Theirs string // after "<<<<<<< " and ">>>>>>> " ("" for none)
	Level        Level
	MarkerSize   int // 0: 7
}

// Conflict is a conflicting region of the result, with the base lines it
// replaces (0-based, BaseEnd exclusive) as far as they are known: a
// conflict narrowed at the Zealous levels keeps the base range of the
// changes it came from.
type Conflict struct {
	BaseStart, BaseEnd int
}

// outcome is what the result holds for a region.
type outcome uint8

const (
	fromOurs   outcome = iota // ours changed it alone, or both alike
	fromTheirs                // theirs changed it alone
	conflicted
)

// region is a stretch of the base that one or both sides changed, with the
// stretches of ours and theirs that stand for it ([from, to) each).
type region struct {
	what    outcome
	base0   int // the base lines of the changes the region came from
	base1   int
	ours0   int
	ours1   int
	theirs0 int
	theirs1 int
}

// Merge merges ours and theirs, both changed from base, and returns the
// result with conflict markers in it and the conflicts; none means a clean
// merge. See the package doc for the rules.
func Merge(base, ours, theirs []byte, opts MergeOptions) ([]byte, []Conflict) {
	b, o, t := Lines(base), Lines(ours), Lines(theirs)
	d1, d2 := Diff(b, o), Diff(b, t)
	if len(d1) == 0 {
		return append([]byte(nil), theirs...), nil
	}
	if len(d2) == 0 {
		return append([]byte(nil), ours...), nil
	}
	m := &merger{base: b, ours: o, theirs: t, opts: opts}
	m.regions = combine(d1, d2)
	if opts.Level >= Eager {
		m.settleIdentical()
	}
	if opts.Level >= Zealous {
		m.narrow()
		m.join(opts.Level >= ZealousAlnum)
	}
	out, conflicts := m.write()
	return out, conflicts
}

type merger struct {
	base, ours, theirs []string
	opts               MergeOptions
	regions            []region
}

// combine lays the two change lists over the base: a change that neither
// overlaps nor touches a change of the other side is taken from its side;
// changes that do (directly or through others) make one conflicting region.
func combine(d1, d2 []Change) []region {
	var out []region
	end := func(c Change) int { return c.I1 + c.Chg1 }
	// a side's lines for base lines [from, to), given its first and last
	// changes inside that range
	span := func(first, last Change, from, to int) (int, int) {
		return first.I2 - (first.I1 - from), last.I2 + last.Chg2 + (to - end(last))
	}
	i, j := 0, 0
	for i < len(d1) || j < len(d2) {
		switch {
		case j == len(d2) || i < len(d1) && end(d1[i]) < d2[j].I1:
			c := d1[i]
			// theirs has no change here: its lines are the base's, shifted
			shift := shiftBefore(d2, j)
			out = append(out, region{what: fromOurs, base0: c.I1, base1: end(c), ours0: c.I2, ours1: c.I2 + c.Chg2,
				theirs0: c.I1 + shift, theirs1: end(c) + shift})
			i++
		case i == len(d1) || end(d2[j]) < d1[i].I1:
			c := d2[j]
			shift := shiftBefore(d1, i)
			out = append(out, region{what: fromTheirs, base0: c.I1, base1: end(c), ours0: c.I1 + shift, ours1: end(c) + shift,
				theirs0: c.I2, theirs1: c.I2 + c.Chg2})
			j++
		default:
			from, to := min(d1[i].I1, d2[j].I1), max(end(d1[i]), end(d2[j]))
			fi, fj := i, j
			i, j = i+1, j+1
			for {
				if i < len(d1) && d1[i].I1 <= to {
					to = max(to, end(d1[i]))
					i++
				} else if j < len(d2) && d2[j].I1 <= to {
					to = max(to, end(d2[j]))
					j++
				} else {
					break
				}
			}
			r := region{what: conflicted, base0: from, base1: to}
			r.ours0, r.ours1 = span(d1[fi], d1[i-1], from, to)
			r.theirs0, r.theirs1 = span(d2[fj], d2[j-1], from, to)
			out = append(out, r)
		}
	}
	return out
}

// shiftBefore is how far the changes d[:k] moved the lines after them.
func shiftBefore(d []Change, k int) int {
	if k == 0 {
		return 0
	}
	c := d[k-1]
	return (c.I2 + c.Chg2) - (c.I1 + c.Chg1)
}

// settleIdentical takes the regions both sides changed alike.
func (m *merger) settleIdentical() {
	for k := range m.regions {
		r := &m.regions[k]
		if r.what == conflicted && equalLines(m.ours[r.ours0:r.ours1], m.theirs[r.theirs0:r.theirs1]) {
			r.what = fromOurs
		}
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

// narrow splits each conflict into the hunks of a diff of its two sides:
// lines the sides share at the ends or in between leave the conflict.
func (m *merger) narrow() {
	var out []region
	for _, r := range m.regions {
		if r.what != conflicted || r.ours0 == r.ours1 || r.theirs0 == r.theirs1 {
			out = append(out, r)
			continue
		}
		for _, h := range Diff(m.ours[r.ours0:r.ours1], m.theirs[r.theirs0:r.theirs1]) {
			n := r
			n.ours0, n.ours1 = r.ours0+h.I1, r.ours0+h.I1+h.Chg1
			n.theirs0, n.theirs1 = r.theirs0+h.I2, r.theirs0+h.I2+h.Chg2
			out = append(out, n)
		}
	}
	m.regions = out
}

// join merges neighbouring conflicts with at most three lines between them
// (or, with alnum, any number of lines none of which holds a letter or a
// digit) into one conflict; both sides then repeat the lines between.
func (m *merger) join(alnum bool) {
	var out []region
	for _, r := range m.regions {
		if n := len(out); n > 0 && r.what == conflicted && out[n-1].what == conflicted {
			prev := &out[n-1]
			gap := m.ours[prev.ours1:r.ours0]
			if len(gap) <= 3 || alnum && !hasAlnum(gap) {
				prev.base1 = max(prev.base1, r.base1)
				prev.ours1, prev.theirs1 = r.ours1, r.theirs1
				continue
			}
		}
		out = append(out, r)
	}
	m.regions = out
}

func hasAlnum(lines []string) bool {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if c := l[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				return true
			}
		}
	}
	return false
}

// write lays out the result: ours between the regions, each region's
// chosen lines, conflicts between markers.
func (m *merger) write() ([]byte, []Conflict) {
	var sb strings.Builder
	var conflicts []Conflict
	size := m.opts.MarkerSize
	if size <= 0 {
		size = 7
	}
	var eol string
	marker := func(c byte, label string) {
		sb.WriteString(strings.Repeat(string(c), size))
		if label != "" {
			sb.WriteByte(' ')
			sb.WriteString(label)
		}
		sb.WriteString(eol)
	}
	chunk := func(ls []string, terminate bool) {
		for _, l := range ls {
			sb.WriteString(l)
		}
		if terminate && len(ls) > 0 && !strings.HasSuffix(ls[len(ls)-1], "\n") {
			sb.WriteString(eol)
		}
	}
	at := 0
	for _, r := range m.regions {
		chunk(m.ours[at:r.ours0], false)
		switch r.what {
		case fromOurs:
			chunk(m.ours[r.ours0:r.ours1], false)
		case fromTheirs:
			chunk(m.theirs[r.theirs0:r.theirs1], false)
		default:
			eol = "\n"
			if m.crlf(r) {
				eol = "\r\n"
			}
			marker('<', m.opts.Ours)
			chunk(m.ours[r.ours0:r.ours1], true)
			marker('=', "")
			chunk(m.theirs[r.theirs0:r.theirs1], true)
			marker('>', m.opts.Theirs)
			conflicts = append(conflicts, Conflict{BaseStart: r.base0, BaseEnd: r.base1})
		}
		at = r.ours1
	}
	chunk(m.ours[at:], false)
	return []byte(sb.String()), conflicts
}

// crlf reports whether the markers of conflict r end in "\r\n". Each side
// has a say through the line just before the conflict (its first line when
// the conflict is at the top), and base through its first line: the
// markers take "\r\n" when base's says so and neither side's line ends in
// a bare "\n" (a side without such a line, or whose line is unterminated,
// says nothing).
func (m *merger) crlf(r region) bool {
	before := func(ls []string, at int) eolKind {
		return eolOf(ls, max(at-1, 0))
	}
	return before(m.ours, r.ours0) != lfEOL && before(m.theirs, r.theirs0) != lfEOL && eolOf(m.base, 0) == crlfEOL
}

type eolKind uint8

const (
	noEOL eolKind = iota
	lfEOL
	crlfEOL
)

// eolOf is how line i of ls ends.
func eolOf(ls []string, i int) eolKind {
	switch {
	case i >= len(ls) || !strings.HasSuffix(ls[i], "\n"):
		return noEOL
	case strings.HasSuffix(ls[i], "\r\n"):
		return crlfEOL
	}
	return lfEOL
}
