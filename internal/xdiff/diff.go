package xdiff

import "math"

// Change is one hunk of a diff of a into b: lines a[I1:I1+Chg1] are
// replaced by b[I2:I2+Chg2] (0-based; an insertion has Chg1 == 0).
type Change struct {
	I1, I2     int
	Chg1, Chg2 int
}

// Lines splits data into lines, each with its "\n" (the last may lack it).
func Lines(data []byte) []string {
	var out []string
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
	return out
}

// Diff returns the changes that turn a into b, in order, as git's xdiff
// (Myers, no options) finds them after its change-group compaction.
func Diff(a, b []string) []Change {
	x1, x2 := diff(a, b)
	return script(x1, x2)
}

// file is one side of a diff (git's xdfile_t).
type file struct {
	recs   []string
	ha     []int  // the class (an index: equal lines, equal class) of each record
	rchg   []byte // changed marks, with a zero sentinel before and after: rchg[i+1] is record i
	rindex []int  // records left for the Myers pass (not trimmed, not set aside)
	haR    []int  // their classes
	dstart int
	dend   int
}

func (f *file) changed(i int) bool { return f.rchg[i+1] != 0 }
func (f *file) mark(i int, v byte) { f.rchg[i+1] = v }

// diff prepares both sides, runs the Myers pass and compacts the result;
// the marks in rchg are the diff.
func diff(a, b []string) (*file, *file) {
	x1, x2 := prepare(a, b)
	n1, n2 := len(x1.haR), len(x2.haR)
	ndiags := n1 + n2 + 3
	e := &env{
		x1: x1, x2: x2,
		kvdf: make([]int, ndiags+2), kvdb: make([]int, ndiags+2),
		koff:  n2 + 1,
		snake: snakeCnt, heurMin: heurMinCost,
	}
	e.mxcost = bogosqrt(ndiags)
	if e.mxcost < maxCostMin {
		e.mxcost = maxCostMin
	}
	e.recsCmp(0, n1, 0, n2, false)
	compact(x1, x2)
	compact(x2, x1)
	return x1, x2
}

const (
	maxCostMin    = 256
	heurMinCost   = 256
	snakeCnt      = 20
	kHeur         = 4
	maxEqLimit    = 1024
	simscanWindow = 100
	kpdisRun      = 4
	lineMax       = math.MaxInt
)

// bogosqrt is xdiff's integer square root approximation.
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// prepare classifies the lines of both sides, trims the common head and
// tail, and sets aside lines that cannot match (marking them changed) or
// that match too often inside runs of such lines (xdl_prepare_env).
func prepare(a, b []string) (*file, *file) {
	classes := make(map[string]int, len(a)+len(b))
	var count1, count2 []int
	classify := func(recs []string, pass int) []int {
		ha := make([]int, len(recs))
		for i, r := range recs {
			c, ok := classes[r]
			if !ok {
				c = len(count1)
				classes[r] = c
				count1, count2 = append(count1, 0), append(count2, 0)
			}
			if pass == 1 {
				count1[c]++
			} else {
				count2[c]++
			}
			ha[i] = c
		}
		return ha
	}
	x1 := &file{recs: a, ha: classify(a, 1), rchg: make([]byte, len(a)+2)}
	x2 := &file{recs: b, ha: classify(b, 2), rchg: make([]byte, len(b)+2)}

	// trim the ends (xdl_trim_ends)
	lim := min(len(a), len(b))
	i := 0
	for i < lim && x1.ha[i] == x2.ha[i] {
		i++
	}
	x1.dstart, x2.dstart = i, i
	lim -= i
	j := 0
	for j < lim && x1.ha[len(a)-1-j] == x2.ha[len(b)-1-j] {
		j++
	}
	x1.dend, x2.dend = len(a)-j-1, len(b)-j-1

	// set lines aside (xdl_cleanup_records)
	dis := func(x *file, other []int) []byte {
		mlim := min(bogosqrt(len(x.recs)), maxEqLimit)
		d := make([]byte, len(x.recs)+1)
		for i := x.dstart; i <= x.dend; i++ {
			switch nm := other[x.ha[i]]; {
			case nm == 0:
				d[i] = 0
			case nm >= mlim:
				d[i] = 2
			default:
				d[i] = 1
			}
		}
		return d
	}
	dis1, dis2 := dis(x1, count2), dis(x2, count1)
	keep := func(x *file, d []byte) {
		for i := x.dstart; i <= x.dend; i++ {
			if d[i] == 1 || d[i] == 2 && !cleanMmatch(d, i, x.dstart, x.dend) {
				x.rindex = append(x.rindex, i)
				x.haR = append(x.haR, x.ha[i])
			} else {
				x.mark(i, 1)
			}
		}
	}
	keep(x1, dis1)
	keep(x2, dis2)
	return x1, x2
}

// cleanMmatch reports whether the too-common line i sits inside a run of
// lines without a match, so that it can be set aside too.
func cleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > simscanWindow {
		s = i - simscanWindow
	}
	if e-i > simscanWindow {
		e = i + simscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}

// env is the state of the Myers pass (xdalgoenv_t and the K vectors).
type env struct {
	x1, x2     *file
	kvdf, kvdb []int // forward and backward furthest points, indexed by diagonal + koff
	koff       int
	mxcost     int
	snake      int
	heurMin    int
}

// recsCmp marks the changed records of the box [off1,lim1) x [off2,lim2)
// of the set-aside-free sequences, splitting it recursively (xdl_recs_cmp).
func (e *env) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	ha1, ha2 := e.x1.haR, e.x2.haR
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			e.x2.mark(e.x2.rindex[off2], 1)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			e.x1.mark(e.x1.rindex[off1], 1)
		}
	default:
		i1, i2, minLo, minHi := e.split(off1, lim1, off2, lim2, needMin)
		e.recsCmp(off1, i1, off2, i2, minLo)
		e.recsCmp(i1, lim1, i2, lim2, minHi)
	}
}

// split finds where to cut the box: the middle snake of the forward and
// backward searches, or, when the cost grows, a good-enough point found by
// git's heuristics (xdl_split).
func (e *env) split(off1, lim1, off2, lim2 int, needMin bool) (int, int, bool, bool) {
	ha1, ha2 := e.x1.haR, e.x2.haR
	o := e.koff
	kvdf := func(d int) *int { return &e.kvdf[d+o] }
	kvdb := func(d int) *int { return &e.kvdb[d+o] }
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	*kvdf(fmid) = off1
	*kvdb(bmid) = lim1
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*kvdf(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*kvdf(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *kvdf(d - 1) >= *kvdf(d + 1) {
				i1 = *kvdf(d - 1) + 1
			} else {
				i1 = *kvdf(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > e.snake {
				gotSnake = true
			}
			*kvdf(d) = i1
			if odd && bmin <= d && d <= bmax && *kvdb(d) <= i1 {
				return i1, i2, true, true
			}
		}
		if bmin > dmin {
			bmin--
			*kvdb(bmin - 1) = lineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*kvdb(bmax + 1) = lineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *kvdb(d - 1) < *kvdb(d + 1) {
				i1 = *kvdb(d - 1)
			} else {
				i1 = *kvdb(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > e.snake {
				gotSnake = true
			}
			*kvdb(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *kvdf(d) {
				return i1, i2, true, true
			}
		}
		if needMin {
			continue
		}
		// The cost is high and a long snake was seen: take a diagonal
		// that got far enough, ending in a snake.
		if gotSnake && ec > e.heurMin {
			best, s1, s2 := 0, 0, 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kvdf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > kHeur*ec && v > best && off1+e.snake <= i1 && i1 < lim1 && off2+e.snake <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == e.snake {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, true, false
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kvdb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > kHeur*ec && v > best && off1 < i1 && i1 <= lim1-e.snake && off2 < i2 && i2 <= lim2-e.snake {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == e.snake-1 {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, false, true
			}
		}
		// Enough: take the furthest reaching path.
		if ec >= e.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(*kvdf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := lineMax, lineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, *kvdb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}

// group is a run of changed records [start, end) of one side; an empty
// group sits above record start.
type group struct{ start, end int }

func groupInit(x *file) group {
	g := group{}
	for x.changed(g.end) {
		g.end++
	}
	return g
}

func (g *group) next(x *file) bool {
	if g.end == len(x.recs) {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for x.changed(g.end) {
		g.end++
	}
	return true
}

func (g *group) previous(x *file) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for x.changed(g.start - 1) {
		g.start--
	}
	return true
}

func (g *group) slideDown(x *file) bool {
	if g.end < len(x.recs) && x.ha[g.start] == x.ha[g.end] {
		x.mark(g.start, 0)
		x.mark(g.end, 1)
		g.start++
		g.end++
		for x.changed(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func (g *group) slideUp(x *file) bool {
	if g.start > 0 && x.ha[g.start-1] == x.ha[g.end-1] {
		g.start--
		g.end--
		x.mark(g.start, 1)
		x.mark(g.end, 0)
		for x.changed(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact slides each change group of x as far up as it goes, then down as
// far as it goes (merging groups it meets), then back up to line up with a
// change of the other side if it can (xdl_change_compact, no indent
// heuristic). The two sides' groups move in step.
func compact(x, o *file) {
	g, go_ := groupInit(x), groupInit(o)
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther int
			for {
				size := g.end - g.start
				endMatchingOther = -1
				for g.slideUp(x) {
					go_.previous(o)
				}
				earliestEnd = g.end
				if go_.end > go_.start {
					endMatchingOther = g.end
				}
				for g.slideDown(x) {
					go_.next(o)
					if go_.end > go_.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && endMatchingOther != -1 {
				for go_.end == go_.start {
					g.slideUp(x)
					go_.previous(o)
				}
			}
		}
		if !g.next(x) {
			break
		}
		go_.next(o)
	}
}

// script collects the marked groups into changes (xdl_build_script).
func script(x1, x2 *file) []Change {
	var rev []Change
	i1, i2 := len(x1.recs), len(x2.recs)
	for i1 >= 0 || i2 >= 0 {
		if x1.changedSafe(i1-1) || x2.changedSafe(i2-1) {
			l1, l2 := i1, i2
			for x1.changedSafe(i1 - 1) {
				i1--
			}
			for x2.changedSafe(i2 - 1) {
				i2--
			}
			rev = append(rev, Change{I1: i1, I2: i2, Chg1: l1 - i1, Chg2: l2 - i2})
		}
		i1--
		i2--
	}
	out := make([]Change, len(rev))
	for i, c := range rev {
		out[len(rev)-1-i] = c
	}
	return out
}

func (f *file) changedSafe(i int) bool { return i >= 0 && i < len(f.recs) && f.rchg[i+1] != 0 }
