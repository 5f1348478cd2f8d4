// Command dome turns a git repository into a trustworthy tool registry.
//
// This program is dome's front (internal/front): it answers dome --version,
// dome version, dome registry cat and dome patch apply itself and hands
// every other command to dome-full, installed beside it, which holds the
// whole command set.
package main

import (
	"context"
	"os"

	"github.com/dome-registry/dome/internal/front"
)

func main() {
	growStack(0)
	wd, _ := os.Getwd()
	os.Exit(front.Main(context.Background(), front.Env{
		Args: os.Args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, WorkDir: wd,
	}, front.HandOff))
}

// growStack grows this goroutine's stack, while it is shallow, to the 16 KB
// a cold `dome registry cat` reaches. Go starts a goroutine on 2 KB and
// doubles the stack when a call does not fit, copying it and adjusting every
// frame on it (a look-up of each frame's stack map): the two such copies
// deep in the read (4 to 8 KB, 8 to 16 KB) cost it some 65 K instructions,
// this one copy of three frames under 10 K.
//
//go:noinline
func growStack(i int) byte {
	var frame [12 << 10]byte
	return frame[i]
}
