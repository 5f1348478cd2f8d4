package actiongit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// DefaultBranch is the branch the store keeps actions on unless told
// otherwise. A dedicated branch, not the checked-out one: publishing commits
// without a worktree, it would leave a checked-out branch's worktree behind.
const DefaultBranch = "refs/heads/actions"

// Dir is the folder of the action files in the branch's tree:
// Dir/<name>/<version>.json.
const Dir = "registry/actions"

// DefaultMaxWait bounds how long Publish keeps retrying a ref that other
// publishers keep moving or a ref lock that stays taken.
const DefaultMaxWait = 30 * time.Second

// Options configure a Store.
type Options struct {
	// Branch is the branch to read and publish: a full ref ("refs/heads/x")
	// or a branch name ("x"). Default DefaultBranch.
	Branch string
	// Now gives commit times (default time.Now); pin it for reproducible
	// commits.
	Now func() time.Time
	// Committer names the author and committer of publish commits (default:
	// the repository's user.name and user.email, else "dome" <dome@localhost>).
	Committer gitstore.Signature
	// MaxWait bounds Publish's retries (default DefaultMaxWait).
	MaxWait time.Duration
}

// Store is the git action store. It is safe for concurrent use, and several
// Stores (in one or many processes) may publish to one repository at once.
type Store struct {
	repo   *gitstore.Repo
	owned  bool // Close closes repo
	branch string
	opts   Options

	pubMu sync.Mutex // serializes this Store's publishes (other writers race through the ref CAS)

	mu   sync.Mutex // guards snap
	snap *snapshot

	histMu sync.Mutex // guards hist
	hist   *history

	docs docCache
}

// NormalizeBranch returns the full ref name of a branch given as a name or a
// full ref, or an error for a name git would refuse.
func NormalizeBranch(b string) (string, error) {
	if b == "" {
		return DefaultBranch, nil
	}
	if !strings.HasPrefix(b, "refs/") {
		b = "refs/heads/" + b
	}
	if !strings.HasPrefix(b, "refs/heads/") {
		return "", fmt.Errorf("branch %q: want a branch name or refs/heads/<name>", b)
	}
	if err := gitstore.CheckRefName(b); err != nil {
		return "", fmt.Errorf("branch %q: %w", b, err)
	}
	return b, nil
}

// New returns a store over an open repository (the caller closes it).
func New(repo *gitstore.Repo, opts Options) (*Store, error) {
	branch, err := NormalizeBranch(opts.Branch)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Committer.Name == "" {
		name, email := repo.Identity()
		if name == "" {
			name = "dome"
		}
		if email == "" {
			email = "dome@localhost"
		}
		opts.Committer = gitstore.Signature{Name: name, Email: email}
	}
	return &Store{repo: repo, branch: branch, opts: opts, hist: newHistory(), docs: docCache{max: 64 << 20}}, nil
}

// Open opens the repository at path (a worktree or a bare repository) and
// returns a store over it; Close closes the repository.
func Open(path string, opts Options) (*Store, error) {
	repo, err := gitstore.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := New(repo, opts)
	if err != nil {
		repo.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Branch returns the full ref name of the store's branch.
func (s *Store) Branch() string { return s.branch }

// Repo returns the repository.
func (s *Store) Repo() *gitstore.Repo { return s.repo }

// Close releases the repository if the store opened it.
func (s *Store) Close() error {
	if s.owned {
		return s.repo.Close()
	}
	return nil
}

// Ready reports whether the repository and the branch (when it exists) can
// be read.
func (s *Store) Ready(ctx context.Context) error {
	head, err := s.Head()
	if err != nil {
		return err
	}
	if head.IsZero() {
		return nil
	}
	_, err = s.repo.CommitTree(head)
	return err
}

// Head returns the commit at the tip of the branch (ZeroHash when the branch
// does not exist yet: an empty registry).
func (s *Store) Head() (gitstore.Hash, error) {
	h, err := s.repo.Ref(s.branch)
	if errors.Is(err, gitstore.ErrNotFound) {
		return gitstore.ZeroHash, nil
	}
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("read branch %s: %w", s.branch, err)
	}
	return h, nil
}

// FilePath returns the path of name@version in the branch's tree.
func FilePath(name, version string) string { return Dir + "/" + name + "/" + version + ".json" }

// Publish stores rec (see action.Store).
func (s *Store) Publish(ctx context.Context, rec action.Record) (action.PublishResult, error) {
	if err := action.CheckName(rec.Name); err != nil {
		return action.PublishResult{}, err
	}
	if err := action.CheckVersion(rec.Version); err != nil {
		return action.PublishResult{}, err
	}
	d, err := action.ParseDocument(rec.Document)
	switch {
	case err != nil:
		return action.PublishResult{}, err
	case d.Name != rec.Name || d.Version != rec.Version:
		return action.PublishResult{}, fmt.Errorf("%w: the document is %s@%s, the record says %s@%s", action.ErrInvalid, d.Name, d.Version, rec.Name, rec.Version)
	case !bytes.Equal(d.Canonical, rec.Document):
		return action.PublishResult{}, fmt.Errorf("%w: %s@%s: the document is not in canonical form (use action.Prepare)", action.ErrInvalid, rec.Name, rec.Version)
	}
	rec.Hash = d.Hash
	rec.Document = bytes.Clone(rec.Document)
	file := FilePath(rec.Name, rec.Version)

	var res action.PublishResult
	err = s.retry(ctx, fmt.Sprintf("publish %s@%s", rec.Name, rec.Version), func() (bool, error) {
		r, done, err := s.tryPublish(ctx, rec, file)
		res = r
		return done, err
	})
	if err != nil {
		return action.PublishResult{}, err
	}
	return res, nil
}

// retry runs attempt until it gives a final answer (done, or an error that
// is not a lost race), serialized with this Store's other writes. A lost race
// (another writer moved the branch or holds its lock) is retried with
// jittered backoff for up to MaxWait.
func (s *Store) retry(ctx context.Context, what string, attempt func() (done bool, err error)) error {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	deadline := time.Now().Add(s.opts.MaxWait)
	var lastErr error
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := attempt()
		if done || err == nil {
			return err
		}
		if !isLostRace(err) {
			return err
		}
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: branch %s kept moving or stayed locked for %s (%d attempts); if no publisher is running, remove a stale %s.lock: %w",
				what, s.branch, s.opts.MaxWait, n+1, s.branch, lastErr)
		}
		// Someone else moved the branch (or holds its lock): back off a
		// little, with jitter so that racing writers spread out.
		wait := time.Duration(rand.Int64N(int64(time.Millisecond)*int64(min(n+1, 20)))) + 100*time.Microsecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// commit writes a commit of newTree (tree with one file changed: blob, or
// ZeroHash for a deletion) on head, makes the new objects durable and moves
// the branch from head to it by compare-and-swap. A lost race comes back as
// gitstore.ErrRefChanged or ErrRefExists.
func (s *Store) commit(head, tree, newTree, blob gitstore.Hash, msg string) (gitstore.Hash, error) {
	sig := gitstore.Signature{Name: s.opts.Committer.Name, Email: s.opts.Committer.Email, When: s.opts.Now()}
	var parents []gitstore.Hash
	if !head.IsZero() {
		parents = []gitstore.Hash{head}
	}
	commit, err := s.repo.WriteCommit(gitstore.CommitSpec{Tree: newTree, Parents: parents, Author: sig, Committer: sig, Message: msg})
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if err := s.syncNewObjects(blob, tree, newTree, commit); err != nil {
		return gitstore.ZeroHash, err
	}
	if err := s.repo.UpdateRef(s.branch, commit, head); err != nil {
		return gitstore.ZeroHash, err
	}
	return commit, nil
}

// tryPublish makes one attempt at the current head. done reports a final
// answer (stored, idempotent, conflict); a non-done error is a lost race.
func (s *Store) tryPublish(ctx context.Context, rec action.Record, file string) (res action.PublishResult, done bool, err error) {
	head, err := s.Head()
	if err != nil {
		return res, true, err
	}
	var tree gitstore.Hash
	if !head.IsZero() {
		if tree, err = s.repo.CommitTree(head); err != nil {
			return res, true, fmt.Errorf("branch %s at %s: %w", s.branch, head.Short(), err)
		}
		e, err := s.repo.EntryAt(tree, file)
		switch {
		case err == nil:
			old, err := s.record(ctx, head, rec.Name, rec.Version, e.Hash)
			if err != nil {
				return res, true, err
			}
			if old.Hash != rec.Hash {
				return res, true, fmt.Errorf("%s@%s is already published (%s, %s, commit %s) with other content (%s): %w",
					rec.Name, rec.Version, file, old.Hash, short(old.Revision), rec.Hash, action.ErrImmutableConflict)
			}
			if old.Deprecation, err = s.deprecationAt(tree, rec.Name, rec.Version); err != nil {
				return res, true, err
			}
			return action.PublishResult{Created: false, Record: old}, true, nil
		case !errors.Is(err, gitstore.ErrNotFound):
			return res, true, fmt.Errorf("read %s at %s: %w", file, head.Short(), err)
		}
	}
	if err := s.checkNotCheckedOut(); err != nil {
		return res, true, err
	}
	blob, err := s.repo.WriteBlob(rec.Document)
	if err != nil {
		return res, true, err
	}
	newTree, err := s.repo.ApplyChanges(tree, []gitstore.Change{{Path: file, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return res, true, fmt.Errorf("publish %s@%s: %w", rec.Name, rec.Version, err)
	}
	d, _ := action.ParseDocument(rec.Document)
	kid := "-"
	if d != nil && d.Signature != nil {
		kid = d.Signature.KID
	}
	msg := fmt.Sprintf("publish %s@%s\n\nhash: %s\nkid: %s\n", rec.Name, rec.Version, rec.Hash, kid)
	commit, err := s.commit(head, tree, newTree, blob, msg)
	if err != nil {
		return res, !isLostRace(err), err
	}
	rec.Revision = commit.String()
	desc := ""
	if d != nil {
		desc = d.Description
	}
	s.docs.put(blob, cachedDoc{doc: rec.Document, hash: rec.Hash, description: desc})
	return action.PublishResult{Created: true, Record: cloneRecord(rec)}, true, nil
}

// isLostRace reports an error of a ref update that another writer won.
func isLostRace(err error) bool {
	return errors.Is(err, gitstore.ErrRefChanged) || errors.Is(err, gitstore.ErrRefExists)
}

// syncNewObjects fsyncs the blob (unless ZeroHash), the commit and the trees
// on the path to the changed file (the only trees a write makes).
func (s *Store) syncNewObjects(blob, oldTree, newTree, commit gitstore.Hash) error {
	ids := []gitstore.Hash{newTree, commit}
	if !blob.IsZero() {
		ids = append(ids, blob)
	}
	parts := strings.Split(Dir, "/")
	cur := newTree
	for _, p := range parts {
		e, err := s.repo.EntryAt(cur, p)
		if err != nil {
			break
		}
		ids = append(ids, e.Hash)
		cur = e.Hash
	}
	es, err := s.repo.ReadTree(cur)
	if err == nil {
		for _, e := range es {
			if e.Mode.IsDir() {
				ids = append(ids, e.Hash) // cheap: a missing loose file is skipped
			}
		}
	}
	return s.repo.SyncObjects(ids...)
}

// ErrCheckedOut is returned (wrapped) by Publish for a branch that is
// checked out in a worktree of the repository (the main one or a linked one).
var ErrCheckedOut = errors.New("the branch is checked out in a worktree")

// checkNotCheckedOut refuses to publish onto a branch checked out in a
// worktree of the repository: the commit would leave that worktree and its
// index behind (git refuses such pushes too, receive.denyCurrentBranch).
func (s *Store) checkNotCheckedOut() error {
	wts, err := s.repo.CheckedOut(s.branch)
	if err != nil || len(wts) == 0 {
		return nil
	}
	return fmt.Errorf("branch %s is checked out in %s; publishing there would leave the worktree behind: publish to a branch that is not checked out (the default is %s) or to a bare repository: %w", s.branch, wts[0].Dir, DefaultBranch, ErrCheckedOut)
}

func short(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}

func cloneRecord(r action.Record) action.Record {
	r.Document = bytes.Clone(r.Document)
	return r
}

// Get returns name@version at the branch head (see action.Store). Its
// Revision is the commit that added the version.
func (s *Store) Get(ctx context.Context, name, version string) (action.Record, error) {
	snap, err := s.snapshot()
	if err != nil {
		return action.Record{}, err
	}
	vs, ok := snap.actions[name]
	if !ok {
		return action.Record{}, fmt.Errorf("action %q: %w", name, action.ErrActionNotFound)
	}
	blob, ok := vs[version]
	if !ok {
		return action.Record{}, fmt.Errorf("action %q has no version %q (versions: %s): %w", name, version, strings.Join(snap.versions(name), ", "), action.ErrVersionNotFound)
	}
	rec, err := s.record(ctx, snap.head, name, version, blob)
	if err != nil {
		return rec, err
	}
	if reason, ok := snap.deprecated[name][version]; ok {
		rec.Deprecation = &action.Deprecation{Reason: reason}
	}
	return rec, nil
}

// record reads name@version from its blob and finds the commit that added
// it in the history of head.
func (s *Store) record(_ context.Context, head gitstore.Hash, name, version string, blob gitstore.Hash) (action.Record, error) {
	cd, err := s.doc(blob)
	if err != nil {
		return action.Record{}, err
	}
	rev, err := s.addedIn(head, FilePath(name, version), blob)
	if err != nil {
		return action.Record{}, err
	}
	return action.Record{Name: name, Version: version, Document: bytes.Clone(cd.doc), Hash: cd.hash, Revision: rev.String()}, nil
}

// List returns every action at the branch head (see action.Store).
func (s *Store) List(ctx context.Context) ([]action.Summary, error) {
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	snap.listOnce.Do(func() { snap.list, snap.listErr = s.summaries(snap) })
	if snap.listErr != nil {
		return nil, snap.listErr
	}
	out := make([]action.Summary, len(snap.list))
	for i, sum := range snap.list {
		sum.Versions = slices.Clone(sum.Versions)
		sum.Deprecated = maps.Clone(sum.Deprecated)
		out[i] = sum
	}
	return out, nil
}

func (s *Store) summaries(snap *snapshot) ([]action.Summary, error) {
	out := make([]action.Summary, 0, len(snap.actions))
	for _, name := range snap.names {
		sum := action.Summary{Name: name, Versions: snap.versions(name)}
		for v, reason := range snap.deprecated[name] {
			if _, published := snap.actions[name][v]; published {
				if sum.Deprecated == nil {
					sum.Deprecated = map[string]string{}
				}
				sum.Deprecated[v] = reason
			}
		}
		sum.LatestVersion = action.LatestVersion(sum.Versions, sum.Deprecated)
		if sum.LatestVersion != "" {
			cd, err := s.doc(snap.actions[name][sum.LatestVersion])
			if err != nil {
				return nil, err
			}
			sum.Description = cd.description
		}
		out = append(out, sum)
	}
	return out, nil
}

// snapshot is what the store knows about one head commit.
type snapshot struct {
	head       gitstore.Hash
	actions    map[string]map[string]gitstore.Hash // name -> version -> blob
	names      []string                            // sorted
	deprecated map[string]map[string]string        // name -> version -> reason
	// badDeps: actions whose deprecations file does not parse (edited by
	// hand). Reads go on without those deprecations; Audit reports the file
	// and Deprecate refuses until it is fixed.
	badDeps map[string]error

	listOnce sync.Once
	list     []action.Summary
	listErr  error
}

func (sn *snapshot) versions(name string) []string {
	vs := make([]string, 0, len(sn.actions[name]))
	for v := range sn.actions[name] {
		vs = append(vs, v)
	}
	action.SortVersions(vs)
	return vs
}

// snapshot returns the index of the branch head, building it when the head
// moved since the last call.
func (s *Store) snapshot() (*snapshot, error) {
	head, err := s.Head()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.snap != nil && s.snap.head == head {
		sn := s.snap
		s.mu.Unlock()
		return sn, nil
	}
	s.mu.Unlock()
	sn, err := s.buildSnapshot(head)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.snap = sn
	s.mu.Unlock()
	return sn, nil
}

func (s *Store) buildSnapshot(head gitstore.Hash) (*snapshot, error) {
	sn := &snapshot{head: head, actions: map[string]map[string]gitstore.Hash{}}
	if head.IsZero() {
		return sn, nil
	}
	tree, err := s.repo.CommitTree(head)
	if err != nil {
		return nil, fmt.Errorf("branch %s at %s: %w", s.branch, head.Short(), err)
	}
	files, err := s.actionFiles(tree)
	if err != nil {
		return nil, fmt.Errorf("branch %s at %s: %w", s.branch, head.Short(), err)
	}
	var deps []actionFile
	for _, f := range files {
		if f.version == "" {
			deps = append(deps, f)
			continue
		}
		if sn.actions[f.name] == nil {
			sn.actions[f.name] = map[string]gitstore.Hash{}
			sn.names = append(sn.names, f.name)
		}
		sn.actions[f.name][f.version] = f.blob
	}
	slices.Sort(sn.names)
	for _, f := range deps {
		m, err := s.readDeprecations(f.blob, f.name)
		if err != nil {
			if sn.badDeps == nil {
				sn.badDeps = map[string]error{}
			}
			sn.badDeps[f.name] = err
			continue
		}
		if len(m) > 0 {
			if sn.deprecated == nil {
				sn.deprecated = map[string]map[string]string{}
			}
			sn.deprecated[f.name] = m
		}
	}
	return sn, nil
}

type actionFile struct {
	name, version string // version "": the action's DeprecationsFile
	blob          gitstore.Hash
}

// actionFiles lists Dir/<name>/<version>.json and Dir/<name>/deprecations.json
// in a commit tree. Entries that do not follow the layout (a README, a file
// with an invalid name or version, a nested folder) are not actions and are
// left out.
func (s *Store) actionFiles(tree gitstore.Hash) ([]actionFile, error) {
	dir, err := s.repo.EntryAt(tree, Dir)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !dir.Mode.IsDir() {
		return nil, nil
	}
	return s.actionFilesIn(dir.Hash)
}

func (s *Store) actionFilesIn(dir gitstore.Hash) ([]actionFile, error) {
	names, err := s.repo.ReadTree(dir)
	if err != nil {
		return nil, err
	}
	var out []actionFile
	for _, n := range names {
		if !n.Mode.IsDir() || action.CheckName(n.Name) != nil {
			continue
		}
		files, err := s.repo.ReadTree(n.Hash)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if v, ok := versionOf(f); ok {
				out = append(out, actionFile{name: n.Name, version: v, blob: f.Hash})
			} else if f.Name == DeprecationsFile && f.Mode.IsRegular() {
				out = append(out, actionFile{name: n.Name, blob: f.Hash})
			}
		}
	}
	return out, nil
}

// versionOf returns the version of a "<version>.json" tree entry.
func versionOf(e gitstore.TreeEntry) (string, bool) {
	if !e.Mode.IsRegular() || path.Ext(e.Name) != ".json" {
		return "", false
	}
	v := strings.TrimSuffix(e.Name, ".json")
	return v, action.CheckVersion(v) == nil
}

// cachedDoc is a stored document with what reads need from it.
type cachedDoc struct {
	doc         []byte
	hash        string // "" when the stored bytes are not a valid document
	description string
}

// docCache keeps documents by blob id, up to max bytes (then it starts over).
type docCache struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[gitstore.Hash]cachedDoc
}

func (c *docCache) get(h gitstore.Hash) (cachedDoc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.items[h]
	return d, ok
}

func (c *docCache) put(h gitstore.Hash, d cachedDoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil || c.size+len(d.doc) > c.max {
		c.items, c.size = map[gitstore.Hash]cachedDoc{}, 0
	}
	if _, ok := c.items[h]; !ok {
		c.items[h] = d
		c.size += len(d.doc)
	}
}

// doc reads a stored document. Bytes that are no longer a valid document (a
// tampered store) are returned with an empty hash: verification then says
// why they fail.
func (s *Store) doc(blob gitstore.Hash) (cachedDoc, error) {
	if d, ok := s.docs.get(blob); ok {
		return d, nil
	}
	data, err := s.repo.ReadBlob(blob)
	if err != nil {
		return cachedDoc{}, err
	}
	cd := cachedDoc{doc: data}
	if d, err := action.ParseDocument(data); err == nil {
		cd.hash, cd.description = d.Hash, d.Description
	}
	s.docs.put(blob, cd)
	return cd, nil
}
