// Command docgen writes dome's command reference, docs/reference/*.md and
// the man pages docs/man/*.1, from the CLI definitions in
// internal/app: the commands' Usage, Description (their help/*.md
// files) and flags. One source for `dome CMD --help` and the docs, as gh and
// cobra-based CLIs keep them. It is a separate program so that the man page
// writer (go-md2man) is never linked into bin/dome.
//
//	go run ./cmd/dome/internal/docgen          # rewrite the pages (make docs)
//	go run ./cmd/dome/internal/docgen -check   # exit 1 naming each stale page
//
// Run it from the repository root; -root names another.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dome-registry/dome/internal/app"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "write nothing; exit 1 when a page differs from what the CLI says")
	flag.Parse()
	pages, err := Render(app.DocApp(), app.GlobalFlagNames())
	if err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(2)
	}
	if *check {
		stale, err := Stale(*root, pages)
		if err != nil {
			fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
			os.Exit(2)
		}
		for _, s := range stale {
			fmt.Fprintf(os.Stderr, "docgen: %s\n", s)
		}
		if len(stale) > 0 {
			fmt.Fprintf(os.Stderr, "docgen: %s\n", RegenerateHint)
			os.Exit(1)
		}
		return
	}
	if err := Write(*root, pages); err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
}
