package patch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/internal/xdiff"
)

// DiffOptions controls DiffTree.
type DiffOptions struct {
	Context int // lines of context around changes; 0 means git's default, 3
}

// NewFile is one file of the new side of a diff.
type NewFile struct {
	Path string // slash-separated, relative
	Mode Mode   // ModeFile, ModeExec or ModeSymlink
	Data []byte // the content, or a symlink's target
}

type baseFile struct {
	mode Mode
	id   OID
}

// zeroOID is the all-zero id of the "index" line of created and deleted
// files.
const zeroOID = "0000000000000000000000000000000000000000"

// DiffTree returns the patch that turns the tree base of st into exactly
// files (the whole new side): files are created, deleted, changed in content
// or mode; a file that changes type (file, symlink) is deleted and created.
// Submodules (gitlinks) of the base are left as they are. The patch has full
// 40-digit index lines (as git diff --full-index --binary), line diffs with
// Context lines of context (hunks merged as git merges them), text/binary
// detection as git's (a NUL byte in the first 8000 bytes) and binary
// changes as literal "GIT binary patch" blocks. Files are in path order.
// Format writes it as a diff that Parse, Apply and git apply accept.
func DiffTree(st Store, base OID, files []NewFile, opts DiffOptions) (*Patch, error) {
	ctx := opts.Context
	if ctx <= 0 {
		ctx = 3
	}
	old := map[string]baseFile{}
	gitlinks := map[string]bool{}
	if !base.IsZero() {
		if err := walkTree(st, base, "", old, gitlinks); err != nil {
			return nil, err
		}
	}
	nw := map[string]NewFile{}
	for _, f := range files {
		if err := CheckPath(f.Path, f.Mode); err != nil {
			return nil, err
		}
		switch f.Mode {
		case ModeFile, ModeExec, ModeSymlink:
		default:
			return nil, fmt.Errorf("%s: mode %s is not a file, an executable or a symlink", f.Path, f.Mode)
		}
		if _, dup := nw[f.Path]; dup {
			return nil, fmt.Errorf("%s: listed twice", f.Path)
		}
		if underGitlink(f.Path, gitlinks) {
			continue
		}
		nw[f.Path] = f
	}
	paths := make([]string, 0, len(old)+len(nw))
	for p := range old {
		paths = append(paths, p)
	}
	for p := range nw {
		if _, ok := old[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	p := &Patch{}
	for _, path := range paths {
		o, inOld := old[path]
		n, inNew := nw[path]
		switch {
		case inOld && !inNew:
			data, err := st.ReadBlob(o.id)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			p.Files = append(p.Files, fileDiff(path, path, o.mode, 0, data, nil, true, false, ctx))
		case !inOld && inNew:
			p.Files = append(p.Files, fileDiff(path, path, 0, n.Mode, nil, n.Data, false, true, ctx))
		default:
			id := BlobID(n.Data)
			if id == o.id && o.mode == n.Mode {
				continue
			}
			data, err := st.ReadBlob(o.id)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			if o.mode.kind() != n.Mode.kind() {
				p.Files = append(p.Files, fileDiff(path, path, o.mode, 0, data, nil, true, false, ctx))
				p.Files = append(p.Files, fileDiff(path, path, 0, n.Mode, nil, n.Data, false, true, ctx))
				continue
			}
			p.Files = append(p.Files, fileDiff(path, path, o.mode, n.Mode, data, n.Data, false, false, ctx))
		}
	}
	return p, nil
}

func underGitlink(p string, gitlinks map[string]bool) bool {
	for d := p; ; {
		i := strings.LastIndexByte(d, '/')
		if gitlinks[d] {
			return true
		}
		if i < 0 {
			return false
		}
		d = d[:i]
	}
}

func walkTree(st Store, t OID, prefix string, out map[string]baseFile, gitlinks map[string]bool) error {
	es, err := st.ReadTree(t)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", t, err)
	}
	for _, e := range es {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		switch e.Mode {
		case ModeDir:
			if err := walkTree(st, e.ID, p, out, gitlinks); err != nil {
				return err
			}
		case ModeSubmodule:
			gitlinks[p] = true
		default:
			out[p] = baseFile{mode: e.Mode, id: e.ID}
		}
	}
	return nil
}

// isBinary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}

func fileDiff(oldPath, newPath string, oldMode, newMode Mode, old, nw []byte, del, add bool, ctx int) *File {
	f := &File{OldPath: oldPath, NewPath: newPath, OldMode: oldMode, NewMode: newMode, IsNew: add, IsDelete: del, Similarity: -1}
	f.OldOID, f.NewOID = zeroOID, zeroOID
	if !add {
		f.OldOID = BlobID(old).String()
	}
	if !del {
		f.NewOID = BlobID(nw).String()
	}
	if add {
		f.OldPath = ""
	}
	if del {
		f.NewPath = ""
	}
	if f.OldOID == f.NewOID {
		f.OldOID, f.NewOID = "", "" // a mode change only: no index line
		return f
	}
	if isBinary(old) || isBinary(nw) {
		f.Binary = &Binary{Kind: BinaryLiteral, Size: int64(len(nw)), Data: append([]byte{}, nw...)}
		if f.Binary.Data == nil {
			f.Binary.Data = []byte{}
		}
		return f
	}
	f.Hunks = lineHunks(splitLines(old), splitLines(nw), ctx)
	return f
}

// lineHunks turns a line diff of a into b (git's Myers alignment, as git
// diff --no-indent-heuristic finds it) into unified hunks with ctx lines
// of context, merging hunks whose context would touch or overlap (as git
// does: changes at most 2*ctx equal lines apart share a hunk).
func lineHunks(a, b []string, ctx int) []*Hunk {
	var ops []Line
	var oldNo, newNo []int // 0-based line index of each op on each side (before it, for inserts/deletes)
	i, j := 0, 0
	same := func(until int) {
		for ; i < until; i, j = i+1, j+1 {
			ops, oldNo, newNo = append(ops, Line{' ', a[i]}), append(oldNo, i), append(newNo, j)
		}
	}
	for _, c := range xdiff.Diff(a, b) {
		same(c.I1)
		for end := i + c.Chg1; i < end; i++ {
			ops, oldNo, newNo = append(ops, Line{'-', a[i]}), append(oldNo, i), append(newNo, j)
		}
		for end := j + c.Chg2; j < end; j++ {
			ops, oldNo, newNo = append(ops, Line{'+', b[j]}), append(oldNo, i), append(newNo, j)
		}
	}
	same(len(a))
	var hunks []*Hunk
	for k := 0; k < len(ops); {
		if ops[k].Op == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k // exclusive end of the changes
		for {
			for end < len(ops) && ops[end].Op != ' ' {
				end++
			}
			next := end
			for next < len(ops) && ops[next].Op == ' ' {
				next++
			}
			if next < len(ops) && next-end <= 2*ctx {
				end = next
				continue
			}
			break
		}
		stop := min(len(ops), end+ctx)
		h := &Hunk{}
		for _, l := range ops[start:stop] {
			if l.Op != '+' {
				h.OldLines++
			}
			if l.Op != '-' {
				h.NewLines++
			}
		}
		h.Lines = append([]Line{}, ops[start:stop]...)
		h.OldStart, h.NewStart = oldNo[start], newNo[start]
		if h.OldLines > 0 {
			h.OldStart++
		}
		if h.NewLines > 0 {
			h.NewStart++
		}
		hunks = append(hunks, h)
		k = stop
	}
	return hunks
}

// ReadDir reads the files below dir as the new side of a diff: regular files
// (ModeExec when any execute bit is set), and symlinks (their target). It
// skips .git and every path for which skip returns true (a directory's path
// skips all below it). Paths are slash-separated and relative to dir.
func ReadDir(dir string, skip func(path string, isDir bool) bool) ([]NewFile, error) {
	var out []NewFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if skip != nil && skip(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, NewFile{Path: rel, Mode: ModeSymlink, Data: []byte(filepath.ToSlash(target))})
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := ModeFile
			if info.Mode()&0o111 != 0 {
				mode = ModeExec
			}
			out = append(out, NewFile{Path: rel, Mode: mode, Data: data})
		default:
			return fmt.Errorf("%s: not a regular file, a directory or a symlink", rel)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		return nil, err
	}
	return out, nil
}
