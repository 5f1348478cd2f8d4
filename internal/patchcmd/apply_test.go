package patchcmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// Standard input is read once: Scan keeps what it read for Apply, a second
// "-" reads what the first left (nothing), and a series that Scan refuses
// prints and stores nothing.
func TestScanReadsStandardInputOnce(t *testing.T) {
	g := gittest.New(t)
	g.Write(map[string]string{"a.txt": "a\n"})
	g.Commit("base")
	diff := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(diff), Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" },
		Now: func() time.Time { return time.Unix(0, 0) }, WorkDir: g.Dir}
	if err := Apply(env, repo, ApplyOptions{Patches: []string{"-"}, Strip: -1, MaxSize: 1 << 20}, MoveUnchecked); err != nil {
		t.Fatal(err)
	}
	tree := strings.TrimSpace(out.String())
	g.GitStdin(diff, "apply", "--cached", "-") // git's own tree of the same patch
	if wantTree := strings.TrimSpace(g.Git("write-tree")); tree != wantTree {
		t.Errorf("tree %q, want %q", tree, wantTree)
	}

	out.Reset()
	env.Stdin = strings.NewReader(diff)
	err = Apply(env, repo, ApplyOptions{Patches: []string{"-", "-"}, Strip: -1, MaxSize: 1 << 20}, MoveUnchecked)
	if err == nil || !strings.Contains(err.Error(), "stdin: no diff found") || out.Len() != 0 {
		t.Errorf("a second -: %v, printed %q", err, out.String())
	}
}
