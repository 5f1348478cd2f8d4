package stack

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtractTreeTar: a hostile tree stream never writes outside its
// folder and never panics.
func FuzzExtractTreeTar(f *testing.F) {
	add := func(hs ...tar.Header) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, h := range hs {
			h := h
			tw.WriteHeader(&h)
			if h.Typeflag == tar.TypeReg {
				tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			}
		}
		tw.Close()
		f.Add(b.Bytes())
	}
	add(tar.Header{Typeflag: tar.TypeDir, Name: "a/", Mode: 0o755}, tar.Header{Typeflag: tar.TypeReg, Name: "a/b", Mode: 0o644, Size: 3})
	add(tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "../../etc"}, tar.Header{Typeflag: tar.TypeReg, Name: "l/passwd", Size: 1})
	add(tar.Header{Typeflag: tar.TypeReg, Name: "../x", Size: 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "tree")
		ExtractTreeTar(bytes.NewReader(data), dir, 100, 1<<20)
		filepath.Walk(parent, func(p string, fi os.FileInfo, err error) error {
			if err == nil && p != parent && !strings.HasPrefix(p, dir) {
				t.Fatalf("wrote %s outside the tree", p)
			}
			return nil
		})
	})
}
