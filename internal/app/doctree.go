package app

import (
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// DocApp returns dome's command tree built in a neutral environment (no
// variables, no terminal, the epoch as the clock), so that what is generated
// from it is the same on every machine. cmd/dome/internal/docgen renders
// docs/reference/ and the man pages from it, outside the dome binary.
func DocApp() *cli.App {
	env := &Env{
		Stdin:   strings.NewReader(""),
		Stdout:  io.Discard,
		Stderr:  io.Discard,
		Getenv:  func(string) string { return "" },
		Now:     func() time.Time { return time.Unix(0, 0).UTC() },
		WorkDir: "/",
	}
	a := newApp(env)
	loadHelp(a.Commands)
	return a
}

// GlobalFlagNames are the names of the flags every command accepts.
func GlobalFlagNames() []string {
	var out []string
	for _, f := range globalFlags() {
		out = append(out, f.Names()[0])
	}
	return out
}
