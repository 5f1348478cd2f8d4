package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/readlimit"
)

// Repo is an open repository. It is safe for concurrent reads; writes of
// objects are safe too (objects are content-addressed); ref updates use
// git's lock files and are safe across processes.
type Repo struct {
	gitDir    string  // the repository's git directory (HEAD lives here)
	commonDir string  // where refs, objects and packed-refs live (differs for linked worktrees)
	workTree  string  // "" for a bare repository
	mirror    *mirror // set when opened as a remote's cached mirror (OpenMirror)

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

// gitFileLimit bounds the small files that point at other folders: a
// ".git" file, commondir.
const gitFileLimit = 64 << 10

// readGitFile reads a ".git" file of a linked worktree or submodule.
func readGitFile(path string) (string, error) {
	b, err := readlimit.ReadFile(path, gitFileLimit)
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
	if b, err := readlimit.ReadFile(filepath.Join(gitDir, "commondir"), gitFileLimit); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read commondir: %w", err)
	}
	// A git directory has a HEAD (git's is_git_directory; go-git's Open
	// asked for the same).
	if _, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNotRepository
		}
		return nil, err
	}
	if err := checkFormat(commonDir); err != nil {
		return nil, err
	}
	return &Repo{
		gitDir:    gitDir,
		commonDir: commonDir,
		workTree:  workTree,
		odb:       newODB(filepath.Join(commonDir, "objects")),
		treeCache: map[Hash][]TreeEntry{},
	}, nil
}

// checkFormat refuses a repository whose config says it is in a format
// dome does not read: core.repositoryformatversion other than 0 or 1, or
// any extension (objectformat=sha256, refstorage=reftable, ...) but the
// no-op ones. These are the repositories go-git refused to open, with its
// messages, so the same repositories open as before.
func checkFormat(commonDir string) error {
	cfg, err := readConfig(filepath.Join(commonDir, "config"))
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	version, _ := cfg.get("core", "", "repositoryformatversion")
	switch version {
	case "", "0", "1":
	default:
		return fmt.Errorf("core.repositoryformatversion not supported: %q", version)
	}
	var extensions []string
	for _, e := range cfg.entries {
		if e.section == "extensions" && !e.hasSub {
			extensions = append(extensions, e.key)
		}
	}
	if len(extensions) == 0 {
		return nil
	}
	var unsupported, unknown []string
	for _, name := range extensions {
		if (version == "" || version == "0") && name != "noop" {
			unsupported = append(unsupported, name)
		}
		if name != "noop" && name != "noop-v1" {
			unknown = append(unknown, name)
		}
	}
	if len(unsupported) > 0 {
		return fmt.Errorf("core.repositoryformatversion does not support extension: %s", strings.Join(unsupported, ", "))
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown extension: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// Init creates an empty bare repository at dir (used for caches and tests)
// with the files git init --bare (and go-git) make: HEAD naming
// refs/heads/master, a config saying bare = true, objects/info,
// objects/pack, refs/heads and refs/tags. A repository already there is
// an error.
func Init(dir string) (*Repo, error) {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err == nil {
		return nil, fmt.Errorf("init %s: repository already exists", dir)
	}
	for _, sub := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(sub)), 0o755); err != nil {
			return nil, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	for name, content := range map[string]string{
		"config": "[core]\n\tbare = true\n",
		"HEAD":   "ref: refs/heads/master\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	return openGitDir(dir, "")
}

// Close releases what the repository holds: the memory maps of its packs
// (a process that opens repositories again and again would otherwise run
// out of them) and its caches of objects and trees. Reads in flight finish
// first. The repository stays usable: a read after Close maps the packs
// again.
func (r *Repo) Close() error {
	r.dropTreeCache()
	return r.odb.close()
}

func (r *Repo) dropTreeCache() {
	r.treeMu.Lock()
	r.treeCache = map[Hash][]TreeEntry{}
	r.treeMu.Unlock()
}

// KeepDeltaChains makes the repository cache every object of the delta
// chains it resolves, not only their bases and the objects asked for. It
// suits long runs of lookups over one history (batches, indexes), whose
// chains overlap; a few lookups are faster without it.
func (r *Repo) KeepDeltaChains() { r.odb.keepChains.Store(true) }

// LimitCache bounds the cache of resolved packed objects (delta bases and
// whole trees) to about bytes instead of 192 MiB, for a process that must
// stay small, such as one applying a long patch series that reads each
// base file once. Call it before the first read.
func (r *Repo) LimitCache(bytes int) { r.odb.budget = max(bytes, 1) }
