package actiongit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

var fixedNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

var gitstoreInit = gitstore.Init

func newBare(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r, err := gitstore.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	return dir
}

func open(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) action.Store { return open(t, newBare(t), Options{}) })
}

// twoStores sends alternate calls to two stores over one repository, each
// with its own gitstore.Repo: publishers race through the ref CAS, not a
// shared mutex.
type twoStores struct {
	s [2]*Store
	n atomic.Uint64
}

func (w *twoStores) pick() *Store { return w.s[w.n.Add(1)%2] }
func (w *twoStores) Publish(ctx context.Context, r action.Record) (action.PublishResult, error) {
	return w.pick().Publish(ctx, r)
}
func (w *twoStores) Get(ctx context.Context, n, v string) (action.Record, error) {
	return w.pick().Get(ctx, n, v)
}
func (w *twoStores) List(ctx context.Context) ([]action.Summary, error) { return w.pick().List(ctx) }
func (w *twoStores) Deprecate(ctx context.Context, n, v string, d *action.Deprecation) (action.Record, error) {
	return w.pick().Deprecate(ctx, n, v, d)
}
func (w *twoStores) Ready(ctx context.Context) error { return w.pick().Ready(ctx) }
func (w *twoStores) Close() error                    { return errors.Join(w.s[0].Close(), w.s[1].Close()) }

func TestConformance_RepositoryOpenedTwice(t *testing.T) {
	storetest.Run(t, func(t *testing.T) action.Store {
		dir := newBare(t)
		return &twoStores{s: [2]*Store{open(t, dir, Options{}), open(t, dir, Options{})}}
	})
}

func TestConformance_CustomBranchInWorktreeRepo(t *testing.T) {
	storetest.Run(t, func(t *testing.T) action.Store {
		r := gittest.New(t)
		r.Write(map[string]string{"README.md": "hello\n"})
		r.Commit("init")
		return open(t, r.Dir, Options{Branch: "registry/actions-v1"})
	})
}

// TestMain lets the test binary act as a publisher process for
// TestPublish_ManyProcesses.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ACTIONGIT_PUBLISHER_REPO"); dir != "" {
		os.Exit(publisherProcess(dir, os.Getenv("ACTIONGIT_PUBLISHER_ID")))
	}
	os.Exit(m.Run())
}

func publisherProcess(dir, id string) int {
	t := &testing.T{} // storetest.Signed only calls Fatal on impossible errors
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer s.Close()
	ctx := context.Background()
	if id == "burst" { // publish until killed, acknowledging each stored version
		for i := 0; ; i++ {
			v := fmt.Sprintf("1.%d.0", i)
			if _, err := s.Publish(ctx, storetest.Signed(t, "burst", v, "x")); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 6
			}
			fmt.Println(v)
		}
	}
	n, _ := strconv.Atoi(id)
	for i := range 8 {
		rec := storetest.Signed(t, fmt.Sprintf("proc-%d", n), fmt.Sprintf("1.%d.0", i), "x")
		if _, err := s.Publish(ctx, rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
	}
	_, err = s.Publish(ctx, storetest.Signed(t, "contended", "1.0.0", "process "+id))
	switch {
	case err == nil:
		fmt.Println("created")
	case errors.Is(err, action.ErrImmutableConflict):
		fmt.Println("conflict")
	default:
		fmt.Fprintln(os.Stderr, err)
		return 5
	}
	return 0
}

func TestPublish_ManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := newBare(t)
	const procs = 4
	var wg sync.WaitGroup
	outs := make([]string, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ACTIONGIT_PUBLISHER_REPO="+dir, "ACTIONGIT_PUBLISHER_ID="+strconv.Itoa(p))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			outs[p] = strings.TrimSpace(string(out))
			if err != nil {
				errs[p] = fmt.Errorf("%w: %s", err, stderr.String())
			}
		}()
	}
	wg.Wait()
	created := 0
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v", p, errs[p])
		}
		if outs[p] == "created" {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d processes created contended@1.0.0, want 1 (outputs %q)", created, outs)
	}
	s := open(t, dir, Options{})
	defer s.Close()
	l, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, sum := range l {
		total += len(sum.Versions)
	}
	if len(l) != procs+1 || total != procs*8+1 {
		t.Fatalf("after %d processes: %d actions, %d versions; want %d and %d", procs, len(l), total, procs+1, procs*8+1)
	}
	rep, err := s.Audit(context.Background(), AuditOptions{})
	if err != nil || !rep.OK() || rep.Commits != procs*8+1 {
		t.Fatalf("audit: %+v, %v", rep, err)
	}
}

// TestPublish_KilledPublisher: kill -9 a publisher in the middle of a burst:
// every acknowledged version is there and verifies, the repository is
// consistent (git fsck) and the history audits clean.
func TestPublish_KilledPublisher(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := newBare(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ACTIONGIT_PUBLISHER_REPO="+dir, "ACTIONGIT_PUBLISHER_ID=burst")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 512)
	for len(acked) < 15 {
		n, err := out.Read(tmp)
		if err != nil {
			t.Fatalf("publisher output ended after %d versions: %v", len(acked), err)
		}
		buf = append(buf, tmp[:n]...)
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			acked = append(acked, string(buf[:i]))
			buf = buf[i+1:]
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	// A kill inside the ref update leaves git's lock file behind, as it
	// would for git itself; an operator removes it.
	os.Remove(filepath.Join(dir, "refs", "heads", "actions.lock"))

	s := open(t, dir, Options{})
	defer s.Close()
	_, keys := storetest.Key(t)
	for _, v := range acked {
		rec, err := s.Get(context.Background(), "burst", v)
		if err != nil {
			t.Fatalf("acknowledged burst@%s is missing: %v", v, err)
		}
		if vr := action.VerifyRecord(rec, keys); !vr.Verified {
			t.Fatalf("burst@%s: %+v", v, vr)
		}
	}
	rep, err := s.Audit(context.Background(), AuditOptions{Keys: keys})
	if err != nil || !rep.OK() || rep.Versions < len(acked) {
		t.Fatalf("audit after the kill: %+v, %v", rep, err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		c := exec.Command("git", "--git-dir="+dir, "fsck", "--strict", "--no-dangling")
		if o, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git fsck: %v\n%s", err, o)
		}
	}
	// And publishing goes on.
	if _, err := s.Publish(context.Background(), storetest.Signed(t, "burst", "9.0.0", "x")); err != nil {
		t.Fatal(err)
	}
}

func TestPublish_RefusesCheckedOutBranch(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"README.md": "hello\n"})
	r.Commit("init")
	s := open(t, r.Dir, Options{Branch: "main"})
	defer s.Close()
	_, err := s.Publish(context.Background(), storetest.Signed(t, "files.move", "1.0.0", "x"))
	if err == nil || !strings.Contains(err.Error(), "checked out") {
		t.Fatalf("publish onto the checked-out branch: %v", err)
	}
	// The default branch works, and git itself reads what was written.
	d := open(t, r.Dir, Options{})
	defer d.Close()
	rec := storetest.Signed(t, "files.move", "1.0.0", "x")
	if _, err := d.Publish(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if got := r.Git("show", "actions:registry/actions/files.move/1.0.0.json"); got != string(rec.Document) {
		t.Fatalf("git show = %s\nwant %s", got, rec.Document)
	}
	r.Git("fsck", "--strict")
	if st := r.Git("status", "--porcelain"); st != "" {
		t.Fatalf("publishing touched the worktree: %q", st)
	}
	if log := r.Git("log", "--format=%s", "actions"); log != "publish files.move@1.0.0" {
		t.Fatalf("git log = %q", log)
	}
}

func TestGet_RevisionIsTheAddingCommit(t *testing.T) {
	s := open(t, newBare(t), Options{})
	defer s.Close()
	ctx := context.Background()
	first, err := s.Publish(ctx, storetest.Signed(t, "a", "1.0.0", "x"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Publish(ctx, storetest.Signed(t, "b", fmt.Sprintf("1.%d.0", i), "x")); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh store (no cached history) agrees.
	fresh := open(t, s.Repo().GitDir(), Options{})
	defer fresh.Close()
	for _, st := range []*Store{s, fresh} {
		got, err := st.Get(ctx, "a", "1.0.0")
		if err != nil || got.Revision != first.Record.Revision || len(got.Revision) != 40 {
			t.Fatalf("Get revision = %q, %v; want %q", got.Revision, err, first.Record.Revision)
		}
	}
}

func TestPublish_DeterministicCommits(t *testing.T) {
	var heads [2]gitstore.Hash
	for i := range heads {
		s := open(t, newBare(t), Options{Committer: gitstore.Signature{Name: "Dome Test", Email: "test@dome.invalid"}})
		for _, v := range []string{"1.0.0", "1.1.0"} {
			if _, err := s.Publish(context.Background(), storetest.Signed(t, "a", v, "x")); err != nil {
				t.Fatal(err)
			}
		}
		heads[i], _ = s.Head()
		s.Close()
	}
	if heads[0] != heads[1] || heads[0].IsZero() {
		t.Fatalf("same publishes at a pinned time gave heads %s and %s", heads[0], heads[1])
	}
}

func TestPublish_StaleLockTimesOut(t *testing.T) {
	dir := newBare(t)
	s := open(t, dir, Options{MaxWait: 50 * time.Millisecond})
	defer s.Close()
	if _, err := s.Publish(context.Background(), storetest.Signed(t, "a", "1.0.0", "x")); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "refs", "heads", "actions.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish(context.Background(), storetest.Signed(t, "a", "1.1.0", "x"))
	if err == nil || !strings.Contains(err.Error(), "stale") || !errors.Is(err, gitstore.ErrRefChanged) {
		t.Fatalf("publish with a stale lock: %v", err)
	}
	os.Remove(lock)
	if _, err := s.Publish(context.Background(), storetest.Signed(t, "a", "1.1.0", "x")); err != nil {
		t.Fatalf("after removing the lock: %v", err)
	}
}

func TestNormalizeBranch(t *testing.T) {
	for in, want := range map[string]string{"": DefaultBranch, "x": "refs/heads/x", "refs/heads/a/b": "refs/heads/a/b"} {
		if got, err := NormalizeBranch(in); err != nil || got != want {
			t.Errorf("NormalizeBranch(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"refs/tags/x", "a..b", "x.lock", "a b"} {
		if _, err := NormalizeBranch(bad); err == nil {
			t.Errorf("NormalizeBranch(%q): want an error", bad)
		}
	}
}
