package specfilter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// FileReader reads the files of one tool folder. Names are slash-separated
// and relative to the folder, already cleaned by dome (no "..", no leading
// slash); an implementation must still stay inside its root. A missing file
// is an error that wraps fs.ErrNotExist. The registry implements it over a
// pinned git tree; DirReader over a local directory.
type FileReader interface {
	ReadFile(name string) ([]byte, error)
}

// DirReader reads files below a local directory through os.Root, which also
// refuses symlinks that lead outside it. A file over MaxBytes (0:
// DefaultMaxBytes) is refused as soon as the limit is passed, so a FIFO or a
// device in the folder cannot make it read forever.
type DirReader struct {
	root     *os.Root
	MaxBytes int64
}

// OpenDir returns a DirReader rooted at dir. Close it when done.
func OpenDir(dir string) (*DirReader, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &DirReader{root: r}, nil
}

// ReadFile reads name below the root.
func (d *DirReader) ReadFile(name string) ([]byte, error) {
	if _, err := cleanName(name); err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := d.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	data, err := readlimit.ReadOpen(f, limit)
	if t, ok := readlimit.IsTooLarge(err); ok {
		return nil, fmt.Errorf("the file is %w", t)
	}
	return data, err
}

// ReadFileMax reads name below the root, refusing a file larger than max
// bytes before reading it (a FIFO or a device is read up to max+1 bytes).
func (d *DirReader) ReadFileMax(name string, max int64) ([]byte, error) {
	if _, err := cleanName(name); err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return nil, &tooLargeError{size: st.Size(), max: max}
	}
	data, err := readlimit.ReadOpen(f, max)
	if _, ok := readlimit.IsTooLarge(err); ok {
		return nil, &tooLargeError{size: -1, max: max}
	}
	return data, err
}

// boundedReader is a FileReader that can refuse a large file before
// reading it whole.
type boundedReader interface {
	ReadFileMax(name string, max int64) ([]byte, error)
}

// tooLargeError is a file over the input limit; size is -1 when unknown.
type tooLargeError struct{ size, max int64 }

func (e *tooLargeError) Error() string {
	if e.size < 0 {
		return "file is more than the limit of " + readlimit.Size(e.max)
	}
	return fmt.Sprintf("file is %d bytes, more than the limit of %s", e.size, readlimit.Size(e.max))
}

// readInput reads one file of the spec within the size limit.
func readInput(fr FileReader, name string, opts LoadOptions) ([]byte, error) {
	max := opts.Limits.withDefaults().MaxBytes
	var data []byte
	var err error
	if br, ok := fr.(boundedReader); ok {
		data, err = br.ReadFileMax(name, max)
	} else {
		data, err = fr.ReadFile(name)
	}
	if err == nil && int64(len(data)) > max {
		err = &tooLargeError{size: int64(len(data)), max: max}
	}
	if err := tooLargeInput(name, opts, err); err != nil {
		return nil, err
	}
	return data, err
}

// tooLargeInput turns a file over the input limit into the error that says
// so (nil for any other error).
func tooLargeInput(name string, opts LoadOptions, err error) error {
	var tl *tooLargeError
	if rl, ok := readlimit.IsTooLarge(err); ok {
		tl = &tooLargeError{size: -1, max: rl.Limit}
	} else if !errors.As(err, &tl) {
		return nil
	}
	return &errkind.InputError{Source: opts.Describe(name), Problem: tl.Error(), Err: err,
		Hint: opts.Offer.or("--max-size", "pass --max-size BYTES to raise the limit", "split the spec into files referenced with $ref (each file has the limit)")}
}

// streamReader is a FileReader that can also hand out a file as a stream,
// refusing a regular file larger than max before reading it. Load parses a
// YAML spec from the stream (the libyaml parser reads as it goes), so the
// file is never held whole beside its tree.
type streamReader interface {
	OpenStream(name string, max int64) (io.ReadCloser, error)
}

// OpenStream opens name below the root for reading as a stream.
func (d *DirReader) OpenStream(name string, max int64) (io.ReadCloser, error) {
	if _, err := cleanName(name); err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		f.Close()
		return nil, &tooLargeError{size: st.Size(), max: max}
	}
	return f, nil
}

// Close releases the directory.
func (d *DirReader) Close() error { return d.root.Close() }

// errOutside is wrapped by every refusal of a reference target.
var errOutside = errors.New("dome reads only files inside the tool folder")

func cleanName(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%q: %w", name, errOutside)
	}
	c := path.Clean(name)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q: %w", name, errOutside)
	}
	return c, nil
}

// refTarget is where a $ref points: a file inside the tool folder (""
// meaning the file the ref is in) and a JSON pointer into it.
type refTarget struct {
	File    string
	Pointer Pointer
}

// parseRef resolves ref, written in file from, against the tool folder. It
// refuses URLs (http, https, file, any scheme), network paths, absolute
// paths, paths that leave the folder and fragments that are not JSON
// pointers (anchors), saying why.
func parseRef(from, ref string) (refTarget, error) {
	filePart, frag, _ := strings.Cut(ref, "#")
	if strings.Contains(frag, "%") {
		f, err := url.PathUnescape(frag)
		if err != nil {
			return refTarget{}, fmt.Errorf("bad percent-encoding in %q", ref)
		}
		frag = f
	}
	ptr, ok := ParsePointer(frag)
	if !ok {
		return refTarget{}, fmt.Errorf("fragment %q is not a JSON pointer (anchors are not supported); write #/path/to/the/object", "#"+frag)
	}
	if filePart == "" {
		return refTarget{File: from, Pointer: ptr}, nil
	}
	if strings.HasPrefix(filePart, "//") {
		return refTarget{}, fmt.Errorf("network references are refused; dome never fetches: vendor the file into the tool's spec/ folder")
	}
	if u, err := url.Parse(filePart); err == nil && u.Scheme != "" {
		return refTarget{}, fmt.Errorf("%s: references are refused; dome never fetches: vendor the file into the tool's spec/ folder", u.Scheme)
	} else if i := strings.IndexByte(filePart, ':'); i > 0 && !strings.Contains(filePart[:i], "/") {
		return refTarget{}, fmt.Errorf("URL references are refused; dome never fetches: vendor the file into the tool's spec/ folder")
	}
	if strings.Contains(filePart, "%") {
		f, err := url.PathUnescape(filePart)
		if err != nil {
			return refTarget{}, fmt.Errorf("bad percent-encoding in %q", ref)
		}
		filePart = f
	}
	if strings.HasPrefix(filePart, "/") || strings.Contains(filePart, "\\") {
		return refTarget{}, fmt.Errorf("absolute paths are refused: write the path relative to %s", from)
	}
	if strings.ContainsRune(filePart, 0) {
		return refTarget{}, fmt.Errorf("NUL in a path")
	}
	joined := path.Join(path.Dir(from), filePart)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return refTarget{}, fmt.Errorf("the path leaves the tool folder (%w)", errOutside)
	}
	return refTarget{File: joined, Pointer: ptr}, nil
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
