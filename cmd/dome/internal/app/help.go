package app

import (
	"embed"
	"strings"
)

// The long help of each command (its Description: what `dome CMD --help`
// prints and what docs/reference/ is generated from) is a markdown file
// under help/, named after the command path: help/stack_promote.md for
// dome stack promote. Keeping the prose out of the Go files keeps the
// command files about flags and calls, and lets the prose use backticks.
//
//go:embed help/*.md
var helpFiles embed.FS

// help returns the long help of the command at path ("stack_promote").
// TestHelpFiles checks that every name used here has its file and every
// file is used.
func help(path string) string {
	b, err := helpFiles.ReadFile("help/" + path + ".md")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
