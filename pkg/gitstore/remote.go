package gitstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// IsURL reports whether s names a remote repository (file://, https://,
// http://, ssh://, git:// or scp-like user@host:path) rather than a path.
func IsURL(s string) bool {
	if isSCPLike(s) {
		return true
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "file", "https", "http", "ssh", "git":
		return true
	}
	return false
}

// isSCPLike reports whether s is git's scp-like remote syntax, user@host:path,
// in exactly the language of the regular expression
//
//	^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$
//
// (FuzzIsSCPLike holds it to that). It is written out because bin/dome calls
// IsURL on --repo at every start, and compiling the expression cost a cold
// `dome registry cat` more than the check. Neither class holds '@' or ':', so
// the user ends at the first '@' and the host at the next ':'. Then one
// character that is not '/' (a newline, or an invalid UTF-8 byte, which the
// expression reads as U+FFFD, will do), and no newline after it: the
// expression's '.' stops at one and its '$' is the end of the text.
func isSCPLike(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || !scpClass(s[:at], "._-") {
		return false
	}
	rest := s[at+1:]
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 || !scpClass(rest[:colon], ".-") {
		return false
	}
	path := rest[colon+1:]
	if path == "" || path[0] == '/' {
		return false
	}
	_, size := utf8.DecodeRuneInString(path)
	return strings.IndexByte(path[size:], '\n') < 0
}

// scpClass reports whether every byte of s is an ASCII letter, a digit or
// one of extra.
func scpClass(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// CachePath returns where a remote's cached bare mirror of rawURL is kept
// below cacheDir (pkg/gitstore/gitremote clones it there).
func CachePath(cacheDir, rawURL string) string {
	sum := sha256.Sum256([]byte(rawURL))
	return filepath.Join(cacheDir, "repos", hex.EncodeToString(sum[:12])+".git")
}

// A Fetcher brings a remote's cached mirror up to date with the remote:
// its objects and every ref. pkg/gitstore/gitremote provides the one that
// speaks git's protocols; gitstore itself never touches the network.
type Fetcher interface {
	Fetch(ctx context.Context) error
}

// Mirror says how a repository opened with OpenMirror follows its remote.
type Mirror struct {
	URL     string  // the remote the mirror copies
	Fetcher Fetcher // updates the mirror in place (Repo.Fetch)
	Fetched bool    // the mirror was just cloned or fetched by this process
}

// mirror is the state of a repository opened as a remote's mirror.
type mirror struct {
	url     string
	fetcher Fetcher
	mu      sync.Mutex // serializes fetches of this Repo; guards fetched
	fetched bool
}

// OpenMirror opens dir, the bare mirror of the remote m.URL, as a
// repository whose Fetch calls m.Fetcher. A dir that is not a bare
// repository is ErrNotRepository.
func OpenMirror(dir string, m Mirror) (*Repo, error) {
	if !isBareDir(dir) {
		return nil, ErrNotRepository
	}
	if m.URL == "" || m.Fetcher == nil {
		return nil, fmt.Errorf("open mirror %s: no remote URL or fetcher", dir)
	}
	r, err := openGitDir(dir, "")
	if err != nil {
		return nil, err
	}
	r.mirror = &mirror{url: m.URL, fetcher: m.Fetcher, fetched: m.Fetched}
	return r, nil
}

// RemoteURL returns the URL the repository was opened from (OpenMirror), or "".
func (r *Repo) RemoteURL() string {
	if r.mirror == nil {
		return ""
	}
	return r.mirror.url
}

// Fetched reports whether this process already cloned or fetched the remote.
func (r *Repo) Fetched() bool {
	if r.mirror == nil {
		return false
	}
	r.mirror.mu.Lock()
	defer r.mirror.mu.Unlock()
	return r.mirror.fetched
}

// Fetch updates a remote's cached mirror with every ref of the remote. It is
// a no-op for a local repository and after the first fetch of a process.
// Afterwards the repository reads the packs the fetch added.
func (r *Repo) Fetch(ctx context.Context) error {
	m := r.mirror
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fetched {
		return nil
	}
	if err := m.fetcher.Fetch(ctx); err != nil {
		return err
	}
	m.fetched = true
	if err := r.odb.rescan(); err != nil {
		return fmt.Errorf("fetch %s: %w", m.url, err)
	}
	r.dropTreeCache()
	return nil
}
