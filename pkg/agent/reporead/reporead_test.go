package reporead

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/schemaval"
)

type allow struct{ deny string }

func (a allow) Authorize(_ context.Context, c agent.Call) error {
	for _, p := range c.ReadPaths {
		if a.deny != "" && strings.HasPrefix(p, a.deny) {
			return &agent.DeniedError{Reason: "PATH_DENIED", Message: p}
		}
	}
	return nil
}

func (a allow) CanRead(_, p string) bool { return a.deny == "" || !strings.HasPrefix(p, a.deny) }

func executor(t *testing.T, deny string) (*agent.Executor, string) {
	t.Helper()
	gittest.Need(t)
	r := gittest.New(t)
	r.Write(map[string]string{
		"README.md":        "# hello\nsecond line mentions Tests\n",
		"docs/guide.md":    "tests are good\nno match here\n",
		"secret/token.txt": "tests hidden here\n",
		"bin/blob.dat":     "tests\x00binary",
	})
	commit := r.Commit("base")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	any := schemaval.MustCompile("any", []byte(`{"type":"object"}`))
	schemas := map[string]*schemaval.Schema{"read_file": any, "list_tree": any, "grep": any, "get_base_ref": any}
	h, ok := gitstore.ParseHash(commit)
	if !ok {
		t.Fatalf("commit %q", commit)
	}
	tools, err := Tools(Options{Repo: repo, Commit: h, RunID: "r1", Tool: "repo-read", Schemas: schemas})
	if err != nil {
		t.Fatal(err)
	}
	x, err := agent.NewExecutor(allow{deny: deny}, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return x, commit
}

func call(t *testing.T, x *agent.Executor, op, in string) map[string]any {
	t.Helper()
	res := x.ExecuteAs(context.Background(), "a", "repo-read/"+op, json.RawMessage(in))
	if !res.Success() {
		t.Fatalf("%s %s: %+v", op, in, res.Err())
	}
	var out map[string]any
	json.Unmarshal(res.Output(), &out)
	return out
}

func TestTools(t *testing.T) {
	x, commit := executor(t, "secret")
	out := call(t, x, "read_file", `{"path":"README.md","max_bytes":7}`)
	if out["content"] != "# hello" || out["truncated"] != true || out["encoding"] != "utf-8" || out["size"] != 35.0 {
		t.Fatalf("%v", out)
	}
	out = call(t, x, "read_file", `{"path":"bin/blob.dat"}`)
	if out["encoding"] != "base64" {
		t.Fatalf("%v", out)
	}
	out = call(t, x, "list_tree", `{"recursive":true}`)
	var paths []string
	for _, e := range out["entries"].([]any) {
		paths = append(paths, e.(map[string]any)["path"].(string))
	}
	if strings.Join(paths, ",") != "README.md,bin,bin/blob.dat,docs,docs/guide.md" {
		t.Fatalf("listing %v: the denied folder must not show", paths)
	}
	out = call(t, x, "grep", `{"pattern":"tests","ignore_case":true}`)
	b, _ := json.Marshal(out)
	if string(b) != `{"matches":[{"line":2,"path":"README.md","text":"second line mentions Tests"},{"line":1,"path":"docs/guide.md","text":"tests are good"}],"truncated":false}` {
		t.Fatalf("grep: %s", b)
	}
	out = call(t, x, "grep", `{"pattern":"tests","paths":["docs/**"],"max_matches":1}`)
	if len(out["matches"].([]any)) != 1 {
		t.Fatalf("%v", out)
	}
	out = call(t, x, "get_base_ref", `{}`)
	if out["base_ref"] != commit || out["run_id"] != "r1" {
		t.Fatalf("%v", out)
	}
	for op, in := range map[string]string{
		"read_file": `{"path":"secret/token.txt"}`, // denied by the grant
	} {
		if res := x.ExecuteAs(context.Background(), "a", "repo-read/"+op, json.RawMessage(in)); res.Success() || res.Err().Reason != "PATH_DENIED" {
			t.Fatalf("%s %s: %+v", op, in, res.Err())
		}
	}
	for _, in := range []string{`{"path":"../etc/passwd"}`, `{"path":"/etc/passwd"}`, `{"path":"nope.md"}`, `{"path":"docs"}`, `{"path":".git/config"}`} {
		if res := x.ExecuteAs(context.Background(), "a", "repo-read/read_file", json.RawMessage(in)); res.Success() || res.Err().Code != agent.CodeToolFailed {
			t.Fatalf("%s: %+v", in, res.Err())
		}
	}
	if res := x.ExecuteAs(context.Background(), "a", "repo-read/grep", json.RawMessage(`{"pattern":"("}`)); res.Success() {
		t.Fatal("a bad pattern")
	}
}

func TestGlobPrefix(t *testing.T) {
	for g, want := range map[string]string{"docs/**": "docs", "**/*.md": ".", "a/b/c.md": "a/b/c.md", "a/b*/c": "a", "*.go": "."} {
		if got := globPrefix(g); got != want {
			t.Errorf("globPrefix(%q) = %q, want %q", g, got, want)
		}
	}
}
