package gitstore_test

import (
	"fmt"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// benchRepo is a repository shaped like a small registry: a few dozen
// commits, 200 release tags (annotated, packed by git pack-refs) and a few
// loose ones, a branch, and files below tools/.
type benchRepo struct {
	dir                   string
	head, annotated, tree gitstore.Hash
}

func newBenchRepo(b *testing.B) benchRepo {
	b.Helper()
	g := gittest.New(b)
	for i := 0; i < 40; i++ {
		g.Write(map[string]string{
			fmt.Sprintf("tools/t%02d/tool.json", i): fmt.Sprintf(`{"id":"t%02d"}`+"\n", i),
			"README.md":                             fmt.Sprintf("revision %d\n", i),
		})
		g.Commit(fmt.Sprintf("commit %d", i))
		for j := 0; j < 5; j++ {
			g.Git("tag", "-a", "-m", "release", fmt.Sprintf("registry/t%02d/v1.%d.0", i, j))
		}
	}
	g.Git("pack-refs", "--all")
	g.Git("gc", "-q")
	g.Git("tag", "-a", "-m", "loose release", "registry/loose/v1.0.0")
	g.Git("branch", "feature")
	h := func(s string) gitstore.Hash {
		id, ok := gitstore.ParseHash(s)
		if !ok {
			b.Fatalf("not an id: %q", s)
		}
		return id
	}
	return benchRepo{
		dir:       g.Dir,
		head:      h(g.Git("rev-parse", "HEAD")),
		annotated: h(g.Git("rev-parse", "registry/t10/v1.2.0")),
		tree:      h(g.Git("rev-parse", "HEAD^{tree}")),
	}
}

// BenchmarkReadPath measures what a command that reads the registry pays:
// opening the repository, refs (loose, packed, listed), decoding commits and
// tags, and a cold open-resolve-read as `dome registry cat` does it.
func BenchmarkReadPath(b *testing.B) {
	br := newBenchRepo(b)
	open := func(b *testing.B) *gitstore.Repo {
		r, err := gitstore.Open(br.dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}
	b.Run("open", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r, err := gitstore.Open(br.dir)
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("head", func(b *testing.B) {
		r := open(b)
		for i := 0; i < b.N; i++ {
			if _, _, err := r.Head(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, ref := range []string{"refs/heads/main", "refs/tags/registry/loose/v1.0.0", "refs/tags/registry/t10/v1.2.0"} {
		b.Run("ref/"+ref, func(b *testing.B) {
			r := open(b)
			for i := 0; i < b.N; i++ {
				if _, err := r.Ref(ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("refs/tags", func(b *testing.B) {
		r := open(b)
		for i := 0; i < b.N; i++ {
			refs, err := r.Refs("refs/tags/")
			if err != nil || len(refs) != 201 {
				b.Fatalf("%d refs, %v", len(refs), err)
			}
		}
	})
	b.Run("commit", func(b *testing.B) {
		r := open(b)
		for i := 0; i < b.N; i++ {
			if _, err := r.Commit(br.head); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tag", func(b *testing.B) {
		r := open(b)
		for i := 0; i < b.N; i++ {
			if _, err := r.Tag(br.annotated); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resolve/tag", func(b *testing.B) {
		r := open(b)
		for i := 0; i < b.N; i++ {
			if _, err := r.ResolveRevision("registry/t10/v1.2.0"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold_cat", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r, err := gitstore.Open(br.dir)
			if err != nil {
				b.Fatal(err)
			}
			c, err := r.ResolveCommit("registry/t10/v1.2.0")
			if err != nil {
				b.Fatal(err)
			}
			tree, err := r.CommitTree(c)
			if err != nil {
				b.Fatal(err)
			}
			e, err := r.EntryAt(tree, "tools/t10/tool.json")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadBlob(e.Hash); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}
