package app

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpFiles: every help/*.md file is some command's Description, and
// every command that has subcommands or arguments says more than its Usage.
func TestHelpFiles(t *testing.T) {
	used := map[string]bool{}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			name := strings.Join(p, "_")
			if c.Description != "" && c.Description == help(name) {
				used[name] = true
			}
			if strings.TrimSpace(c.Description) == "" {
				t.Errorf("dome %s has no long help: add cmd/dome/internal/app/help/%s.md and Description: help(%q)", strings.Join(p, " "), name, name)
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, DocApp().Commands)
	files, err := fs.Glob(helpFiles, "help/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".md")
		if !used[name] {
			t.Errorf("%s is no command's help (the command path joined by _ names the file)", f)
		}
	}
	if help("no_such_command") != "" {
		t.Error("help of a missing file is not empty")
	}
}
