// Package lazyre compiles a regular expression on its first use instead of
// at package initialization.
//
// Go runs the initialization of every package a binary links on every start,
// whichever command runs; a package-level regexp.MustCompile therefore costs
// every dome command (even `dome --version`) its compile time and the heap it
// allocates, whether or not the command ever matches it.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr once, on its first call, and
// returns the compiled expression. It panics on the first call if expr is
// invalid, as regexp.MustCompile does; tests that reach each use catch that.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
