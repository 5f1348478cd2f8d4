package gitstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/dome-registry/dome/internal/lazyre"
)

var scpLike = lazyre.New(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$`)

// IsURL reports whether s names a remote repository (file://, https://,
// http://, ssh://, git:// or scp-like user@host:path) rather than a path.
func IsURL(s string) bool {
	if scpLike().MatchString(s) {
		return true
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "file", "https", "http", "ssh", "git":
		return true
	}
	return false
}

// RemoteOptions configures OpenRemote.
type RemoteOptions struct {
	CacheDir string    // root of dome's clone cache, e.g. $XDG_CACHE_HOME/dome
	Progress io.Writer // fetch progress (nil: silent)
}

// fileTransportOnce installs an in-process server for file:// URLs. go-git's
// default file transport runs the git-upload-pack binary; dome must never
// run git, so file:// is served by go-git itself. This is the one piece of
// process-wide state in dome (go-git keeps its transports in a package map);
// it is set once and never changes afterwards.
var fileTransportOnce sync.Once

func installFileTransport() {
	fileTransportOnce.Do(func() {
		client.InstallProtocol("file", server.NewServer(localLoader{}))
	})
}

// localLoader opens the repository at a file:// path the way Open does
// (worktree, linked worktree or bare).
type localLoader struct{}

func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	gitDir, _, err := discover(ep.Path)
	if err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	var fs billy.Filesystem = osfs.New(gitDir)
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		fs = dotgit.NewRepositoryFilesystem(osfs.New(gitDir), osfs.New(c))
	}
	return filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), nil
}

// CachePath returns where OpenRemote keeps the bare clone of rawURL.
func CachePath(cacheDir, rawURL string) string {
	sum := sha256.Sum256([]byte(rawURL))
	return filepath.Join(cacheDir, "repos", hex.EncodeToString(sum[:12])+".git")
}

// OpenRemote opens the cached bare mirror of rawURL, cloning it first when
// the cache has none. It does not fetch an existing cache: call Fetch when a
// revision is missing or may have moved. Clones are made in a temporary
// directory and renamed into place, and clones and fetches of one URL are
// serialized across processes with a lock file, so concurrent dome
// processes never see or leave a half-written cache.
func OpenRemote(ctx context.Context, rawURL string, opts RemoteOptions) (*Repo, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("open remote: no cache directory")
	}
	installFileTransport()
	dir := CachePath(opts.CacheDir, rawURL)
	if r, err := openCached(dir, rawURL); err == nil {
		return r, nil
	}
	unlock, err := lockPath(dir + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r, err := openCached(dir, rawURL); err == nil { // cloned while we waited
		return r, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".clone-*")
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, err)
	}
	defer os.RemoveAll(tmp)
	_, err = git.PlainCloneContext(ctx, tmp, true, &git.CloneOptions{
		URL:      rawURL,
		Mirror:   true,
		Progress: opts.Progress,
		Tags:     git.AllTags,
	})
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, remoteError(err))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, err)
	}
	r, err := openCached(dir, rawURL)
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, err)
	}
	r.fetched = true
	r.progress = opts.Progress
	return r, nil
}

func openCached(dir, rawURL string) (*Repo, error) {
	if !isBareDir(dir) {
		return nil, ErrNotRepository
	}
	r, err := openGitDir(dir, "")
	if err != nil {
		return nil, err
	}
	r.remoteURL = rawURL
	r.lockFile = dir + ".lock"
	return r, nil
}

// Fetched reports whether this process already cloned or fetched the remote.
func (r *Repo) Fetched() bool { return r.fetched }

// Fetch updates a remote's cached mirror with every ref of the remote. It is
// a no-op for a local repository and after the first fetch of a process.
func (r *Repo) Fetch(ctx context.Context) error {
	if r.remoteURL == "" || r.fetched {
		return nil
	}
	unlock, err := lockPath(r.lockFile)
	if err != nil {
		return err
	}
	defer unlock()
	err = r.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{"+refs/*:refs/*"},
		Progress:   r.progress,
		Tags:       git.AllTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s: %w", r.remoteURL, remoteError(err))
	}
	r.fetched = true
	r.treeMu.Lock()
	r.treeCache = map[Hash][]TreeEntry{}
	r.treeMu.Unlock()
	return nil
}

// ErrUnreachable wraps failures to reach a remote.
var ErrUnreachable = errors.New("remote unreachable")

func remoteError(err error) error {
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// lockPath takes an exclusive advisory lock (flock) on path, creating it.
func lockPath(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
