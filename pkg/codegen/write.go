package codegen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// WriteStatus says what happened to a client folder.
type WriteStatus string

// Write outcomes.
const (
	StatusWritten   WriteStatus = "written"
	StatusUnchanged WriteStatus = "unchanged"
	StatusRemoved   WriteStatus = "removed" // a stale client: its profile or target is gone
)

// WriteResult is the outcome for one client folder.
type WriteResult struct {
	Dir     string      `json:"dir"`
	Status  WriteStatus `json:"status"`
	Removed []string    `json:"removed_files,omitempty"` // stale files of the previous manifest
	Kept    []string    `json:"kept_files,omitempty"`    // files no manifest lists, left alone
}

// Scope says which existing client folders a batch owns: a folder under
// client/ that the batch did not produce is stale when its language and
// tool are in scope. nil Scope owns nothing beyond the batch's own folders.
type Scope struct {
	Languages map[string]bool // nil: every language
	Tools     map[string]bool // nil: every tool
}

func (s *Scope) owns(lang, tool string) bool {
	if s == nil {
		return false
	}
	return (s.Languages == nil || s.Languages[lang]) && (s.Tools == nil || s.Tools[tool])
}

// CheckOutDir refuses an output directory that is a file (or has a file
// where a folder must be).
func CheckOutDir(out string) error {
	fi, err := os.Stat(out)
	if err == nil && !fi.IsDir() {
		return &errkind.InputError{Source: "--out", Problem: fmt.Sprintf("%s is a file, not a directory", out), Hint: "give a directory (it is created when missing)"}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory") {
			return &errkind.InputError{Source: "--out", Problem: fmt.Sprintf("%s: a parent is a file, not a directory", out), Hint: "give a directory path"}
		}
		return &errkind.InputError{Source: "--out", Problem: err.Error(), Err: err}
	}
	return nil
}

// Write writes clients below out, all or nothing: every client is first
// written completely into a staging folder inside out; only when all of them
// are there does each replace its folder by rename. Files a folder's
// previous manifest listed and the new one does not are removed (stale);
// files no manifest lists are carried over untouched. A folder whose
// manifest already describes the same content is left as it is, so a
// commit that changes nothing the client depends on does not churn it.
// With a scope, client folders in scope that the batch did not produce are
// removed (their manifest's files only).
func Write(out string, clients []*Client, scope *Scope) ([]WriteResult, error) {
	if err := CheckOutDir(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &errkind.InputError{Source: "--out", Problem: err.Error(), Err: err}
	}
	for _, c := range clients {
		if err := checkDirPath(out, c.Dir()); err != nil {
			return nil, err
		}
	}
	stage, err := os.MkdirTemp(out, ".dome-gen-")
	if err != nil {
		return nil, fmt.Errorf("staging folder: %w", err)
	}
	defer os.RemoveAll(stage)
	type plan struct {
		c      *Client
		final  string
		staged string
		res    WriteResult
	}
	var plans []*plan
	for i, c := range clients {
		final := filepath.Join(out, filepath.FromSlash(c.Dir()))
		p := &plan{c: c, final: final, res: WriteResult{Dir: c.Dir()}}
		old, _ := readManifestAt(final)
		if old != nil && sameContent(old, c.Manifest) && filesMatch(final, c.Files) {
			p.res.Status = StatusUnchanged
			plans = append(plans, p)
			continue
		}
		p.staged = filepath.Join(stage, fmt.Sprint(i))
		if err := os.MkdirAll(p.staged, 0o755); err != nil {
			return nil, err
		}
		for _, f := range c.Files {
			if err := writeSynced(filepath.Join(p.staged, filepath.FromSlash(f.Path)), f.Data); err != nil {
				return nil, err
			}
		}
		if err := writeSynced(filepath.Join(p.staged, ManifestFile), c.Encoded); err != nil {
			return nil, err
		}
		// Carry over what the previous manifest did not write; report what
		// it wrote and the new one does not.
		listed := map[string]bool{ManifestFile: true}
		if old != nil {
			for _, o := range old.Outputs {
				listed[o.Path] = true
			}
		}
		produced := map[string]bool{}
		for _, f := range c.Files {
			produced[f.Path] = true
		}
		existing, _ := listFiles(final)
		for _, rel := range existing {
			switch {
			case produced[rel] || rel == ManifestFile:
			case listed[rel]:
				p.res.Removed = append(p.res.Removed, rel)
			default:
				if err := copyFile(filepath.Join(final, filepath.FromSlash(rel)), filepath.Join(p.staged, filepath.FromSlash(rel))); err != nil {
					return nil, err
				}
				p.res.Kept = append(p.res.Kept, rel)
			}
		}
		p.res.Status = StatusWritten
		plans = append(plans, p)
	}
	// Everything is staged: swap the folders in.
	var results []WriteResult
	for i, p := range plans {
		if p.staged != "" {
			if err := os.MkdirAll(filepath.Dir(p.final), 0o755); err != nil {
				return nil, err
			}
			aside := filepath.Join(stage, fmt.Sprintf("old-%d", i))
			moved := false
			if _, err := os.Lstat(p.final); err == nil {
				if err := os.Rename(p.final, aside); err != nil {
					return nil, fmt.Errorf("replace %s: %w", p.final, err)
				}
				moved = true
			}
			if err := os.Rename(p.staged, p.final); err != nil {
				if moved {
					os.Rename(aside, p.final)
				}
				return nil, fmt.Errorf("replace %s: %w", p.final, err)
			}
			syncDir(filepath.Dir(p.final))
		}
		results = append(results, p.res)
	}
	if scope != nil {
		done := map[string]bool{}
		for _, c := range clients {
			done[c.Dir()] = true
		}
		stale, err := FindClients(out)
		if err != nil {
			return nil, err
		}
		for _, dir := range stale {
			lang, tool, _ := splitClientDir(dir)
			if done[dir] || !scope.owns(lang, tool) {
				continue
			}
			res, err := removeClient(out, dir)
			if err != nil {
				return nil, err
			}
			results = append(results, res)
		}
	}
	return results, nil
}

// checkDirPath refuses a client folder path with a file in the way.
func checkDirPath(out, dir string) error {
	cur := out
	for _, part := range strings.Split(dir, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return &errkind.InputError{Source: "--out", Problem: fmt.Sprintf("%s is in the way: it is a file where the client folder %s must be", cur, dir), Hint: "move it away"}
		}
	}
	return nil
}

// removeClient deletes the files a stale client's manifest lists, the
// manifest, and the folders left empty.
func removeClient(out, dir string) (WriteResult, error) {
	final := filepath.Join(out, filepath.FromSlash(dir))
	res := WriteResult{Dir: dir, Status: StatusRemoved}
	m, err := readManifestAt(final)
	if err != nil || m == nil {
		return res, err
	}
	for _, o := range m.Outputs {
		if err := os.Remove(filepath.Join(final, filepath.FromSlash(o.Path))); err == nil {
			res.Removed = append(res.Removed, o.Path)
		}
	}
	if err := os.Remove(filepath.Join(final, ManifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	res.Kept, _ = listFiles(final)
	// Remove empty folders up to client/.
	for d := final; d != filepath.Join(out, "client") && strings.HasPrefix(d, out); d = filepath.Dir(d) {
		removeEmptyTree(d)
	}
	return res, nil
}

func removeEmptyTree(d string) {
	es, err := os.ReadDir(d)
	if err != nil {
		return
	}
	for _, e := range es {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(d, e.Name()))
		}
	}
	os.Remove(d) // fails unless empty
}

// FindClients lists the client folders under out (those with a
// manifest.json at client/<lang>/<tool>/<profile>), sorted.
func FindClients(out string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(out, "client", "*", "*", "*", ManifestFile))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range matches {
		rel, err := filepath.Rel(out, filepath.Dir(m))
		if err != nil {
			continue
		}
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	sort.Strings(dirs)
	return dirs, nil
}

func splitClientDir(dir string) (lang, tool, profile string) {
	parts := strings.Split(dir, "/")
	if len(parts) != 4 {
		return "", "", ""
	}
	return parts[1], parts[2], parts[3]
}

func readManifestAt(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	data, err := readlimit.ReadRegularFile(p, readlimit.Document)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseManifest(p, data)
}

func filesMatch(dir string, files []GeneratedFile) bool {
	for _, f := range files {
		data, err := readlimit.ReadRegularFile(filepath.Join(dir, filepath.FromSlash(f.Path)), readlimit.Document)
		if err != nil || !bytes.Equal(data, f.Data) {
			return false
		}
	}
	return true
}

// listFiles lists regular files below dir, relative, slash-separated, sorted.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out, err
}

// writeSynced writes a new file with mode 0644 regardless of the umask
// (generated files must not depend on it) and fsyncs it.
func writeSynced(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyFile carries a file nobody generated over into the new client folder:
// a regular file by its bytes, a symlink as a symlink. Anything else (a
// FIFO would block the copy, a device would stream forever) is refused.
func copyFile(src, dst string) error {
	li, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case li.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case !li.Mode().IsRegular():
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("is not a regular file (%s) in a client folder", li.Mode().Type()), Hint: "move it out of the --out folder; dome gen keeps only regular files and symlinks it did not write"}
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
