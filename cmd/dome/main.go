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
	"github.com/dome-registry/dome/internal/readcmd"
)

func main() {
	wd, _ := os.Getwd()
	os.Exit(front.Main(context.Background(), front.Env{
		Args: os.Args, Env: readcmd.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, WorkDir: wd},
	}, front.HandOff))
}
