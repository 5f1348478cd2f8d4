package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHintsNameRealFlagsAndCommands reads every string literal of dome's
// own code (pkg/ and cmd/, tests and the vendored oapi-codegen excepted) and
// checks that each flag it names (--no-validate) is a flag of some dome
// command, and that each command it tells the user to run ("run: dome spec
// filter ...", "`dome release verify`") exists. Which command may offer
// which flag is the caller's business (specfilter.Flags); this catches the
// flags and commands that exist nowhere.
func TestHintsNameRealFlagsAndCommands(t *testing.T) {
	app := newApp(&Env{})
	flags := map[string]bool{"help": true, "version": true}
	addFlags := func(fs []cli.Flag) {
		for _, f := range fs {
			for _, n := range f.Names() {
				flags[n] = true
			}
		}
	}
	addFlags(app.Flags)
	cmds := map[string]*cli.Command{}
	var walkCmds func(prefix string, cs []*cli.Command)
	walkCmds = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			cmds[name] = c
			addFlags(c.Flags)
			walkCmds(name, c.Subcommands)
		}
	}
	walkCmds("", app.Commands)

	flagRE := regexp.MustCompile("(?:^|[\\s(\"'`,;:=/])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
	// A command the user is told to run ("run: dome X", "with: dome X",
	// "`dome X"), or a subcommand after a command that has them.
	cmdRE := regexp.MustCompile("(?:(?:run|with|try|use|see): |`)dome ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
	subRE := regexp.MustCompile("dome ([a-z][a-z-]*) ([a-z][a-z-]*)")
	// Flags of other programs that hints quote.
	otherTool := regexp.MustCompile(`\b(git|gpg|tsc|npm|npx|diff|go|openssl|bwrap|prlimit)( [a-z-]+)? +(--?[A-Za-z-]+( [A-Za-z]+)? +)*$`)
	root := filepath.Join("..", "..")
	checked := 0
	for _, dir := range []string{"pkg", "cmd", "internal/app", "internal/front", "internal/readcmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "oapicodegen" || d.Name() == "completion") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				checked++
				if !strings.ContainsAny(s, " \t\n") {
					return true // one word: an argument vector element ("--unshare-all"), not prose
				}
				for _, ix := range flagRE.FindAllStringSubmatchIndex(s, -1) {
					name := s[ix[2]:ix[3]]
					if ix[1] < len(s) && isWordByte(s[ix[1]]) {
						continue // --noEmit: not a dome-style flag
					}
					if otherTool.MatchString(s[:ix[2]-2]) {
						continue // git diff --binary, gpg --export --armor
					}
					if !flags[name] {
						t.Errorf("%s: %q names --%s, which no dome command has", path, trim(s), name)
					}
				}
				for _, m := range subRE.FindAllStringSubmatch(s, -1) {
					if prose[m[2]] {
						continue // "the dome release that links ...", "any dome stack command"
					}
					if c, ok := cmds[m[1]]; ok && len(c.Subcommands) > 0 {
						if _, ok := cmds[m[1]+" "+m[2]]; !ok {
							t.Errorf("%s: %q names the command dome %s %s, which does not exist", path, trim(s), m[1], m[2])
						}
					}
				}
				for _, m := range cmdRE.FindAllStringSubmatch(s, -1) {
					c, ok := cmds[m[1]]
					if !ok {
						t.Errorf("%s: %q names the command dome %s, which does not exist", path, trim(s), m[1])
						continue
					}
					if len(c.Subcommands) > 0 && m[2] != "" {
						if _, ok := cmds[m[1]+" "+m[2]]; !ok {
							t.Errorf("%s: %q names the command dome %s %s, which does not exist", path, trim(s), m[1], m[2])
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 1000 {
		t.Fatalf("checked only %d string literals: is the source tree where the test expects it?", checked)
	}
}

// prose are words that follow "dome <command>" in a sentence, not a subcommand.
var prose = map[string]bool{"that": true, "command": true, "commands": true, "which": true, "and": true, "or": true, "is": true, "the": true, "in": true}

func isWordByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
