package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostile has descriptions with every quote and expansion a shell knows: the
// scripts must parse and must not run any of it.
var hostile = &Command{
	Name:  "prog",
	Flags: []Flag{{Names: []string{"repo"}, Usage: `a path; "quoted" and 'single' $(touch pwned) ` + "`touch pwned`", TakesValue: true}, {Names: []string{"version", "v"}, Local: true}},
	Subcommands: []*Command{
		{Name: "grp", Usage: `it's a group \ with a backslash; $HOME %s`, Subcommands: []*Command{
			{Name: "leaf", Usage: "a leaf: with a colon", Flags: []Flag{{Names: []string{"out", "o"}, Usage: "file", TakesValue: true}, {Names: []string{"check"}}}},
			{Name: "other"},
		}},
		{Name: "top", Usage: "top-level leaf"},
	},
}

func TestWrite_UnknownShell(t *testing.T) {
	if _, err := Write("tcsh", hostile); err == nil || !strings.Contains(err.Error(), `unknown shell "tcsh"`) {
		t.Fatalf("err = %v, want unknown shell", err)
	}
}

func TestWrite_Deterministic(t *testing.T) {
	for _, sh := range Shells {
		a, _ := Write(sh, hostile)
		b, _ := Write(sh, hostile)
		if string(a) != string(b) {
			t.Errorf("%s: two writes differ", sh)
		}
	}
}

func script(t *testing.T, shell string) string {
	t.Helper()
	b, err := Write(shell, hostile)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "prog."+shell)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needShell(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
}

func TestBash_Completes(t *testing.T) {
	needShell(t, "bash")
	p := script(t, "bash")
	dir := filepath.Dir(p)
	cases := []struct{ words, want string }{
		{"prog g", "grp"},
		{"prog grp ''", "leaf other"},
		{"prog --repo grp ''", "grp top"}, // grp is --repo's value
		{"prog grp leaf --", "--out --check --repo"},
		{"prog grp leaf -o x ''", ""},
		{"prog --v", "--version"},
		{"prog grp --v", ""},
	}
	for _, c := range cases {
		cmd := exec.Command("bash", "-c", `source "$1"; eval "COMP_WORDS=($2)"; COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _prog; echo "${COMPREPLY[*]}"`, "bash", p, c.words)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("complete %q = %q, want %q", c.words, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("a description was executed")
	}
}

func TestZsh_Completes(t *testing.T) {
	needShell(t, "zsh")
	p := script(t, "zsh")
	if out, err := exec.Command("zsh", "-n", p).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	// zsh's completion functions stubbed to print what the script offers
	// (zsh itself filters the candidates by the typed prefix).
	stub := `compdef() { :; }
_describe() { local -a arr; arr=("${(@P)4}"); print -rl -- "${arr[@]%%:*}"; }
_files() { print -r -- "<files>"; }
source "$1"
words=("${(@)argv[2,-1]}"); CURRENT=$(( $# - 1 )); _prog | tr '\n' ' '`
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"prog", "grp", ""}, "leaf other"},
		{[]string{"prog", "--repo", "grp", ""}, "grp top"},
		{[]string{"prog", "grp", "leaf", "--"}, "--out -o --check --repo"},
		{[]string{"prog", "grp", "leaf", "-o", ""}, "<files>"},
	} {
		cmd := exec.Command("zsh", append([]string{"-f", "-c", stub, "zsh", p}, c.words...)...)
		cmd.Dir = filepath.Dir(p)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("zsh completes %q with %q, want %q", c.words, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "pwned")); err == nil {
		t.Fatal("a description was executed")
	}
}

func TestFish_Completes(t *testing.T) {
	needShell(t, "fish")
	p := script(t, "fish")
	if out, err := exec.Command("fish", "-n", p).CombinedOutput(); err != nil {
		t.Fatalf("fish -n: %v\n%s", err, out)
	}
	cmd := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C "prog grp "; complete -C "prog grp leaf --c"`, p)
	cmd.Dir = filepath.Dir(p)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	for _, want := range []string{"leaf\ta leaf: with a colon", "other", "--check"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("fish completions %q lack %q", out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "pwned")); err == nil {
		t.Fatal("a description was executed")
	}
}
