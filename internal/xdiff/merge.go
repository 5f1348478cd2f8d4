package xdiff

import "strings"

// Level is how hard Merge works to avoid or narrow conflicts (git's
// XDL_MERGE_* levels).
type Level int

const (
	// Minimal: every region both sides change is a conflict.
	Minimal Level = iota
	// Eager: identical changes on both sides are not a conflict.
	Eager
	// Zealous: conflicts are narrowed to the lines that differ and joined
	// when fewer than four lines apart (git apply --3way, git merge).
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
// replaces (0-based, BaseEnd exclusive) as far as they are known.
type Conflict struct {
	BaseStart, BaseEnd int
}

// merge is one region of the result (xdmerge_t): mode 0 a conflict, 1 take
// ours, 2 take theirs, 4 identical after narrowing.
type merge struct {
	mode       int
	i0, chg0   int // base
	i1, chg1   int // ours
	i2, chg2   int // theirs
	next       *merge
	conflictOf *merge // a conflict narrowed or split from this one keeps its base range
}

// Merge merges ours and theirs, both changed from base, as git's xdl_merge
// does (normal conflict style), and returns the result with the conflicts
// in it; no conflicts means a clean merge.
func Merge(base, ours, theirs []byte, opts MergeOptions) ([]byte, []Conflict) {
	b, o, t := Lines(base), Lines(ours), Lines(theirs)
	xb1, xo := diff(b, o)
	xb2, xt := diff(b, t)
	s1, s2 := script(xb1, xo), script(xb2, xt)
	if len(s1) == 0 {
		return append([]byte(nil), theirs...), nil
	}
	if len(s2) == 0 {
		return append([]byte(nil), ours...), nil
	}
	m := &merger{b: b, o: o, t: t, opts: opts}
	changes := m.doMerge(s1, s2)
	var out strings.Builder
	var conflicts []Conflict
	m.fill(&out, changes)
	for c := changes; c != nil; c = c.next {
		if c.mode == 0 {
			conflicts = append(conflicts, Conflict{BaseStart: c.i0, BaseEnd: c.i0 + c.chg0})
		}
	}
	return []byte(out.String()), conflicts
}

type merger struct {
	b, o, t []string
	opts    MergeOptions
}

// appendMerge adds a region after last, or extends last when the new one
// touches or overlaps it (then a different mode makes it a conflict).
func appendMerge(head, last **merge, mode, i0, chg0, i1, chg1, i2, chg2 int) {
	if m := *last; m != nil && (i1 <= m.i1+m.chg1 || i2 <= m.i2+m.chg2) {
		if mode != m.mode {
			m.mode = 0
		}
		m.chg0 = i0 + chg0 - m.i0
		m.chg1 = i1 + chg1 - m.i1
		m.chg2 = i2 + chg2 - m.i2
		return
	}
	m := &merge{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2}
	if *last != nil {
		(*last).next = m
	} else {
		*head = m
	}
	*last = m
}

// doMerge walks both change lists in base order (xdl_do_merge).
func (m *merger) doMerge(s1, s2 []Change) *merge {
	var head, last *merge
	level := m.opts.Level
	for len(s1) > 0 && len(s2) > 0 {
		x1, x2 := s1[0], s2[0]
		if x1.I1+x1.Chg1 < x2.I1 {
			appendMerge(&head, &last, 1, x1.I1, x1.Chg1, x1.I2, x1.Chg2, x2.I2-x2.I1+x1.I1, x1.Chg1)
			s1 = s1[1:]
			continue
		}
		if x2.I1+x2.Chg1 < x1.I1 {
			appendMerge(&head, &last, 2, x2.I1, x2.Chg1, x1.I2-x1.I1+x2.I1, x2.Chg1, x2.I2, x2.Chg2)
			s2 = s2[1:]
			continue
		}
		if level == Minimal || x1.I1 != x2.I1 || x1.Chg1 != x2.Chg1 || x1.Chg2 != x2.Chg2 ||
			!equal(m.o[x1.I2:x1.I2+x1.Chg2], m.t[x2.I2:x2.I2+x2.Chg2]) {
			off := x1.I1 - x2.I1
			ffo := off + x1.Chg1 - x2.Chg1
			i0, i1, i2 := x1.I1, x1.I2, x2.I2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x1.I1 + x1.Chg1 - i0
			chg1 := x1.I2 + x1.Chg2 - i1
			chg2 := x2.I2 + x2.Chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			appendMerge(&head, &last, 0, i0, chg0, i1, chg1, i2, chg2)
		}
		e1, e2 := x1.I1+x1.Chg1, x2.I1+x2.Chg1
		if e1 >= e2 {
			s2 = s2[1:]
		}
		if e2 >= e1 {
			s1 = s1[1:]
		}
	}
	for _, x1 := range s1 {
		appendMerge(&head, &last, 1, x1.I1, x1.Chg1, x1.I2, x1.Chg2, x1.I1+len(m.t)-len(m.b), x1.Chg1)
	}
	for _, x2 := range s2 {
		appendMerge(&head, &last, 2, x2.I1, x2.Chg1, x2.I1+len(m.o)-len(m.b), x2.Chg1, x2.I2, x2.Chg2)
	}
	if level >= Zealous {
		m.refineConflicts(head)
		m.simplifyNonConflicts(head, level > Zealous)
	}
	return head
}

func equal(a, b []string) bool {
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

// refineConflicts diffs the two sides of each conflict and keeps only the
// differing parts as conflicts (xdl_refine_conflicts).
func (m *merger) refineConflicts(c *merge) {
	for ; c != nil; c = c.next {
		if c.mode != 0 || c.chg1 == 0 || c.chg2 == 0 {
			continue
		}
		i1, i2 := c.i1, c.i2
		xs := Diff(m.o[c.i1:c.i1+c.chg1], m.t[c.i2:c.i2+c.chg2])
		if len(xs) == 0 {
			c.mode = 4 // the changes are identical
			continue
		}
		orig := *c
		c.i1, c.chg1 = xs[0].I1+i1, xs[0].Chg1
		c.i2, c.chg2 = xs[0].I2+i2, xs[0].Chg2
		for _, x := range xs[1:] {
			n := &merge{mode: 0, i0: orig.i0, chg0: orig.chg0, i1: x.I1 + i1, chg1: x.Chg1, i2: x.I2 + i2, chg2: x.Chg2, next: c.next}
			c.next = n
			c = n
		}
	}
}

// simplifyNonConflicts joins two conflicts with fewer than four lines
// between them (or, with alnum, only lines without letters or digits).
func (m *merger) simplifyNonConflicts(c *merge, alnum bool) {
	if c == nil {
		return
	}
	for c.next != nil {
		n := c.next
		begin, end := c.i1+c.chg1, n.i1
		if c.mode != 0 || n.mode != 0 || end-begin > 3 && (!alnum || containsAlnum(m.o[begin:end])) {
			c = n
			continue
		}
		c.chg1 = n.i1 + n.chg1 - c.i1
		c.chg2 = n.i2 + n.chg2 - c.i2
		if e := n.i0 + n.chg0; e > c.i0+c.chg0 {
			c.chg0 = e - c.i0 // (for reporting only: git leaves the base range alone)
		}
		c.next = n.next
	}
}

func containsAlnum(lines []string) bool {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if c := l[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// fill writes the result (xdl_fill_merge_buffer, normal style, no favor).
func (m *merger) fill(out *strings.Builder, c *merge) {
	i := 0
	for ; c != nil; c = c.next {
		switch {
		case c.mode == 0:
			m.conflictHunk(out, i, c)
		case c.mode&3 != 0:
			writeLines(out, m.o[i:c.i1], false, false)
			if c.mode&1 != 0 {
				writeLines(out, m.o[c.i1:c.i1+c.chg1], m.crNeeded(c), c.mode&2 != 0)
			}
			if c.mode&2 != 0 {
				writeLines(out, m.t[c.i2:c.i2+c.chg2], false, false)
			}
		default:
			continue
		}
		i = c.i1 + c.chg1
	}
	writeLines(out, m.o[i:], false, false)
}

func (m *merger) conflictHunk(out *strings.Builder, i int, c *merge) {
	size := m.opts.MarkerSize
	if size <= 0 {
		size = 7
	}
	cr := m.crNeeded(c)
	eol := "\n"
	if cr {
		eol = "\r\n"
	}
	marker := func(ch byte, label string) {
		out.WriteString(strings.Repeat(string(ch), size))
		if label != "" {
			out.WriteString(" " + label)
		}
		out.WriteString(eol)
	}
	writeLines(out, m.o[i:c.i1], false, false)
	marker('<', m.opts.Ours)
	writeLines(out, m.o[c.i1:c.i1+c.chg1], cr, true)
	marker('=', "")
	writeLines(out, m.t[c.i2:c.i2+c.chg2], cr, true)
	marker('>', m.opts.Theirs)
}

// writeLines copies lines; with addNL a last line without "\n" gets one
// ("\r\n" with cr).
func writeLines(out *strings.Builder, lines []string, cr, addNL bool) {
	for _, l := range lines {
		out.WriteString(l)
	}
	if n := len(lines); addNL && n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		if cr {
			out.WriteByte('\r')
		}
		out.WriteByte('\n')
	}
}

// crNeeded: conflict markers and added line ends take "\r\n" when the
// lines before the region on both sides, and the base's first line, end
// in "\r\n" (is_cr_needed).
func (m *merger) crNeeded(c *merge) bool {
	at := func(i int) int {
		if i > 0 {
			return i - 1
		}
		return 0
	}
	v := eolCRLF(m.o, at(c.i1))
	if v == 1 {
		v = eolCRLF(m.t, at(c.i2))
	}
	if v == 1 {
		v = eolCRLF(m.b, 0)
	}
	return v == 1
}

// eolCRLF: 1 when line i ends in "\r\n", 0 in "\n" alone, -1 unknown (an
// empty file, or a lone last line without a line end).
func eolCRLF(lines []string, i int) int {
	b := func(ok bool) int {
		if ok {
			return 1
		}
		return 0
	}
	n := len(lines)
	if i < n-1 {
		return b(strings.HasSuffix(lines[i], "\r\n"))
	}
	if n == 0 {
		return -1
	}
	if strings.HasSuffix(lines[i], "\n") {
		return b(strings.HasSuffix(lines[i], "\r\n"))
	}
	if i == 0 {
		return -1
	}
	return b(strings.HasSuffix(lines[i-1], "\r\n"))
}
