package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Mode is how a path was written.
type Mode string

// Write modes.
const (
	Replaced Mode = "replaced" // a regular file replaced atomically
	Created  Mode = "created"  // an absent name created atomically
	Streamed Mode = "streamed" // a character device or FIFO written in place
)

// RefusedError is an output path outfile will not write: what it names
// (a directory, a block device, a socket, a dangling symlink) or where it
// is (a folder that does not exist) is for the user to change.
type RefusedError struct {
	Path    string
	Problem string
	Hint    string
}

func (e *RefusedError) Error() string { return e.Path + ": " + e.Problem }

// Options tune Write.
type Options struct {
	// MakeDirs creates the missing folders above an absent path (the caller
	// says so: Result.CreatedDirs); without it a missing folder is refused.
	MakeDirs bool
	// Perm is the permission of a created file (default 0644). A replaced
	// file keeps its own permission bits.
	Perm fs.FileMode
	// Exclusive refuses a path that exists (keys are never overwritten).
	Exclusive bool
}

// Result says how Write wrote.
type Result struct {
	Mode        Mode
	CreatedDirs []string // folders made for the file (Options.MakeDirs), outermost first
}

// Write writes data to path by the rules of the package documentation and
// says how it did.
func Write(path string, data []byte, opts Options) (Result, error) {
	var res Result
	m, err := write(path, data, opts, &res)
	res.Mode = m
	return res, err
}

func write(path string, data []byte, opts Options, res *Result) (Mode, error) {
	if opts.Perm == 0 {
		opts.Perm = 0o644
	}
	target := path
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if opts.Exclusive {
			return "", &RefusedError{Path: path, Problem: "already exists (a symlink)", Hint: "pick another name, or remove it yourself"}
		}
		resolved, rerr := filepath.EvalSymlinks(path)
		if rerr != nil {
			if errors.Is(rerr, fs.ErrNotExist) {
				dest, _ := os.Readlink(path)
				return "", &RefusedError{Path: path, Problem: fmt.Sprintf("is a symlink to %s, which does not exist", dest), Hint: "dome writes through a symlink only to an existing file or device; create the target or name it directly"}
			}
			return "", fmt.Errorf("write %s: %w", path, rerr)
		}
		target = resolved
		fi, err = os.Lstat(target)
	}
	if err != nil {
		// Absent (or under something that is not a folder): the folder
		// must exist.
		dir := filepath.Dir(target)
		di, derr := os.Stat(dir)
		switch {
		case errors.Is(derr, fs.ErrNotExist) && opts.MakeDirs:
			created, merr := makeDirs(dir)
			res.CreatedDirs = created
			if merr != nil {
				return "", fmt.Errorf("write %s: %w", path, merr)
			}
		case errors.Is(derr, fs.ErrNotExist):
			return "", &RefusedError{Path: path, Problem: fmt.Sprintf("the folder %s does not exist", dir), Hint: "create it first (mkdir -p " + dir + ")"}
		case derr == nil && !di.IsDir(), errors.Is(derr, syscall.ENOTDIR):
			return "", &RefusedError{Path: path, Problem: fmt.Sprintf("%s is not a folder", dir), Hint: "name a path inside a folder"}
		case derr != nil:
			return "", fmt.Errorf("write %s: %w", path, derr)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if err := replace(target, data, opts.Perm, opts.Exclusive); err != nil {
			return "", err
		}
		return Created, nil
	}
	if opts.Exclusive {
		return "", &RefusedError{Path: path, Problem: "already exists", Hint: "pick another name, or remove it yourself"}
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		if err := replace(target, data, m.Perm(), false); err != nil {
			return "", err
		}
		return Replaced, nil
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		if err := stream(target, data); err != nil {
			return "", err
		}
		return Streamed, nil
	case m.IsDir():
		return "", &RefusedError{Path: path, Problem: "is a directory", Hint: "name a file inside it"}
	case m&fs.ModeDevice != 0:
		return "", &RefusedError{Path: path, Problem: "is a block device; dome does not write to block devices", Hint: "write to a file and copy it yourself"}
	case m&fs.ModeSocket != 0:
		return "", &RefusedError{Path: path, Problem: "is a socket", Hint: "name a file, a FIFO or a character device"}
	}
	return "", &RefusedError{Path: path, Problem: fmt.Sprintf("is not a regular file (%s)", m.Type()), Hint: "name a regular file"}
}

// makeDirs creates dir and the missing folders above it and lists those it
// made, outermost first.
func makeDirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// stream writes data into an existing character device or FIFO. O_TRUNC and
// O_CREATE are left out: nothing about the node changes but what flows
// through it.
func stream(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// replace writes data to a temporary file beside path, syncs it and renames
// it over path (or, exclusive, links it to path, which fails if the name was
// taken meanwhile), then syncs the folder.
func replace(path string, data []byte, perm fs.FileMode, exclusive bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name) // after a rename it names nothing
	fail := func(err error) error {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if exclusive {
		if err := os.Link(name, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return &RefusedError{Path: path, Problem: "already exists", Hint: "pick another name, or remove it yourself"}
			}
			return fmt.Errorf("write %s: %w", path, err)
		}
	} else if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
