// Package xdiff computes line diffs and three-way merges that decide as
// git's do, so that dome's patches and three-way applies match git's byte
// for byte. It is an independent implementation: the alignment is Myers'
// O(ND) algorithm in its linear-space form (Eugene W. Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986), and everywhere git
// picks among equally good answers, or gives up on the best one to stay
// fast, the rule was measured on the git binary and is written out in the
// code where it applies. The tests hold the package to git (2.39) on
// generated and real inputs: Diff against `git diff --no-index
// --diff-algorithm=myers --no-indent-heuristic -U0`, Merge at level
// Zealous against `git apply --3way` and at ZealousAlnum against `git
// merge-file`.
//
// Lines are byte strings ending in "\n" (the last may not); two lines are
// equal when their bytes are (no whitespace or case is ignored).
//
// Diff: the equal lines at both ends are matched first. Of the rest, a
// line that does not occur on the other side is changed outright, and a
// line that occurs on the other side as often as the rough square root of
// its own file's length (at most 1024 times) is changed outright when it
// sits among such unmatched lines (prepare.go has the exact weighing).
// The remaining lines are aligned by the bidirectional search; past 256
// steps a frontier point that ends a run of more than 20 matches and has
// got far into the box becomes a cut, and past a bound that grows with the
// square root of the input (256 at least) the frontier point that got
// furthest does (myers.go). Last, each block of changed lines slides to
// the lowest place it can take, or the lowest place where it faces changed
// lines of the other side if there is one (slide.go). The indent
// heuristic, patience, histogram and the whitespace options are not
// implemented.
//
// Merge: base is diffed against ours and against theirs. Changes of one
// side that neither overlap nor touch a change of the other are taken;
// changes that do (directly or through a chain) form one region, a
// conflict unless both sides made it the same (from level Eager on). At
// the Zealous levels a conflict is narrowed to the hunks of a diff between
// its two sides, and two conflicts with no other change between them are
// joined into one when at most three lines separate them (at ZealousAlnum
// also when no line between them holds an ASCII letter or digit). Conflicts are
// written in git's "merge" style; the markers end in "\r\n" when base's
// first line does and neither side's line before the conflict ends in a
// bare "\n".
package xdiff
