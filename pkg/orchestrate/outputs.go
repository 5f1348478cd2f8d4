package orchestrate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/sandbox"
)

// OutputLimits bound what an attempt's outputs folder hands back.
type OutputLimits struct {
	Files int   // default 64
	Bytes int64 // in all, default 16 MiB
	Depth int   // folders deep, default 4
}

func (o OutputLimits) withDefaults() OutputLimits {
	if o.Files <= 0 {
		o.Files = 64
	}
	if o.Bytes <= 0 {
		o.Bytes = 16 << 20
	}
	if o.Depth <= 0 {
		o.Depth = 4
	}
	return o
}

// keepOutputs writes the attempt's logs and copies what it left in its
// outputs folder into dest. The folder is hostile: only regular files are
// read, each opened without following a symlink and checked to be the file
// that was listed; names must be plain (letters, digits, . _ -); past the
// limits the rest is left out (the logs say what).
func keepOutputs(dest, src string, r sandbox.Result, lim OutputLimits) ([]OutputRef, error) {
	lim = lim.withDefaults()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	var out []OutputRef
	var skipped []string
	write := func(rel, kind string, data []byte) error {
		p := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := ledger.WriteFileDurable(p, data); err != nil {
			return err
		}
		out = append(out, OutputRef{Path: rel, Kind: kind, Size: int64(len(data)), Digest: canonical.Digest(data)})
		return nil
	}
	total := int64(0)
	var walk func(dir, rel string, depth int) error
	walk = func(dir, rel string, depth int) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil // unreadable: nothing to keep
		}
		for _, e := range ents {
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if !plainName(name) {
				skipped = append(skipped, r+": a name other than letters, digits, . _ -")
				continue
			}
			full := filepath.Join(dir, name)
			fi, err := os.Lstat(full)
			if err != nil {
				continue
			}
			switch {
			case fi.IsDir():
				if depth >= lim.Depth {
					skipped = append(skipped, r+"/: deeper than "+fmt.Sprint(lim.Depth)+" folders")
					continue
				}
				if err := walk(full, r, depth+1); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				if len(out) >= lim.Files {
					skipped = append(skipped, r+": more than "+fmt.Sprint(lim.Files)+" files")
					continue
				}
				if total+fi.Size() > lim.Bytes {
					skipped = append(skipped, fmt.Sprintf("%s: %d bytes, past the bound of %d in all", r, fi.Size(), lim.Bytes))
					continue
				}
				data, err := readRegular(full, fi)
				if err != nil {
					skipped = append(skipped, r+": "+err.Error())
					continue
				}
				total += int64(len(data))
				if err := write(r, "evidence", data); err != nil {
					return err
				}
			default:
				skipped = append(skipped, r+": not a regular file or a folder")
			}
		}
		return nil
	}
	if err := walk(src, "", 0); err != nil {
		return nil, err
	}
	// The logs go beside them under a name an output cannot take.
	if err := write("_logs/stdout.log", "log", r.Stdout); err != nil {
		return nil, err
	}
	stderr := r.Stderr
	if len(skipped) > 0 {
		sort.Strings(skipped)
		stderr = append(append([]byte{}, stderr...), []byte("\ndome: outputs left out:\n  "+strings.Join(skipped, "\n  ")+"\n")...)
	}
	if err := write("_logs/stderr.log", "log", stderr); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func plainName(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > 128 || n[0] == '_' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// readRegular reads the regular file listed as fi at p, refusing a path
// that changed into something else (a symlink, another file) since.
func readRegular(p string, fi os.FileInfo) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, fi) {
		return nil, errors.New("changed while it was read")
	}
	data, err := io.ReadAll(io.LimitReader(f, fi.Size()+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > fi.Size() {
		return nil, errors.New("grew while it was read")
	}
	return data, nil
}

// evidenceOf finds, for each evidence kind, the output that stands for
// it: a file named like the kind, or starting with the kind and a dot.
func evidenceOf(kinds []string, outs []OutputRef) map[string]string {
	m := map[string]string{}
	for _, k := range kinds {
		for _, o := range outs {
			if o.Kind != "evidence" {
				continue
			}
			base := filepath.Base(o.Path)
			if base == k || strings.HasPrefix(base, k+".") {
				m[k] = o.Path
				break
			}
		}
	}
	return m
}
