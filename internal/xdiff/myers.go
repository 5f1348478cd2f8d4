package xdiff

// The search is Myers' linear-space refinement ("An O(ND) Difference
// Algorithm and Its Variations", 1986, section 4b): a box of the edit graph
// is cut at the middle of a shortest path, found by running the greedy
// D-path search forward from the top-left corner and backward from the
// bottom-right one until the two frontiers overlap, and the halves are
// solved the same way. Diagonal k holds the points with x-y = k. On top of
// the paper, two bounds keep large inputs near linear, as git's do: past
// heurMinCost edit steps a frontier point that ends a long run of matches
// far along the box is taken as the cut, and past maxCost steps the
// frontier point that got furthest is, even though the result is then no
// longer minimal.

const (
	// heurMinCost: the edit cost from which a long run of matches is taken
	// as a cut point.
	heurMinCost = 256
	// snakeLen: how many matches in a row count as a long run.
	snakeLen = 20
	// heurProgress: a run counts only where the frontier has advanced more
	// than this many times the cost along the box.
	heurProgress = 4
	// minMaxCost: the cost bound is never below this.
	minMaxCost = 256
)

// search holds the kept lines of both files and the frontiers.
type search struct {
	a, b       []int32 // kept lines (class ids)
	posA, posB []int   // their indexes in the whole files
	changedA   []bool
	changedB   []bool
	fwd, bwd   []int // furthest x reached on each diagonal (index k+zero)
	zero       int
	maxCost    int
}

func (s *search) run() {
	n := len(s.a) + len(s.b) + 3
	s.fwd, s.bwd = make([]int, n), make([]int, n)
	s.zero = len(s.b) + 1
	s.maxCost = max(roughSqrt(n), minMaxCost)
	s.compare(0, len(s.a), 0, len(s.b), false)
}

// compare aligns a[lo1:hi1] with b[lo2:hi2]. With minimal set the cost
// bounds do not apply (the box is known to be cheap).
func (s *search) compare(lo1, hi1, lo2, hi2 int, minimal bool) {
	for {
		for lo1 < hi1 && lo2 < hi2 && s.a[lo1] == s.b[lo2] {
			lo1, lo2 = lo1+1, lo2+1
		}
		for lo1 < hi1 && lo2 < hi2 && s.a[hi1-1] == s.b[hi2-1] {
			hi1, hi2 = hi1-1, hi2-1
		}
		if lo1 == hi1 {
			for j := lo2; j < hi2; j++ {
				s.changedB[s.posB[j]] = true
			}
			return
		}
		if lo2 == hi2 {
			for i := lo1; i < hi1; i++ {
				s.changedA[s.posA[i]] = true
			}
			return
		}
		x, y, minLo, minHi := s.split(lo1, hi1, lo2, hi2, minimal)
		s.compare(lo1, x, lo2, y, minLo)
		// the upper half as a loop: deep recursion only on one side
		lo1, lo2, minimal = x, y, minHi
	}
}

// split finds where to cut the box: the point where the forward and
// backward frontiers meet, or past the cost bounds a heuristic point, and
// whether each half must then be solved without bounds.
func (s *search) split(lo1, hi1, lo2, hi2 int, minimal bool) (x, y int, minLo, minHi bool) {
	a, b := s.a, s.b
	fwd, bwd, z := s.fwd, s.bwd, s.zero
	kLo, kHi := lo1-hi2, hi1-lo2 // the diagonals the box spans
	kf, kb := lo1-lo2, hi1-hi2   // where the two searches start
	odd := (kf-kb)&1 != 0
	fwd[kf+z], bwd[kb+z] = lo1, hi1
	fLo, fHi, bLo, bHi := kf, kf, kb, kb
	const unreachedBwd = int(^uint(0) >> 1)
	for cost := 1; ; cost++ {
		longSnake := false // a run of more than snakeLen matches followed in this step
		// One more step forward. The frontier widens by a diagonal each
		// way until it meets the box's edge; the diagonal just outside it
		// is marked unreached so no path comes from there.
		if fLo > kLo {
			fLo--
			fwd[fLo-1+z] = -1
		} else {
			fLo++
		}
		if fHi < kHi {
			fHi++
			fwd[fHi+1+z] = -1
		} else {
			fHi--
		}
		for k := fHi; k >= fLo; k -= 2 {
			// from the neighbour that got further; on a tie, by a deletion
			var x int
			if fwd[k-1+z] >= fwd[k+1+z] {
				x = fwd[k-1+z] + 1
			} else {
				x = fwd[k+1+z]
			}
			y := x - k
			x0 := x
			for x < hi1 && y < hi2 && a[x] == b[y] {
				x, y = x+1, y+1
			}
			if x-x0 > snakeLen {
				longSnake = true
			}
			fwd[k+z] = x
			if odd && bLo <= k && k <= bHi && bwd[k+z] <= x {
				return x, y, true, true
			}
		}
		// one more step backward
		if bLo > kLo {
			bLo--
			bwd[bLo-1+z] = unreachedBwd
		} else {
			bLo++
		}
		if bHi < kHi {
			bHi++
			bwd[bHi+1+z] = unreachedBwd
		} else {
			bHi--
		}
		for k := bHi; k >= bLo; k -= 2 {
			var x int
			if bwd[k-1+z] < bwd[k+1+z] {
				x = bwd[k-1+z]
			} else {
				x = bwd[k+1+z] - 1
			}
			y := x - k
			x0 := x
			for x > lo1 && y > lo2 && a[x-1] == b[y-1] {
				x, y = x-1, y-1
			}
			if x0-x > snakeLen {
				longSnake = true
			}
			bwd[k+z] = x
			if !odd && fLo <= k && k <= fHi && x <= fwd[k+z] {
				return x, y, true, true
			}
		}
		if minimal {
			continue
		}
		// past heurMinCost, and only in a step that followed a long run
		// of matches somewhere, a frontier point ending such a run far
		// into the box is taken as the cut
		if longSnake && cost > heurMinCost {
			if x, y, ok := s.longRun(fLo, fHi, kf, lo1, hi1, lo2, hi2, cost, true); ok {
				return x, y, true, false
			}
			if x, y, ok := s.longRun(bLo, bHi, kb, lo1, hi1, lo2, hi2, cost, false); ok {
				return x, y, false, true
			}
		}
		if cost >= s.maxCost {
			return s.furthest(fLo, fHi, bLo, bHi, lo1, hi1, lo2, hi2)
		}
	}
}

// longRun looks along one frontier (diagonals lo..hi, started on diagonal
// k0) for the point that has advanced most into the box, by more than
// heurProgress times the cost, and that ends (forward) or starts
// (backward) a run of snakeLen matches.
func (s *search) longRun(lo, hi, k0, lo1, hi1, lo2, hi2, cost int, forward bool) (bx, by int, ok bool) {
	best := 0
	for k := hi; k >= lo; k -= 2 {
		off := k - k0
		if off < 0 {
			off = -off
		}
		var x, y, v int
		if forward {
			x = s.fwd[k+s.zero]
			y = x - k
			v = (x - lo1) + (y - lo2) - off
			if !(lo1+snakeLen <= x && x < hi1 && lo2+snakeLen <= y && y < hi2) {
				continue
			}
		} else {
			x = s.bwd[k+s.zero]
			y = x - k
			v = (hi1 - x) + (hi2 - y) - off
			if !(lo1 < x && x <= hi1-snakeLen && lo2 < y && y <= hi2-snakeLen) {
				continue
			}
		}
		if v <= heurProgress*cost || v <= best {
			continue
		}
		run := true
		for j := 0; j < snakeLen && run; j++ {
			if forward {
				run = s.a[x-1-j] == s.b[y-1-j]
			} else {
				run = s.a[x+j] == s.b[y+j]
			}
		}
		if run {
			best, bx, by = v, x, y
		}
	}
	return bx, by, best > 0
}

// furthest gives up on a minimal path: it cuts at the frontier point that
// got furthest into the box (forward or backward, whichever is further),
// and the half behind that point is then solved minimally.
func (s *search) furthest(fLo, fHi, bLo, bHi, lo1, hi1, lo2, hi2 int) (x, y int, minLo, minHi bool) {
	fBest, fx := -1, 0
	for k := fHi; k >= fLo; k -= 2 {
		x := min(s.fwd[k+s.zero], hi1)
		y := x - k
		if y > hi2 {
			x, y = hi2+k, hi2
		}
		if x+y > fBest {
			fBest, fx = x+y, x
		}
	}
	bBest, bx := int(^uint(0)>>1), 0
	for k := bHi; k >= bLo; k -= 2 {
		x := max(s.bwd[k+s.zero], lo1)
		y := x - k
		if y < lo2 {
			x, y = lo2+k, lo2
		}
		if x+y < bBest {
			bBest, bx = x+y, x
		}
	}
	if (hi1+hi2)-bBest < fBest-(lo1+lo2) {
		return fx, fBest - fx, true, false
	}
	return bx, bBest - bx, false, true
}
