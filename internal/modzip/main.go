// Command modzip writes this module, as committed at a git revision, into a
// directory laid out as a Go module proxy (GOPROXY=file://DIR): the
// @v/list, .info, .mod and .zip files the go command fetches for
// `go install github.com/dome-registry/dome/cmd/dome@VERSION`.
// scripts/go-install-check.sh uses it to prove that such an install works
// before a release is tagged.
//
//	go run ./internal/modzip -version v0.99.0 -rev HEAD -out DIR
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	version := flag.String("version", "", "the version to publish, e.g. v0.99.0")
	rev := flag.String("rev", "HEAD", "the git revision to take the files from")
	out := flag.String("out", "", "the proxy directory to write")
	flag.Parse()
	if err := run(*version, *rev, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func run(version, rev, out string) error {
	if version == "" || out == "" {
		return fmt.Errorf("give -version and -out")
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	root = strings.TrimSpace(root)
	gomod, err := git("show", rev+":go.mod")
	if err != nil {
		return err
	}
	path := modulePath(gomod)
	if path == "" {
		return fmt.Errorf("go.mod at %s names no module", rev)
	}
	m := module.Version{Path: path, Version: version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, esc, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The committed files at rev (git archive), not the worktree: what a
	// tag would serve. (zip.CreateFromVCS does not take a git worktree.)
	src, err := os.MkdirTemp("", "modzip-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, rev, src)
	archive.Stderr = os.Stderr
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	var z bytes.Buffer
	if err := zip.CreateFromDir(&z, m, src); err != nil {
		return fmt.Errorf("zip %s at %s: %w", m, rev, err)
	}
	when, err := git("show", "-s", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(when))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]string{"Version": version, "Time": t.UTC().Format(time.RFC3339)})
	files := map[string][]byte{
		version + ".zip":  z.Bytes(),
		version + ".mod":  []byte(gomod),
		version + ".info": info,
		"list":            []byte(version + "\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %s (%d bytes zipped)\n", dir, m, z.Len())
	return nil
}

func modulePath(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
