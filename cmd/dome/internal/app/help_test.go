package app

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpFiles: every help/*.md file is some command's Description (the
// file is named after the command path joined by _), and no command's long
// help is empty where a file for it exists.
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
			if strings.TrimSpace(c.Description) == "" && help(name) != "" {
				t.Errorf("dome %s: help/%s.md exists but the command does not use it: set Description: help(%q)", strings.Join(p, " "), name, name)
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
