package app

import (
	"context"
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
			if c.Description != "" && c.Description == helpText(name) {
				used[name] = true
			}
			if strings.TrimSpace(c.Description) == "" && helpText(name) != "" {
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
	if helpText("no_such_command") != "" {
		t.Error("help of a missing file is not empty")
	}
}

// TestHelpReferencesResolve: every help("x") a command uses names a file.
func TestHelpReferencesResolve(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string{}, path...), c.Name)
			if ref, ok := strings.CutPrefix(c.Description, helpRef); ok && helpText(ref) == "" {
				t.Errorf("dome %s: Description help(%q) has no file help/%s.md", strings.Join(p, " "), ref, ref)
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(env).Commands)
}

func TestHelpWanted(t *testing.T) {
	a := newApp(&Env{Getenv: func(string) string { return "" }})
	for _, c := range []struct {
		args string
		want bool
	}{
		{"dome --version", false},
		{"dome registry cat petstore@HEAD spec/openapi.yaml", false},
		{"dome --repo /x registry cat petstore@HEAD help", false}, // an argument named help
		{"dome resolve petstore@HEAD --profile -h", false},        // -h is --profile's value
		{"dome resolve --help", true},
		{"dome resolve petstore@HEAD -h", true},
		{"dome --repo help stack", true}, // help is --repo's value: dome stack
		{"dome stack", true},
		{"dome stack apply --run r1", false},
		{"dome stack help apply", true},
		{"dome release petstore v1.0.0", true}, // release has a subcommand: its help may print
		{"dome release verify petstore@v1.0.0", false},
		{"dome resolve -- --help", false},
	} {
		if got := helpWanted(a, strings.Fields(c.args)); got != c.want {
			t.Errorf("helpWanted(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestHelpOutput: --help prints the long help, never a help reference.
func TestHelpOutput(t *testing.T) {
	for _, args := range [][]string{{"dome", "stack", "promote", "--help"}, {"dome", "stack"}, {"dome", "help", "registry", "cat"}} {
		var out, errOut strings.Builder
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		Run(context.Background(), env, args)
		if strings.Contains(out.String(), helpRef) || !strings.Contains(out.String(), "DESCRIPTION:") {
			t.Errorf("%v printed:\n%s%s", args, out.String(), errOut.String())
		}
	}
}
