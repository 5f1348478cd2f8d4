package main

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
)

// The generated repository: files/dirs directories d000.. holding
// files f00000.. (files per directory = files/dirs), each fileLines lines
// long. Patch k edits line editLine of file k*stride (stride = files /
// patches, at least 1), so no two patches touch the same file.
const (
	fileLines = 40
	editLine  = 20
)

type layout struct {
	files, dirs, patches int
}

func (l layout) path(i int) string {
	per := (l.files + l.dirs - 1) / l.dirs
	return fmt.Sprintf("d%03d/f%05d.txt", i/per, i)
}

func (l layout) line(file, n int) string {
	return fmt.Sprintf("file %05d line %02d: the quick brown fox jumps over the lazy dog", file, n)
}

func (l layout) content(file int) []byte {
	var b bytes.Buffer
	for n := 1; n <= fileLines; n++ {
		b.WriteString(l.line(file, n))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// edited is file's content after patch k.
func (l layout) edited(file, k int) []byte {
	var b bytes.Buffer
	for n := 1; n <= fileLines; n++ {
		if n == editLine {
			fmt.Fprintf(&b, "file %05d line %02d: edited by worker %04d\n", file, n, k)
			continue
		}
		b.WriteString(l.line(file, n))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func (l layout) stride() int {
	s := l.files / l.patches
	if s < 1 {
		return 1
	}
	return s
}

// fastImport is a git fast-import stream with one commit on refs/heads/main
// holding every file.
func (l layout) fastImport() []byte {
	var b bytes.Buffer
	for i := 0; i < l.files; i++ {
		c := l.content(i)
		fmt.Fprintf(&b, "blob\nmark :%d\ndata %d\n", i+1, len(c))
		b.Write(c)
		b.WriteByte('\n')
	}
	msg := fmt.Sprintf("base: %d files in %d directories\n", l.files, l.dirs)
	fmt.Fprintf(&b, "commit refs/heads/main\nauthor bench <bench@dome.invalid> 1767322800 +0000\ncommitter bench <bench@dome.invalid> 1767322800 +0000\ndata %d\n%s", len(msg), msg)
	for i := 0; i < l.files; i++ {
		fmt.Fprintf(&b, "M 100644 :%d %s\n", i+1, l.path(i))
	}
	b.WriteString("\n")
	return b.Bytes()
}

// diff is patch k as git diff --full-index writes it.
func (l layout) diff(k int) []byte {
	file := k * l.stride()
	p := l.path(file)
	old, new := l.content(file), l.edited(file, k)
	var b bytes.Buffer
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %x..%x 100644\n--- a/%s\n+++ b/%s\n", p, p, blobID(old), blobID(new), p, p)
	from, to := editLine-3, editLine+3
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", from, to-from+1, from, to-from+1)
	for n := from; n <= to; n++ {
		if n == editLine {
			fmt.Fprintf(&b, "-%s\n", l.line(file, n))
			fmt.Fprintf(&b, "+file %05d line %02d: edited by worker %04d\n", file, n, k)
			continue
		}
		fmt.Fprintf(&b, " %s\n", l.line(file, n))
	}
	return b.Bytes()
}

// writePatches writes patch k to dir/p<k>.diff and returns the paths in order.
func (l layout) writePatches(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]string, l.patches)
	for k := 0; k < l.patches; k++ {
		out[k] = filepath.Join(dir, fmt.Sprintf("p%04d.diff", k))
		if err := os.WriteFile(out[k], l.diff(k), 0o644); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func blobID(data []byte) []byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return h.Sum(nil)
}
