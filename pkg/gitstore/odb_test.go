package gitstore_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// TestODB_MatchesGit reads every object of a repository whose history is
// packed with deltas (git gc --aggressive) plus a few loose objects, and
// compares type and content with git cat-file --batch.
func TestODB_MatchesGit(t *testing.T) {
	g := gittest.New(t)
	rng := rand.New(rand.NewPCG(1, 1))
	var lines []string
	for i := 0; i < 300; i++ {
		lines = append(lines, fmt.Sprintf("line %d %x", i, rng.Uint64()))
	}
	for c := 0; c < 40; c++ {
		// small edits of big files make deltas
		lines[rng.IntN(len(lines))] = fmt.Sprintf("edited %d %x", c, rng.Uint64())
		files := map[string]string{"big.txt": strings.Join(lines, "\n") + "\n", fmt.Sprintf("dir%d/f.txt", c%5): strconv.Itoa(c)}
		g.Write(files)
		g.Commit(fmt.Sprintf("commit %d", c))
		if c == 20 {
			g.Git("tag", "-a", "-m", "mid", "mid")
		}
	}
	g.Git("repack", "-adfq")
	g.Write(map[string]string{"loose.txt": "loose after gc\n"})
	g.Commit("loose")

	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(g.Git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	if len(ids) < 100 {
		t.Fatalf("only %d objects", len(ids))
	}
	cmd := exec.Command("git", "-C", g.Dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		id, typ string
		data    []byte
	}
	var objects []object
	br := bufio.NewReader(bytes.NewReader(out))
	for range ids {
		header, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(header) // <id> <type> <size>
		size, _ := strconv.Atoi(f[2])
		want := make([]byte, size+1)
		if _, err := io.ReadFull(br, want); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, object{f[0], f[1], want[:size]})
	}
	check := func(t *testing.T, r *gitstore.Repo, o object) {
		t.Helper()
		id, want := o.id, o.data
		h, _ := gitstore.ParseHash(id)
		typ, err := r.ObjectType(h)
		if err != nil || string(typ) != o.typ {
			t.Fatalf("%s: type %q, %v; git says %s", id, typ, err, o.typ)
		}
		var got []byte
		switch typ {
		case gitstore.TypeBlob:
			got, err = r.ReadBlob(h)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: blob differs (%d vs %d bytes): %v", id, len(got), len(want), err)
			}
		case gitstore.TypeTree:
			es, err := r.ReadTree(h)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, e := range es {
				fmt.Fprintf(&b, "%o %s\x00", uint32(e.Mode), e.Name)
				b.Write(e.Hash[:])
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Fatalf("%s: tree differs", id)
			}
		case gitstore.TypeCommit:
			c, err := r.Commit(h)
			if err != nil || !strings.Contains(string(want), "tree "+c.Tree.String()) {
				t.Fatalf("%s: commit %+v, %v", id, c, err)
			}
		case gitstore.TypeTag:
			tg, err := r.Tag(h)
			if err != nil || !strings.Contains(string(want), "object "+tg.Target.String()) {
				t.Fatalf("%s: tag %+v, %v", id, tg, err)
			}
		}
	}
	// One repository reading every object (its cache fills as it goes), the
	// same keeping whole delta chains, and a fresh repository per object (a
	// cold walk of each object's whole chain, as one "dome registry cat").
	for _, mode := range []string{"shared", "keep-chains", "cold"} {
		t.Run(mode, func(t *testing.T) {
			r := r
			if mode != "shared" {
				if r, err = gitstore.Open(g.Dir); err != nil {
					t.Fatal(err)
				}
			}
			if mode == "keep-chains" {
				r.KeepDeltaChains()
			}
			for _, o := range objects {
				if mode == "cold" {
					if r, err = gitstore.Open(g.Dir); err != nil {
						t.Fatal(err)
					}
				}
				check(t, r, o)
				// A second read comes from the cache and must be the same.
				check(t, r, o)
			}
		})
	}
	deltas, deepest := 0, 0
	// the history really was deltified
	verify := g.Git("verify-pack", "-v", packPath(t, g))
	for _, l := range strings.Split(verify, "\n") {
		if f := strings.Fields(l); len(f) >= 7 && len(f[0]) == 40 {
			deltas++
			if depth, _ := strconv.Atoi(f[5]); depth > deepest {
				deepest = depth
			}
		}
	}
	if deltas == 0 || deepest < 4 {
		t.Fatalf("%d deltified objects, deepest chain %d: the test does not exercise delta chains", deltas, deepest)
	}
}

func packPath(t *testing.T, g *gittest.Repo) string {
	t.Helper()
	idx, err := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "*.idx"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("want one pack index, have %v (%v)", idx, err)
	}
	return idx[0]
}

// TestODB_LooseObjectsReadOnce: a loose commit asked for its type and a
// loose tree are read from their files once and then from the cache; a
// loose blob, read once by a command, is not kept.
func TestODB_LooseObjectsReadOnce(t *testing.T) {
	g := gittest.New(t)
	g.Write(map[string]string{"f.txt": "loose\n"})
	id, _ := gitstore.ParseHash(g.Commit("loose"))
	tree, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD^{tree}"))
	blob, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD:f.txt"))
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if typ, err := r.ObjectType(id); err != nil || typ != gitstore.TypeCommit {
		t.Fatalf("type %q, %v", typ, err)
	}
	if e, err := r.EntryAt(tree, "f.txt"); err != nil || e.Hash != blob {
		t.Fatalf("entry %+v, %v", e, err)
	}
	if typ, err := r.ObjectType(blob); err != nil || typ != gitstore.TypeBlob {
		t.Fatalf("blob type %q, %v", typ, err)
	}
	for _, h := range []gitstore.Hash{id, tree, blob} {
		s := h.String()
		g.Remove(filepath.Join(".git", "objects", s[:2], s[2:]))
	}
	if c, err := r.Commit(id); err != nil || c.Tree != tree {
		t.Fatalf("commit from the cache: %+v, %v", c, err)
	}
	if e, err := r.EntryAt(tree, "f.txt"); err != nil || e.Hash != blob {
		t.Fatalf("tree from the cache: %+v, %v", e, err)
	}
	if _, err := r.ReadBlob(blob); err == nil {
		t.Fatalf("the blob was kept")
	}
}
