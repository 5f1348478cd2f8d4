package patch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tf is a test file: content and mode (0 = 100644).
type tf struct {
	data string
	mode Mode
}

// build writes files into st and returns the root tree.
func build(t testing.TB, st Store, files map[string]tf) OID {
	t.Helper()
	tr := newTree(st, OID{})
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := files[p]
		m := f.mode
		if m == 0 {
			m = ModeFile
		}
		if err := tr.put(p, &entry{mode: m, data: []byte(f.data), hasData: true}); err != nil {
			t.Fatal(err)
		}
	}
	id, err := tr.write()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// files reads a tree back into a map.
func files(t testing.TB, st Store, root OID) map[string]tf {
	t.Helper()
	out := map[string]tf{}
	if root.IsZero() {
		return out
	}
	var walk func(OID, string)
	walk = func(id OID, prefix string) {
		es, err := st.ReadTree(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Mode == ModeDir {
				walk(e.ID, prefix+e.Name+"/")
				continue
			}
			d, err := st.ReadBlob(e.ID)
			if err != nil {
				t.Fatal(err)
			}
			m := e.Mode
			if m == ModeFile {
				m = 0
			}
			out[prefix+e.Name] = tf{data: string(d), mode: m}
		}
	}
	walk(root, "")
	return out
}

func mustParse(t testing.TB, text string) *Patch {
	t.Helper()
	ps, err := Parse([]byte(text), ParseOptions{Strip: DefaultStrip})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(ps) != 1 {
		t.Fatalf("parse: %d patches", len(ps))
	}
	return ps[0]
}

func (m *MemStore) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs) + len(m.trees)
}

// gitRepo makes a worktree repository holding files, committed.
func gitRepo(t testing.TB, files map[string]tf) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found")
	}
	dir := t.TempDir()
	run(t, dir, nil, "init", "-q")
	for p, f := range files {
		fp := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(fp), 0o755)
		if err := os.WriteFile(fp, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.mode == ModeExec {
			os.Chmod(fp, 0o755)
		}
	}
	run(t, dir, nil, "add", "-A")
	run(t, dir, nil, "commit", "-q", "--allow-empty", "-m", "base")
	return dir
}

func run(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := runErr(dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}
