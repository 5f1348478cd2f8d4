package gitremote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

	"github.com/dome-registry/dome/pkg/gitstore"
)

// Options configures Open.
type Options struct {
	CacheDir string    // root of dome's clone cache, e.g. $XDG_CACHE_HOME/dome
	Progress io.Writer // clone and fetch progress (nil: silent)
}

// ErrUnreachable wraps failures to reach a remote.
var ErrUnreachable = errors.New("remote unreachable")

func remoteError(err error) error {
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
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

// localLoader opens the repository at a file:// path the way gitstore.Open
// does (worktree, linked worktree or bare).
type localLoader struct{}

func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	r, err := gitstore.Open(ep.Path)
	if err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return storage(r), nil
}

// storage is go-git's view of r's git directory (and common directory, for
// a linked worktree).
func storage(r *gitstore.Repo) *filesystem.Storage {
	var fs billy.Filesystem = osfs.New(r.GitDir())
	if r.CommonDir() != r.GitDir() {
		fs = dotgit.NewRepositoryFilesystem(osfs.New(r.GitDir()), osfs.New(r.CommonDir()))
	}
	return filesystem.NewStorage(fs, cache.NewObjectLRUDefault())
}

// Open opens the cached bare mirror of rawURL, cloning it first when the
// cache has none. It does not fetch an existing cache: call the
// repository's Fetch when a revision is missing or may have moved. Clones
// are made in a temporary directory and renamed into place, and clones and
// fetches of one URL are serialized across processes with a lock file, so
// concurrent dome processes never see or leave a half-written cache.
func Open(ctx context.Context, rawURL string, opts Options) (*gitstore.Repo, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("open remote: no cache directory")
	}
	installFileTransport()
	dir := gitstore.CachePath(opts.CacheDir, rawURL)
	f := &fetcher{dir: dir, url: rawURL, lockFile: dir + ".lock", progress: opts.Progress}
	if r, err := gitstore.OpenMirror(dir, gitstore.Mirror{URL: rawURL, Fetcher: f}); err == nil {
		return r, nil
	}
	unlock, err := lockPath(f.lockFile)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r, err := gitstore.OpenMirror(dir, gitstore.Mirror{URL: rawURL, Fetcher: f}); err == nil { // cloned while we waited
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
	r, err := gitstore.OpenMirror(dir, gitstore.Mirror{URL: rawURL, Fetcher: f, Fetched: true})
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", rawURL, err)
	}
	return r, nil
}

// fetcher fetches every ref of a remote into its cached mirror.
type fetcher struct {
	dir, url, lockFile string
	progress           io.Writer
}

func (f *fetcher) Fetch(ctx context.Context) error {
	unlock, err := lockPath(f.lockFile)
	if err != nil {
		return err
	}
	defer unlock()
	repo, err := git.PlainOpen(f.dir)
	if err != nil {
		return fmt.Errorf("fetch %s: open the cache %s: %w", f.url, f.dir, err)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{"+refs/*:refs/*"},
		Progress:   f.progress,
		Tags:       git.AllTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s: %w", f.url, remoteError(err))
	}
	return nil
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

// PushRef pushes one ref of r (and nothing else) to remote, which is a
// remote name from the repository's config or a URL. It never forces: a ref
// that exists on the remote with another value is an error.
func PushRef(ctx context.Context, r *gitstore.Repo, remote, ref string) error {
	installFileTransport()
	spec := config.RefSpec(ref + ":" + ref)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	st := storage(r)
	defer st.Close()
	var rem *git.Remote
	if gitstore.IsURL(remote) {
		rem = git.NewRemote(st, &config.RemoteConfig{Name: "dome-push", URLs: []string{remote}})
	} else {
		repo, err := git.Open(st, nil)
		if err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		if rem, err = repo.Remote(remote); err != nil {
			return fmt.Errorf("push %s: remote %q: %w", ref, remote, err)
		}
	}
	err := rem.PushContext(ctx, &git.PushOptions{RemoteName: rem.Config().Name, RefSpecs: []config.RefSpec{spec}})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", ref, remote, err)
	}
	return nil
}
