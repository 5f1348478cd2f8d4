package stack

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// WriteTreeTar writes the tree (or the tree of the commit) id as a tar
// stream, keeping only what keep accepts, as MaterializeWith would write
// it: a folder entry before what it holds, files 0644 or 0755, symlinks,
// gitlinks as empty folders. A coordinator sends a worker daemon on
// another machine the files its grant may read this way.
func WriteTreeTar(w io.Writer, repo *gitstore.Repo, id gitstore.Hash, keep func(path string, isDir bool) bool) (MaterializeStats, error) {
	var st MaterializeStats
	tree := id
	if t, err := repo.ObjectType(id); err != nil {
		return st, fmt.Errorf("tree %s: %w", id, err)
	} else if t == gitstore.TypeCommit {
		if tree, err = repo.CommitTree(id); err != nil {
			return st, fmt.Errorf("tree %s: %w", id, err)
		}
	} else if t != gitstore.TypeTree {
		return st, fmt.Errorf("tree %s: a %s, not a commit or tree", id, t)
	}
	tw := tar.NewWriter(w)
	var walk func(rel string, id gitstore.Hash) error
	walk = func(rel string, id gitstore.Hash) error {
		es, err := repo.ReadTree(id)
		if err != nil {
			return fmt.Errorf("tree %s: read tree %s: %w", orRoot(rel), id.Short(), err)
		}
		for _, e := range es {
			p := path.Join(rel, e.Name)
			if err := gitstore.CheckEntryName(e.Name, e.Mode); err != nil {
				return fmt.Errorf("tree %s: refused: %w", p, err)
			}
			if keep != nil && !keep(p, e.Mode == gitstore.ModeDir) {
				continue
			}
			switch e.Mode {
			case gitstore.ModeDir, gitstore.ModeSubmodule:
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, Format: tar.FormatPAX}); err != nil {
					return err
				}
				if e.Mode == gitstore.ModeSubmodule {
					st.Submodules++
					continue
				}
				st.Dirs++
				if err := walk(p, e.Hash); err != nil {
					return err
				}
			case gitstore.ModeFile, gitstore.ModeExec:
				data, err := repo.ReadBlob(e.Hash)
				if err != nil {
					return fmt.Errorf("tree %s: %w", p, err)
				}
				mode := int64(0o644)
				if e.Mode == gitstore.ModeExec {
					mode = 0o755
					st.Executables++
				}
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), Format: tar.FormatPAX}); err != nil {
					return err
				}
				if _, err := tw.Write(data); err != nil {
					return err
				}
				st.Files++
				st.Bytes += int64(len(data))
			case gitstore.ModeSymlink:
				target, err := repo.ReadBlob(e.Hash)
				if err != nil {
					return fmt.Errorf("tree %s: read symlink target: %w", p, err)
				}
				if err := patch.CheckSymlink(p, target); err != nil {
					return fmt.Errorf("tree %s: refused: %w", p, err)
				}
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: string(target), Mode: 0o777, Format: tar.FormatPAX}); err != nil {
					return err
				}
				st.Symlinks++
			default:
				return fmt.Errorf("tree %s: unsupported mode %s", p, e.Mode)
			}
		}
		return nil
	}
	if err := walk("", tree); err != nil {
		return st, err
	}
	return st, tw.Close()
}

// ExtractTreeTar writes a tar stream made by WriteTreeTar into dir, which
// must be empty or absent. The stream is hostile: every name is checked as
// a git tree entry name is (no "..", no ".git", no absolute path), an entry
// must sit in a folder an earlier entry of the stream made (so nothing is
// ever written through a symlink), files are created exclusively without
// following links, symlink targets must stay inside the tree (also through
// other links), and at most maxFiles entries and maxBytes bytes are read.
func ExtractTreeTar(r io.Reader, dir string, maxFiles int, maxBytes int64) (MaterializeStats, error) {
	var st MaterializeStats
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, err
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return st, err
	} else if len(ents) > 0 {
		return st, fmt.Errorf("extract into %s: the directory is not empty", dir)
	}
	dirs := map[string]bool{"": true}
	taken := map[string]bool{}
	var links []string
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("tree stream: %w", err)
		}
		if n >= maxFiles {
			return st, fmt.Errorf("tree stream: more than %d entries", maxFiles)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name {
			return st, fmt.Errorf("tree stream: entry %q: not a clean relative path", h.Name)
		}
		parent, base := path.Split(name)
		parent = strings.TrimSuffix(parent, "/")
		mode := gitstore.ModeFile
		switch h.Typeflag {
		case tar.TypeDir:
			mode = gitstore.ModeDir
		case tar.TypeSymlink:
			mode = gitstore.ModeSymlink
		case tar.TypeReg:
			if h.Mode&0o111 != 0 {
				mode = gitstore.ModeExec
			}
		default:
			return st, fmt.Errorf("tree stream: entry %q: type %q is not a folder, a file or a symlink", name, h.Typeflag)
		}
		if err := gitstore.CheckEntryName(base, mode); err != nil {
			return st, fmt.Errorf("tree stream: entry %q: %w", name, err)
		}
		if !dirs[parent] {
			return st, fmt.Errorf("tree stream: entry %q: its folder %q is not an earlier folder entry", name, parent)
		}
		if taken[name] {
			return st, fmt.Errorf("tree stream: entry %q: twice", name)
		}
		taken[name] = true
		full := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(full, 0o755); err != nil {
				return st, fmt.Errorf("tree stream: %w", err)
			}
			dirs[name] = true
			st.Dirs++
		case tar.TypeSymlink:
			if err := patch.CheckSymlink(name, []byte(h.Linkname)); err != nil {
				return st, fmt.Errorf("tree stream: refused: %w", err)
			}
			if err := os.Symlink(h.Linkname, full); err != nil {
				return st, fmt.Errorf("tree stream: %w", err)
			}
			links = append(links, name)
			st.Symlinks++
		case tar.TypeReg:
			if h.Size < 0 || st.Bytes+h.Size > maxBytes {
				return st, fmt.Errorf("tree stream: entry %q: past the bound of %d bytes in all", name, maxBytes)
			}
			perm := os.FileMode(0o644)
			if mode == gitstore.ModeExec {
				perm = 0o755
			}
			f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
			if err != nil {
				return st, fmt.Errorf("tree stream: %w", err)
			}
			w, werr := io.Copy(f, io.LimitReader(tr, h.Size))
			cerr := f.Close()
			if err := errors.Join(werr, cerr); err != nil {
				return st, fmt.Errorf("tree stream: %s: %w", name, err)
			}
			if w != h.Size {
				return st, fmt.Errorf("tree stream: %s: %d of %d bytes", name, w, h.Size)
			}
			if mode == gitstore.ModeExec {
				if err := os.Chmod(full, perm); err != nil {
					return st, err
				}
				st.Executables++
			}
			st.Files++
			st.Bytes += w
		}
	}
	for _, l := range links {
		if err := resolveInside(dir, l); err != nil {
			return st, fmt.Errorf("tree stream: refused: %w", err)
		}
	}
	return st, nil
}
