package xdiff

// After the search, a block of changed lines can often move: if the line
// just above the block equals the block's last line, the block may start
// one line earlier (and end one earlier) and describe the same edit. Among
// the places a block can take, git shows the lowest one, unless one of the
// places lines the block up with changed lines on the other side (a
// replacement rather than a bare insertion or deletion): then the lowest
// such place. Blocks that meet while moving merge into one.
//
// The unchanged lines of the two sides match one to one and in order, so
// the gaps between them match too: the block in gap g of one side faces the
// (maybe empty) block in gap g of the other. Moving a block by one line
// moves it to the neighbouring gap.

// block is a run of changed lines [start, end) of one side, maybe empty.
type block struct{ start, end int }

// sides is one side's lines and marks with the other side's marks.
type sides struct {
	ids     []int32
	changed []bool
	other   []bool
}

func (s *sides) isChanged(i int) bool { return i >= 0 && i < len(s.changed) && s.changed[i] }

// firstBlock is the block before the first unchanged line of a side.
func firstBlock(changed []bool) block {
	e := 0
	for e < len(changed) && changed[e] {
		e++
	}
	return block{0, e}
}

// nextBlock is the block after b, across one unchanged line; false at the
// end of the side.
func nextBlock(changed []bool, b block) (block, bool) {
	if b.end >= len(changed) {
		return b, false
	}
	n := block{b.end + 1, b.end + 1}
	for n.end < len(changed) && changed[n.end] {
		n.end++
	}
	return n, true
}

// prevBlock is the block before b, across one unchanged line.
func prevBlock(changed []bool, b block) (block, bool) {
	if b.start == 0 {
		return b, false
	}
	p := block{b.start - 1, b.start - 1}
	for p.start > 0 && changed[p.start-1] {
		p.start--
	}
	return p, true
}

// up moves a non-empty block one line earlier if the lines allow it,
// merging it with a block it then touches.
func (s *sides) up(b *block) bool {
	if b.start == 0 || b.start == b.end || s.ids[b.start-1] != s.ids[b.end-1] {
		return false
	}
	b.start--
	b.end--
	s.changed[b.start], s.changed[b.end] = true, false
	for s.isChanged(b.start - 1) {
		b.start--
	}
	return true
}

// down moves a non-empty block one line later, likewise.
func (s *sides) down(b *block) bool {
	if b.end >= len(s.ids) || b.start == b.end || s.ids[b.start] != s.ids[b.end] {
		return false
	}
	s.changed[b.start], s.changed[b.end] = false, true
	b.start++
	b.end++
	for s.isChanged(b.end) {
		b.end++
	}
	return true
}

// slide puts every block of changed lines of one side (ids, changed) at
// its place, the other side's marks being other.
func slide(ids []int32, changed, other []bool) {
	s := &sides{ids: ids, changed: changed, other: other}
	b, o := firstBlock(changed), firstBlock(other)
	for {
		if b.end > b.start {
			s.place(&b, &o)
		}
		var ok bool
		if b, ok = nextBlock(changed, b); !ok {
			return
		}
		o, _ = nextBlock(other, o)
	}
}

// place moves block b (facing o on the other side) to its place.
func (s *sides) place(b, o *block) {
	var top, aligned int
	for {
		size := b.end - b.start
		// as high as it goes, then as low, noting the lowest place that
		// faces changed lines
		for s.up(b) {
			*o, _ = prevBlock(s.other, *o)
		}
		top = b.end
		aligned = -1
		if o.end > o.start {
			aligned = b.end
		}
		for s.down(b) {
			*o, _ = nextBlock(s.other, *o)
			if o.end > o.start {
				aligned = b.end
			}
		}
		if b.end-b.start == size {
			break // no merge on the way: the range is known
		}
	}
	if b.end == top || aligned < 0 {
		return
	}
	for b.end > aligned {
		s.up(b)
		*o, _ = prevBlock(s.other, *o)
	}
}
