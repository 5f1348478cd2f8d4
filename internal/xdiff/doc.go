// Package xdiff computes line diffs and three-way merges (draft doc).
package xdiff
