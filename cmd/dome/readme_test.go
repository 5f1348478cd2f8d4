package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pages users follow are scripts: every ```sh block of README.md and of
// docs/*.md runs, in order, as one bash script per page (a reader following
// the page in one shell), in a fresh clone of this repository on a branch
// named main, with errexit and nounset. A block is left out only when the
// line before it is "<!-- not run by the README test: WHY -->".
//
// Two things stand in for what the test cannot do for real: "make build" is
// a shim that checks bin/dome, which the test links to this test binary (it
// is dome: TestMain runs dome's main when called by that name), and
// DOME_SERVE_ADDR names a free loopback port for dome serve.

const notRun = "<!-- not run by the README test:"

// shBlock is a runnable block of a page.
type shBlock struct {
	line int // of the opening fence
	text string
}

// shBlocks returns the runnable ```sh blocks of a Markdown page.
func shBlocks(page []byte) ([]shBlock, error) {
	var out []shBlock
	var cur *shBlock
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(page))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```sh") && strings.TrimSpace(line) == "```sh":
			if !strings.HasPrefix(strings.TrimSpace(prev), notRun) {
				cur = &shBlock{line: n}
			} else {
				cur = nil
				// skip to the closing fence
				for sc.Scan() {
					n++
					if strings.HasPrefix(sc.Text(), "```") {
						break
					}
				}
			}
		}
		prev = line
	}
	if cur != nil {
		return nil, fmt.Errorf("the block at line %d has no closing fence", cur.line)
	}
	return out, sc.Err()
}

func TestShBlocks(t *testing.T) {
	page := "intro\n```sh\necho one\n```\n" + notRun + " slow -->\n```sh\necho skipped\n```\n```yaml\nx: 1\n```\n```sh\necho two\n```\n"
	got, err := shBlocks([]byte(page))
	if err != nil || len(got) != 2 || got[0].text != "echo one\n" || got[1].text != "echo two\n" || got[0].line != 2 {
		t.Fatalf("shBlocks = %+v, %v", got, err)
	}
	if _, err := shBlocks([]byte("```sh\necho open\n")); err == nil {
		t.Fatal("an unclosed block must be an error")
	}
}

// TestDocsRun runs the runnable blocks of README.md and docs/*.md.
func TestDocsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands (a minute or two)")
	}
	for _, tool := range []string{"bash", "git", "go", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to run the README (CI=true)", tool)
			}
			t.Skipf("%s not found: the README's commands are not run", tool)
		}
	}
	dome, err := exec.LookPath("dome") // this test binary, as testscript put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	pages := []string{filepath.Join(root, "README.md")}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, docs...)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := shBlocks(data)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if len(blocks) == 0 {
			continue
		}
		rel, _ := filepath.Rel(root, page)
		t.Run(rel, func(t *testing.T) { runPage(t, root, dome, rel, blocks) })
	}
}

func runPage(t *testing.T, root, dome, page string, blocks []shBlock) {
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "dome")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git(root, "clone", "-q", "--no-hardlinks", root, clone)
	git(clone, "checkout", "-q", "-B", "main")
	if err := os.MkdirAll(filepath.Join(clone, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dome, filepath.Join(clone, "bin", "dome")); err != nil {
		t.Fatal(err)
	}
	shims := filepath.Join(tmp, "shims")
	os.MkdirAll(shims, 0o755)
	makeShim := "#!/bin/sh\n# make, as the README test runs it: bin/dome is already this test's dome\n" +
		"case \"$1\" in build) test -x bin/dome ;; *) echo \"make $1: not run by the README test\" >&2; exit 2 ;; esac\n"
	if err := os.WriteFile(filepath.Join(shims, "make"), []byte(makeShim), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "cache", "tmp"} {
		os.MkdirAll(filepath.Join(tmp, d), 0o755)
	}
	var script strings.Builder
	script.WriteString("set -eu\n")
	for _, b := range blocks {
		fmt.Fprintf(&script, "echo '### %s:%d' >&2\n%s", page, b.line, b.text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = clone
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = docsEnv(t, tmp, shims)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // a server the page left running
	}
	if err != nil {
		t.Fatalf("%s does not run as written: %v\n%s", page, err, tail(out.String(), 6000))
	}
	if testing.Verbose() {
		t.Log(out.String())
	}
}

// docsEnv is the environment a reader's shell would have: this machine's Go
// caches, a home and caches of the test's own, a git identity, a free port
// for dome serve.
func docsEnv(t *testing.T, tmp, shims string) []string {
	keep := map[string]bool{"PATH": true, "CI": true, "LANG": true, "TERM": true, "USER": true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if keep[k] {
			env = append(env, kv)
		}
	}
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN").Output(); err == nil {
		vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
			if i < len(vals) && vals[i] != "" {
				env = append(env, k+"="+vals[i])
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tsc := ""
	if root, err := filepath.Abs("../.."); err == nil {
		p := filepath.Join(root, "contract-tests", "ts", "node_modules", ".bin", "tsc")
		if _, err := os.Stat(p); err == nil {
			tsc = p
		}
	}
	return append(env,
		"PATH="+shims+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(tmp, "home"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"TMPDIR="+filepath.Join(tmp, "tmp"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Dome Reader", "GIT_AUTHOR_EMAIL=reader@dome.invalid",
		"GIT_COMMITTER_NAME=Dome Reader", "GIT_COMMITTER_EMAIL=reader@dome.invalid",
		"DOME_SERVE_ADDR="+addr,
		"DOME_TSC="+tsc,
	)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
