package httpapi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
)

// gitKit is the git store over a fresh bare repository; a tamper is a commit
// that edits the version's file on the store's branch, made with the git
// binary as a person with push access would.
func gitKit() storeKit {
	return storeKit{
		open: func(t testing.TB) action.Store {
			r := gittest.NewBare(t)
			s, err := actiongit.Open(r.Dir, actiongit.Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		tamper: func(t testing.TB, s action.Store, name, version string, edit func([]byte) []byte) {
			gs := s.(*actiongit.Store)
			dir := gs.Repo().Path()
			git := func(env []string, args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				cmd.Env = append(gittest.Env(), env...)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return strings.TrimSpace(string(out))
			}
			file := actiongit.FilePath(name, version)
			branch := gs.Branch()
			doc := git(nil, "cat-file", "blob", branch+":"+file)
			tmp := filepath.Join(t.TempDir(), "doc.json")
			if err := os.WriteFile(tmp, edit([]byte(doc)), 0o644); err != nil {
				t.Fatal(err)
			}
			blob := git(nil, "hash-object", "-w", tmp)
			idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
			git(idx, "read-tree", branch)
			git(idx, "update-index", "--cacheinfo", "100644,"+blob+","+file)
			tree := git(idx, "write-tree")
			commit := git(nil, "commit-tree", tree, "-p", branch, "-m", "edit "+file+" by hand")
			git(nil, "update-ref", branch, commit)
		},
	}
}

func TestAPI_GitStore(t *testing.T) { runSuite(t, gitKit()) }

// The same with the handler watching the branch (inotify on the ref): reads
// come from memory until the branch moves, and the hand-made commit of the
// tamper test shows once its event arrives.
func TestAPI_GitStore_Watching(t *testing.T) {
	kit := gitKit()
	kit.watch = true
	runSuite(t, kit)
}
