package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func TestArgsRange(t *testing.T) {
	tests := []struct {
		usage    string
		min, max int
	}{
		{"", 0, 0},
		{" ", 0, 0},
		{"FILE", 1, 1},
		{"<tool@ref>", 1, 1},
		{"NAME[@VERSION]", 1, 1},
		{"<tool@ref> <path-in-tool>", 2, 2},
		{"A.patch B.patch", 2, 2},
		{"[FILE|-]", 0, 1},
		{"[FILE|-]...", 0, -1},
		{"[NAME@RANGE...]", 0, -1},
		{"FILE...", 1, -1},
		{"PATCH... (- for standard input)", 1, -1},
		{"[PATCH...] (default: standard input)", 0, -1},
		{"[PATCH] (a git diff file, - for standard input; or --from-worktree DIR)", 0, 1},
		{"<tool@ref> | --all | --check", 0, 1},
		{"<tool@ref> | --spec FILE", 0, 1},
		{"[COMMAND...]", 0, -1},
		{"[--base REV] -- COMMAND [ARGS...]", 1, -1},
		{"[--base REV] QUEUE", 1, 1},
		{"[--all] FILE", 1, 1},
	}
	for _, tt := range tests {
		if min, max := argsRange(tt.usage); min != tt.min || max != tt.max {
			t.Errorf("argsRange(%q) = %d, %d; want %d, %d", tt.usage, min, max, tt.min, tt.max)
		}
	}
}

// walk calls f with every command of the tree and its path.
func walk(cmds []*cli.Command, path []string, f func(c *cli.Command, path []string)) {
	for _, c := range cmds {
		p := append(append([]string{}, path...), c.Name)
		f(c, p)
		walk(c.Subcommands, p, f)
	}
}

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Now: func() time.Time { return time.Unix(0, 0) },
		WorkDir: t.TempDir(),
	}
	code = Run(context.Background(), env, append([]string{"dome"}, args...))
	return code, out.String(), errb.String()
}

// Every command of the tree keeps the usage rules (usage.go): the test walks
// the real tree, so a command added later is held to them too.
func TestUsageRules_EveryCommand(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	tree := commands(env)
	walk(tree, []string{"dome"}, func(c *cli.Command, path []string) {
		name := strings.Join(path, " ")
		for _, f := range c.Flags {
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
				t.Errorf("%s: flag --%s is still marked Required: urfave would print the whole help and exit 1", name, f.Names()[0])
			}
		}
		if c.Action == nil {
			t.Errorf("%s: no action: urfave would answer an unknown subcommand with exit 3", name)
		}
		if len(c.Subcommands) > 0 && c.Name != "release" {
			code, _, stderr := runArgs(t, append(path[1:], "nosuch")...)
			if code != ExitUsage || !strings.Contains(stderr, `unknown command "nosuch"`) {
				t.Errorf("%s nosuch: exit %d, stderr %q; want 2 and unknown command", name, code, stderr)
			}
			return
		}
		if len(c.Subcommands) > 0 {
			return
		}
		// One argument more than the command takes is refused before it runs.
		_, max := argsRange(c.ArgsUsage)
		if max < 0 {
			return
		}
		args := append([]string{}, path[1:]...)
		for i := 0; i <= max; i++ {
			args = append(args, fmt.Sprintf("stray%d", i))
		}
		code, stdout, stderr := runArgs(t, args...)
		if code != ExitUsage {
			t.Errorf("%s with %d arguments: exit %d (stderr %q); want 2", name, max+1, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%s with %d arguments: printed %q on stdout; want nothing", name, max+1, stdout)
		}
		if !strings.Contains(stderr, "unexpected argument") && !strings.Contains(stderr, "missing required flag") {
			t.Errorf("%s with %d arguments: stderr %q; want it to name the problem", name, max+1, stderr)
		}
	})
}

func TestHelpCommand(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"help"}, 0, "COMMANDS:", ""},
		{[]string{"help", "stack"}, 0, "dome stack", ""},
		{[]string{"help", "stack", "plan"}, 0, "dome stack plan", ""},
		{[]string{"help", "nosuch"}, 2, "", `no command "nosuch"`},
		{[]string{"help", "stack", "nosuch"}, 2, "", `no command "nosuch" in "dome stack"`},
	} {
		code, stdout, stderr := runArgs(t, tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("dome %s: exit %d, stdout %q, stderr %q; want %d, %q, %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}
