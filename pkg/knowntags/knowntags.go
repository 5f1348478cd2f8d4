package knowntags

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dome-registry/dome/pkg/outfile"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// MaxFileBytes bounds the memory file (about 200,000 tags).
const MaxFileBytes = 32 << 20

// Entry is one remembered tag of one repository.
type Entry struct {
	Repo   string `json:"repository"`
	Tag    string `json:"tag"`    // e.g. registry/petstore/v1.0.0
	Object string `json:"object"` // the tag object id (the commit id for a lightweight tag)
	Commit string `json:"commit"` // the commit the tag peels to
}

type key struct{ repo, tag string }

// MovedError is a tag that points elsewhere than when dome first read it.
type MovedError struct {
	Path  string // the memory file
	First Entry  // what was remembered
	Now   Entry  // what the tag is now
}

func (e *MovedError) Error() string {
	if e.First.Commit == e.Now.Commit {
		return fmt.Sprintf("release tag %s was rewritten: dome first saw it as tag object %s and it is now tag object %s (both on commit %s); a release tag never changes",
			e.Now.Tag, e.First.Object, e.Now.Object, e.Now.Commit)
	}
	return fmt.Sprintf("release tag %s moved: dome first saw it on commit %s and it now points at commit %s; a release tag never moves",
		e.Now.Tag, e.First.Commit, e.Now.Commit)
}

// WriteError is a failure to write the memory (a read-only folder, a full
// disk): the tags were checked, but new ones could not be remembered.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "known tags: cannot remember new tags: " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Store is the memory in one file. It is safe for concurrent use, and
// several processes may share a file.
type Store struct {
	path string

	// OnWriteError, when set, is told of a *WriteError in Observe, which
	// then goes on as if the write had been done: the tags read were still
	// checked against what is remembered, and a read-only home folder does
	// not stop dome from reading a registry. Without it Observe returns the
	// error.
	OnWriteError func(error)

	mu      sync.Mutex
	loaded  bool
	entries map[key]Entry
}

// Open returns the memory kept in the file at path (read when first needed;
// a missing file is an empty memory).
func Open(path string) *Store {
	return &Store{path: path}
}

// Path returns the memory file.
func (s *Store) Path() string { return s.path }

// LogPath returns the file that Accept appends to: the memory file's name
// with ".log" added.
func (s *Store) LogPath() string { return s.path + ".log" }

// Lookup returns what is remembered of a tag.
func (s *Store) Lookup(repo, tag string) (Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return Entry{}, false, err
	}
	e, ok := s.entries[key{repo, tag}]
	return e, ok, nil
}

// Observe compares tags read now with the memory. Tags seen for the first
// time are remembered (one locked write for all of them). A tag that points
// elsewhere than remembered is a *MovedError (the first, in tag order, when
// there are several; the others are not remembered either), and nothing
// about it changes.
func (s *Store) Observe(seen []Entry) error {
	for _, e := range seen {
		if err := checkEntry(e); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLocked(); err != nil {
		return err
	}
	moved, fresh := s.diff(seen)
	if len(fresh) > 0 {
		// Re-read under the lock: another process may have remembered
		// some of these meanwhile, or remembered them differently.
		err := s.update(func(m map[key]Entry) bool {
			var add []Entry
			moved, add = diffIn(m, seen, s.path)
			for _, e := range add {
				m[key{e.Repo, e.Tag}] = e
			}
			return len(add) > 0
		})
		var we *WriteError
		if errors.As(err, &we) && s.OnWriteError != nil {
			s.OnWriteError(we)
			err = nil
		}
		if err != nil {
			return err
		}
	}
	if len(moved) > 0 {
		return moved[0]
	}
	return nil
}

// Accepted is the outcome of Accept.
type Accepted struct {
	Previous *Entry `json:"previous"` // nil: the tag was not remembered
	Now      Entry  `json:"now"`
	Changed  bool   `json:"changed"`
	Log      string `json:"log,omitempty"`
}

// Accept makes the memory hold e as it is now, whatever it held, and
// appends a line to LogPath saying when, who, why and what changed. It is
// the one way to accept a tag that was moved on purpose.
func (s *Store) Accept(e Entry, reason, who string, when time.Time) (*Accepted, error) {
	if err := checkEntry(e); err != nil {
		return nil, err
	}
	reason = strings.Join(strings.Fields(reason), " ")
	if reason == "" {
		return nil, errors.New("a reason is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &Accepted{Now: e}
	err := s.update(func(m map[key]Entry) bool {
		k := key{e.Repo, e.Tag}
		if prev, ok := m[k]; ok {
			p := prev
			out.Previous = &p
			if prev == e {
				return false
			}
		}
		m[k] = e
		out.Changed = true
		return true
	})
	if err != nil || !out.Changed {
		return out, err
	}
	was := "(not remembered)"
	if out.Previous != nil {
		was = out.Previous.Object + " " + out.Previous.Commit
	}
	line := fmt.Sprintf("%s accept %s %s %s -> %s %s by %s: %s\n", when.UTC().Format(time.RFC3339), escape(e.Repo), e.Tag, was, e.Object, e.Commit, escape(who), reason)
	f, err := os.OpenFile(s.LogPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return out, fmt.Errorf("known tags: the memory was updated but the log was not: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		return out, fmt.Errorf("known tags: the memory was updated but the log was not: %w", err)
	}
	if err := f.Sync(); err != nil {
		return out, fmt.Errorf("known tags: log %s: %w", s.LogPath(), err)
	}
	out.Log = s.LogPath()
	return out, nil
}

// diff splits seen into moved tags and tags not remembered yet.
func (s *Store) diff(seen []Entry) ([]*MovedError, []Entry) {
	return diffIn(s.entries, seen, s.path)
}

func diffIn(m map[key]Entry, seen []Entry, path string) ([]*MovedError, []Entry) {
	var moved []*MovedError
	var fresh []Entry
	dup := map[key]bool{}
	for _, e := range seen {
		k := key{e.Repo, e.Tag}
		if dup[k] {
			continue
		}
		dup[k] = true
		prev, ok := m[k]
		switch {
		case !ok:
			fresh = append(fresh, e)
		case prev.Object != e.Object || prev.Commit != e.Commit:
			moved = append(moved, &MovedError{Path: path, First: prev, Now: e})
		}
	}
	sort.Slice(moved, func(i, j int) bool { return moved[i].Now.Tag < moved[j].Now.Tag })
	return moved, fresh
}

// loadLocked reads the file once per Store.
func (s *Store) loadLocked() error {
	if s.loaded {
		return nil
	}
	m, err := readFile(s.path)
	if err != nil {
		return err
	}
	s.entries, s.loaded = m, true
	return nil
}

// update re-reads the file under the write lock, lets change edit the
// entries, and writes them back when it reports a change.
func (s *Store) update(change func(map[key]Entry) bool) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &WriteError{err}
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return &WriteError{err}
	}
	defer unlock()
	m, err := readFile(s.path)
	if err != nil {
		return err
	}
	if change(m) {
		if _, err := outfile.Write(s.path, format(m), outfile.Options{}); err != nil {
			return &WriteError{err}
		}
	}
	s.entries, s.loaded = m, true
	return nil
}

const header = "# dome known tags: the release tags dome has read, per repository, and where\n" +
	"# they pointed then. A tag that later points elsewhere is refused until it is\n" +
	"# accepted with dome registry accept-tag. Line: repository tag tag-object commit.\n"

// format writes the entries sorted, one per line.
func format(m map[key]Entry) []byte {
	es := make([]Entry, 0, len(m))
	for _, e := range m {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].Repo != es[j].Repo {
			return es[i].Repo < es[j].Repo
		}
		return es[i].Tag < es[j].Tag
	})
	var b bytes.Buffer
	b.WriteString(header)
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %s %s\n", escape(e.Repo), e.Tag, e.Object, e.Commit)
	}
	return b.Bytes()
}

// readFile reads the memory file (missing: empty).
func readFile(path string) (map[key]Entry, error) {
	data, err := readlimit.ReadFile(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return map[key]Entry{}, nil
	}
	if t, ok := readlimit.IsTooLarge(err); ok {
		return nil, fmt.Errorf("known tags %s: %w", path, t)
	}
	if err != nil {
		return nil, fmt.Errorf("known tags: %w", err)
	}
	return Parse(path, data)
}

// Parse reads the text of a memory file. A malformed line is an error
// naming the file and the line: a memory dome cannot read is never taken as
// empty.
func Parse(name string, data []byte) (map[key]Entry, error) {
	m := make(map[key]Entry, bytes.Count(data, []byte{'\n'})+1)
	text := string(data) // one copy: the entries' strings share it
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimSuffix(line, "\r")
		if len(line) > 64<<10 {
			return nil, fmt.Errorf("known tags %s: line %d: longer than 64 KiB", name, n)
		}
		if strings.TrimSpace(line) == "" || line[0] == '#' {
			continue
		}
		repo, r1, ok1 := strings.Cut(line, " ")
		tag, r2, ok2 := strings.Cut(r1, " ")
		obj, commit, ok3 := strings.Cut(r2, " ")
		if !ok1 || !ok2 || !ok3 || strings.Contains(commit, " ") {
			return nil, fmt.Errorf("known tags %s: line %d: want \"repository tag tag-object commit\", got %d fields", name, n, len(strings.Split(line, " ")))
		}
		if strings.Contains(repo, "%") || strings.ContainsAny(repo, "\t\x00") {
			var err error
			if repo, err = unescape(repo); err != nil {
				return nil, fmt.Errorf("known tags %s: line %d: repository: %v", name, n, err)
			}
		}
		e := Entry{Repo: repo, Tag: tag, Object: obj, Commit: commit}
		if err := checkEntry(e); err != nil {
			return nil, fmt.Errorf("known tags %s: line %d: %v", name, n, err)
		}
		k := key{e.Repo, e.Tag}
		if prev, dup := m[k]; dup && prev != e {
			return nil, fmt.Errorf("known tags %s: line %d: %s of %s is listed twice with different commits", name, n, e.Tag, e.Repo)
		}
		m[k] = e
	}
	return m, nil
}

func checkEntry(e Entry) error {
	if e.Repo == "" || !utf8Valid(e.Repo) {
		return fmt.Errorf("repository %q: want a non-empty UTF-8 name", e.Repo)
	}
	if e.Tag == "" || strings.ContainsAny(e.Tag, " \t\r\n\x00") {
		return fmt.Errorf("tag %q: want a tag name without whitespace", e.Tag)
	}
	for _, h := range []string{e.Object, e.Commit} {
		if !isHexID(h) {
			return fmt.Errorf("tag %s: %q is not an object id (40 or 64 lowercase hex digits)", e.Tag, h)
		}
	}
	return nil
}

func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// escape writes %XX for "%", "#" (a line may not start like a comment),
// whitespace and control bytes.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c == '#' || c <= ' ' || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescape(s string) (string, error) {
	if strings.ContainsAny(s, "\t\r\n\x00") {
		return "", errors.New("control characters must be escaped")
	}
	return url.PathUnescape(s)
}

// RepoKey names a repository in the memory so that every copy of it gets
// one name: a URL as host and path, without scheme, user, port, a final
// ".git" or "/" (https://github.com/org/reg.git, ssh://git@github.com/org/reg
// and git@github.com:org/reg all are github.com/org/reg); a local path (or a
// file:// URL) as its cleaned absolute form without a final "/.git".
func RepoKey(urlOrPath string) string {
	s := strings.TrimSpace(urlOrPath)
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if u.Scheme == "file" {
			return cleanPath(u.Path)
		}
		host := strings.ToLower(u.Hostname())
		return trimRepo(host + "/" + strings.TrimPrefix(u.Path, "/"))
	}
	// scp-like: [user@]host:path (no slash before the colon).
	if i := strings.Index(s, ":"); i > 0 && !strings.Contains(s[:i], "/") && !filepath.IsAbs(s) {
		host := s[:i]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		return trimRepo(strings.ToLower(host) + "/" + strings.TrimPrefix(s[i+1:], "/"))
	}
	return cleanPath(s)
}

func trimRepo(s string) string {
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, ".git")
	return strings.TrimRight(s, "/")
}

// cleanPath names a local repository by its absolute path, without a final
// "/.git": a worktree's git folder and a clone's origin URL naming that
// worktree are one repository.
func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if t := strings.TrimSuffix(p, "/.git"); t != "" {
		p = t
	}
	return p
}
