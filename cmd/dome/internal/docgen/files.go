package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RegenerateHint is what to do when the checked-in pages are stale.
const RegenerateHint = "the command reference is out of date with the CLI: run `make docs` " +
	"(go run ./cmd/dome/internal/docgen) and commit docs/reference/ and docs/man/; " +
	"edit the prose in internal/app/help/*.md and the flags' Usage, never the generated pages"

// Dirs are the folders docgen owns: every file in them is generated.
var Dirs = []string{"docs/reference", "docs/man"}

// Stale compares the pages with the files under root and returns one line
// per difference: a page that differs, is missing, or is left over from a
// command that is gone.
func Stale(root string, pages map[string][]byte) ([]string, error) {
	var out []string
	for _, name := range sortedKeys(pages) {
		got, err := os.ReadFile(filepath.Join(root, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, name+": missing")
		case err != nil:
			return nil, err
		case !bytes.Equal(got, pages[name]):
			out = append(out, name+": differs from the CLI"+firstDiff(got, pages[name]))
		}
	}
	existing, err := owned(root)
	if err != nil {
		return nil, err
	}
	for _, name := range existing {
		if _, ok := pages[name]; !ok {
			out = append(out, name+": no command documents it any more")
		}
	}
	return out, nil
}

// Write writes the pages under root and removes the files of the owned
// folders that no page is.
func Write(root string, pages map[string][]byte) error {
	existing, err := owned(root)
	if err != nil {
		return err
	}
	for _, name := range existing {
		if _, ok := pages[name]; !ok {
			if err := os.Remove(filepath.Join(root, name)); err != nil {
				return err
			}
		}
	}
	for _, name := range sortedKeys(pages) {
		p := filepath.Join(root, name)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, pages[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, pages[name], 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

// owned lists the files under the owned folders, relative to root, with /.
func owned(root string) ([]string, error) {
	var out []string
	for _, d := range Dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if e.Type().IsRegular() {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// firstDiff names the first line that differs, to point at the change.
func firstDiff(a, b []byte) string {
	al := strings.Split(string(a), "\n")
	bl := strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf(" (line %d: checked in %q, the CLI says %q)", i+1, clip(x), clip(y))
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
