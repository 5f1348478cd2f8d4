package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Repo is an open repository. It is safe for concurrent reads; writes of
// objects are safe too (objects are content-addressed); ref updates use
// git's lock files and are safe across processes.
type Repo struct {
	repo      *git.Repository
	storage   *filesystem.Storage
	gitDir    string // the repository's git directory (HEAD lives here)
	commonDir string // where refs, objects and packed-refs live (differs for linked worktrees)
	workTree  string // "" for a bare repository
	remoteURL string // set when opened through OpenRemote
	lockFile  string // serializes clone and fetch of a remote's cache
	progress  io.Writer
	fetched   bool

	odb       *odb
	packed    packedRefs
	treeMu    sync.Mutex
	treeCache map[Hash][]TreeEntry
}

// Path returns the directory the repository was found at: the worktree root,
// or the git directory of a bare repository.
func (r *Repo) Path() string {
	if r.workTree != "" {
		return r.workTree
	}
	return r.gitDir
}

// GitDir returns the git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// RemoteURL returns the URL the repository was opened from, or "".
func (r *Repo) RemoteURL() string { return r.remoteURL }

// CommonDir returns the folder of refs and objects, shared by a repository
// and its linked worktrees.
func (r *Repo) CommonDir() string { return r.commonDir }

// IsBare reports whether the repository has no worktree.
func (r *Repo) IsBare() bool { return r.workTree == "" }

// Open opens the repository at path. path may be a worktree root or any
// directory below it, a linked worktree, or a bare repository's directory.
func Open(path string) (*Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("open %s: no such directory: %w", path, ErrNotRepository)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open %s: not a directory: %w", path, ErrNotRepository)
	}
	gitDir, workTree, err := discover(abs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return openGitDir(gitDir, workTree)
}

// discover walks up from dir to the first directory holding a .git entry
// (directory or "gitdir:" file) or being a bare repository itself.
func discover(dir string) (gitDir, workTree string, err error) {
	for d := dir; ; {
		dot := filepath.Join(d, ".git")
		if fi, err := os.Stat(dot); err == nil {
			if fi.IsDir() {
				return dot, d, nil
			}
			gd, err := readGitFile(dot)
			if err != nil {
				return "", "", err
			}
			return gd, d, nil
		}
		if isBareDir(d) {
			return d, "", nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", ErrNotRepository
		}
		d = parent
	}
}

// readGitFile reads a ".git" file of a linked worktree or submodule.
func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	const prefix = "gitdir: "
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("%s: no %q line: %w", path, prefix, ErrNotRepository)
	}
	gd := strings.TrimSpace(line[len(prefix):])
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return gd, nil
}

// isBareDir reports whether d looks like a git directory: HEAD, objects/, refs/.
func isBareDir(d string) bool {
	if fi, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

func openGitDir(gitDir, workTree string) (*Repo, error) {
	commonDir := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	}
	var fs billy.Filesystem = osfs.New(gitDir)
	if commonDir != gitDir {
		fs = dotgit.NewRepositoryFilesystem(osfs.New(gitDir), osfs.New(commonDir))
	}
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, nil)
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, ErrNotRepository
		}
		return nil, err
	}
	return &Repo{
		repo:      repo,
		storage:   st,
		gitDir:    gitDir,
		commonDir: commonDir,
		workTree:  workTree,
		odb:       newODB(filepath.Join(commonDir, "objects")),
		treeCache: map[Hash][]TreeEntry{},
	}, nil
}

// Init creates an empty bare repository at dir (used for caches and tests).
func Init(dir string) (*Repo, error) {
	if _, err := git.PlainInit(dir, true); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	return openGitDir(dir, "")
}

// Close releases file descriptors kept open for packfiles.
func (r *Repo) Close() error { return r.storage.Close() }

// KeepDeltaChains makes the repository cache every object of the delta
// chains it resolves, not only their bases and the objects asked for. It
// suits long runs of lookups over one history (batches, indexes), whose
// chains overlap; a few lookups are faster without it.
func (r *Repo) KeepDeltaChains() { r.odb.keepChains.Store(true) }
