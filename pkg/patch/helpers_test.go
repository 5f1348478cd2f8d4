package patch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/patch/charsets"
)

// The tests read mail as dome-full does: in every charset.
func init() { UseCharsets(charsets.Decode) }

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
	r := gittest.New(t)
	for p, f := range files {
		r.Write(map[string]string{p: f.data})
		if f.mode == ModeExec {
			os.Chmod(filepath.Join(r.Dir, p), 0o755)
		}
	}
	r.Commit("base")
	return r.Dir
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
	cmd.Env = gittest.Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}
