// Package xdiff computes line diffs and three-way merges that decide as
// git's do: the same alignment as git's xdiff (libxdiff's Myers algorithm
// with git's heuristics: common ends trimmed, lines without a match on the
// other side and runs of too-common lines set aside, the bisection's cost
// limits and snake heuristic, then change groups slid to git's canonical
// place), and the same merge (xdl_merge: changes that touch or overlap
// conflict unless identical, and at the "zealous" levels a conflict is
// narrowed to the lines that differ and conflicts fewer than four lines
// apart are joined). So a file merges cleanly exactly when `git apply
// --3way` (Zealous) or `git merge-file` (ZealousAlnum) would merge it, with
// byte-identical output, conflict markers included. Lines are byte strings
// ending in "\n" (the last may not); no whitespace or case is ignored. The
// code follows git's xdiff (xprepare.c, xdiffi.c, xmerge.c; LibXDiff by
// Davide Libenzi and git's contributors, LGPL-2.1) step by step, with only
// the parts git apply and git merge-file use (no whitespace options, no
// patience or histogram, no indent heuristic, no diff3 style), and is
// checked against the git binary by its tests.
package xdiff
