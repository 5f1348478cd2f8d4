package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/stack"
)

// Bounds of the read operations (the contract's maxima).
const (
	DefaultReadBytes  = 262144
	MaxReadBytes      = 1 << 20
	DefaultMaxEntries = 10000
	MaxEntries        = 100000
	DefaultMaxMatches = 1000
	MaxMatches        = 10000
	MaxGrepGlobs      = 64
	MaxGrepScanBytes  = 64 << 20 // bytes one grep call reads; past it the answer is truncated
	maxMatchText      = 2000     // bytes of a matching line kept
)

// checkRepoPath refuses a path the contract's RepoPath does not allow or
// that is not written clean (the grant checks the clean form; the answer
// names what was asked).
func checkRepoPath(field, p string, allowDot bool) *apiError {
	if p == "" || len(p) > 4096 {
		return invalid("%s: want 1 to 4096 characters", field)
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.Contains(p, `\`) {
		return invalid("%s %q: want a path relative to the repository root, with forward slashes", field, p)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return invalid("%s %q: control characters are not allowed", field, p)
		}
	}
	if c := path.Clean(p); c != p {
		return invalid("%s %q: write it clean, as %q", field, p, c)
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return invalid("%s %q leaves the repository tree", field, p)
	}
	if p == "." && !allowDot {
		return invalid("%s: name a file, not the repository root", field)
	}
	return nil
}

// Reader answers the read operations of the repo-read skill (read_file,
// list_tree, grep, get_base_ref) on one commit's tree, read from git
// objects. The gateway's sessions use it after checking the grant a call
// presents; agent runs use it in-process (pkg/agent/reporead) after their
// own grant check. Either way what the grant hides, the ReadFilter hides:
// listings and searches, which read more than the paths a call names,
// skip it entry by entry. Safe for concurrent use.
type Reader struct {
	repo  *gitstore.Repo
	base  *baseTree
	blobs *blobCache
	runID string
}

// NewReader indexes commit's tree for the run runID, keeping up to
// cacheBytes of the blobs it reads in memory.
func NewReader(repo *gitstore.Repo, commit gitstore.Hash, runID string, cacheBytes int64) (*Reader, error) {
	b, err := indexTree(repo, commit)
	if err != nil {
		return nil, err
	}
	return &Reader{repo: repo, base: b, blobs: newBlobCache(cacheBytes), runID: runID}, nil
}

// ReadFilter says what a caller's grant lets it see.
type ReadFilter interface {
	CanRead(path string) bool // a file (or symlink, submodule) of a listing or search
	CanList(dir string) bool  // a folder's own entry in a listing
}

// ReadError is a refused or failed read: Code is one of the error
// taxonomy's codes (CodeInvalidArgument, CodeNotFound, CodeInternal).
type ReadError struct {
	Code, Message string
}

func (e *ReadError) Error() string { return e.Code + ": " + e.Message }

func readError(e *apiError) error {
	if e == nil {
		return nil
	}
	return &ReadError{Code: e.code, Message: e.msg}
}

// ReadFile answers read_file.
func (r *Reader) ReadFile(req ReadFileRequest) (FileContent, error) {
	if e := checkRepoPath("path", req.Path, false); e != nil {
		return FileContent{}, readError(e)
	}
	off, max, e := readBounds(req)
	if e != nil {
		return FileContent{}, readError(e)
	}
	out, e := r.readFile(req.Path, off, max)
	return out, readError(e)
}

// ListTree answers list_tree.
func (r *Reader) ListTree(req ListTreeRequest, f ReadFilter) (TreeListing, error) {
	dir, max, e := listBounds(req)
	if e != nil {
		return TreeListing{}, readError(e)
	}
	out, e := r.listTree(dir, req.Recursive, max, f)
	return out, readError(e)
}

// Grep answers grep; ctx stops a long search.
func (r *Reader) Grep(ctx context.Context, req GrepRequest, f ReadFilter) (GrepResult, error) {
	q, e := compileGrep(req)
	if e != nil {
		return GrepResult{}, readError(e)
	}
	out, e := r.grep(ctx, q, f)
	return out, readError(e)
}

// BaseRef answers get_base_ref.
func (r *Reader) BaseRef() BaseRef {
	return BaseRef{RunID: r.runID, BaseRef: r.base.commit.String(), BaseTreeHash: r.base.tree.String()}
}

// grantFilter is a grant as a ReadFilter.
type grantFilter struct{ g *grant.Grant }

func (f grantFilter) CanRead(p string) bool   { return f.g.CheckRead(p) == nil }
func (f grantFilter) CanList(dir string) bool { return f.g.CanList(dir) }

func (s *Session) reader() *Reader {
	return &Reader{repo: s.g.cfg.Repo, base: s.base, blobs: s.g.blobs, runID: s.a.RunID}
}

func readBounds(req ReadFileRequest) (off, max int64, e *apiError) {
	off, max = 0, DefaultReadBytes
	if req.Offset != nil {
		off = *req.Offset
	}
	if req.MaxBytes != nil {
		max = *req.MaxBytes
	}
	if off < 0 || max < 1 || max > MaxReadBytes {
		return 0, 0, invalid("offset must be >= 0 and max_bytes 1 to %d", MaxReadBytes)
	}
	return off, max, nil
}

func (s *Session) readFile(c *call) (any, *apiError) {
	var req ReadFileRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	if e := checkRepoPath("path", req.Path, false); e != nil {
		return nil, e
	}
	c.rec.Path = req.Path
	off, max, e := readBounds(req)
	if e != nil {
		return nil, e
	}
	if _, e := s.authorize(c, &grant.Call{Method: MethodReadFile, ReadPaths: []string{req.Path}}); e != nil {
		return nil, e
	}
	out, e := s.reader().readFile(req.Path, off, max)
	if e != nil {
		return nil, e
	}
	return out, nil
}

func (r *Reader) readFile(p string, off, max int64) (FileContent, *apiError) {
	e := r.base.byPath[p]
	if e == nil {
		return FileContent{}, notFound("no file %q at base_ref %s", p, r.base.commit.Short())
	}
	if !e.isBlob() {
		return FileContent{}, notFound("%q is a %s at base_ref %s, not a file (list it with list_tree)", p, e.typ(), r.base.commit.Short())
	}
	data, err := r.blobs.get(r.repo, e.hash)
	if err != nil {
		return FileContent{}, &apiError{status: 500, code: CodeInternal, msg: "read " + p + ": " + err.Error(), retryable: true}
	}
	e.size.Store(int64(len(data)))
	size := int64(len(data))
	chunk := data[min(off, size):min(off+max, size)]
	out := FileContent{Path: p, Blob: e.hash.String(), Size: size, Truncated: off+max < size}
	// Binary content (git's test: a NUL byte near the start) goes as
	// base64 even when its bytes happen to be valid UTF-8.
	if utf8.Valid(chunk) && !isBinary(data) {
		out.Encoding, out.Content = "utf-8", string(chunk)
	} else {
		out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(chunk)
	}
	return out, nil
}

// size returns a blob entry's size, reading the blob once.
func (r *Reader) size(e *baseEntry) *int64 {
	if !e.isBlob() {
		return nil
	}
	n := e.size.Load()
	if n < 0 {
		data, err := r.blobs.get(r.repo, e.hash)
		if err != nil {
			return nil
		}
		n = int64(len(data))
		e.size.Store(n)
	}
	return &n
}

// listPaths returns the read paths a listing or search of dir is checked
// with: none when the grant may list below dir (entries are filtered one
// by one), else dir itself, so that Authorize refuses it with its reason.
func (s *Session) listPaths(token []byte, dir string) []string {
	if g := s.parsedGrant(token); g != nil && g.CanList(dir) {
		return nil
	}
	return []string{dir}
}

func listBounds(req ListTreeRequest) (dir string, max int, e *apiError) {
	dir = "."
	if req.Path != nil {
		dir = *req.Path
	}
	if e := checkRepoPath("path", dir, true); e != nil {
		return "", 0, e
	}
	max = DefaultMaxEntries
	if req.MaxEntries != nil {
		max = *req.MaxEntries
	}
	if max < 1 || max > MaxEntries {
		return dir, 0, invalid("max_entries must be 1 to %d", MaxEntries)
	}
	return dir, max, nil
}

func (s *Session) listTree(c *call) (any, *apiError) {
	var req ListTreeRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	dir, max, e := listBounds(req)
	if dir != "" {
		c.rec.Path = dir
	}
	if e != nil {
		return nil, e
	}
	g, e := s.authorize(c, &grant.Call{Method: MethodListTree, ReadPaths: s.listPaths(c.token, dir)})
	if e != nil {
		return nil, e
	}
	out, e := s.reader().listTree(dir, req.Recursive, max, grantFilter{g})
	if e != nil {
		return nil, e
	}
	return out, nil
}

func (r *Reader) listTree(dir string, recursive bool, max int, f ReadFilter) (TreeListing, *apiError) {
	if dir != "." {
		if d := r.base.byPath[dir]; d == nil || d.mode != gitstore.ModeDir {
			return TreeListing{}, notFound("no folder %q at base_ref %s", dir, r.base.commit.Short())
		}
	}
	out := TreeListing{Path: dir, Entries: []TreeEntry{}}
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	for _, be := range r.base.under(dir) {
		if !recursive && strings.Contains(be.path[len(prefix):], "/") {
			continue
		}
		if be.mode == gitstore.ModeDir {
			if !f.CanList(be.path) {
				continue
			}
		} else if !f.CanRead(be.path) {
			continue
		}
		if len(out.Entries) == max {
			out.Truncated = true
			break
		}
		out.Entries = append(out.Entries, TreeEntry{Path: be.path, Type: be.typ(), Mode: modeString(be.mode), Object: be.hash.String(), Size: r.size(be)})
	}
	return out, nil
}

// grepQuery is a checked grep request.
type grepQuery struct {
	re    *regexp.Regexp
	globs []string
	max   int
}

func compileGrep(req GrepRequest) (grepQuery, *apiError) {
	if req.Pattern == "" || len(req.Pattern) > 1024 {
		return grepQuery{}, invalid("pattern: want 1 to 1024 characters")
	}
	expr := req.Pattern
	if req.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return grepQuery{}, invalid("pattern: not an RE2 regular expression: %v", err)
	}
	if len(req.Paths) > MaxGrepGlobs {
		return grepQuery{}, invalid("paths: at most %d globs", MaxGrepGlobs)
	}
	for i, gl := range req.Paths {
		if gl == "" || !doublestar.ValidatePattern(gl) {
			return grepQuery{}, invalid("paths[%d] %q: not a doublestar glob", i, gl)
		}
	}
	max := DefaultMaxMatches
	if req.MaxMatches != nil {
		max = *req.MaxMatches
	}
	if max < 1 || max > MaxMatches {
		return grepQuery{}, invalid("max_matches must be 1 to %d", MaxMatches)
	}
	return grepQuery{re: re, globs: req.Paths, max: max}, nil
}

func (s *Session) grep(c *call) (any, *apiError) {
	var req GrepRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	q, e := compileGrep(req)
	if e != nil {
		return nil, e
	}
	g, e := s.authorize(c, &grant.Call{Method: MethodGrep, ReadPaths: s.listPaths(c.token, ".")})
	if e != nil {
		return nil, e
	}
	out, e := s.reader().grep(c.ctx, q, grantFilter{g})
	if e != nil {
		return nil, e
	}
	return out, nil
}

func (r *Reader) grep(ctx context.Context, q grepQuery, f ReadFilter) (GrepResult, *apiError) {
	out := GrepResult{Matches: []GrepMatch{}}
	scanned := int64(0)
files:
	for _, be := range r.base.entries {
		if be.mode != gitstore.ModeFile && be.mode != gitstore.ModeExec {
			continue
		}
		if len(q.globs) > 0 {
			hit := false
			for _, gl := range q.globs {
				if m, _ := doublestar.Match(gl, be.path); m {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
		}
		if !f.CanRead(be.path) {
			continue
		}
		if ctx != nil && ctx.Err() != nil {
			return GrepResult{}, &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, msg: "grep stopped: " + ctx.Err().Error(), retryable: true}
		}
		data, err := r.blobs.get(r.repo, be.hash)
		if err != nil || isBinary(data) {
			continue
		}
		if scanned += int64(len(data)); scanned > MaxGrepScanBytes {
			out.Truncated = true
			break
		}
		if !q.re.Match(data) {
			continue
		}
		line := 0
		for len(data) > 0 {
			line++
			i := bytes.IndexByte(data, '\n')
			l := data
			if i >= 0 {
				l, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !q.re.Match(l) {
				continue
			}
			if len(out.Matches) == q.max {
				out.Truncated = true
				break files
			}
			text := bytes.TrimSuffix(l, []byte("\r"))
			if len(text) > maxMatchText {
				text = text[:maxMatchText]
			}
			out.Matches = append(out.Matches, GrepMatch{Path: be.path, Line: line, Text: strings.ToValidUTF8(string(text), "\uFFFD")})
		}
	}
	return out, nil
}

func (s *Session) getBaseRef(c *call) (any, *apiError) {
	var req struct{}
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	if _, e := s.authorize(c, &grant.Call{Method: MethodGetBaseRef}); e != nil {
		return nil, e
	}
	return s.reader().BaseRef(), nil
}

func (s *Session) getDiffStats(c *call) (any, *apiError) {
	var req DiffStatsRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	if !stack.IsFullSHA(req.ToRef) {
		return nil, invalid("to_ref %q: want a full commit SHA (40 lowercase hex digits)", req.ToRef)
	}
	g, e := s.authorize(c, &grant.Call{Method: MethodGetDiffStats})
	if e != nil {
		return nil, e
	}
	repo := s.g.cfg.Repo
	to, _ := gitstore.ParseHash(req.ToRef)
	var files []gitstore.File
	tree, err := repo.CommitTree(to)
	if err == nil && s.g.cfg.Run.KnownCommit(req.ToRef) {
		files, err = repo.Walk(tree)
	}
	if err != nil || !s.g.cfg.Run.KnownCommit(req.ToRef) {
		// Commits outside the run (other branches) are answered as absent:
		// a worker learns nothing of what the run does not hold.
		return nil, notFound("no commit %s in the run's repository", req.ToRef)
	}
	out := DiffStats{BaseRef: s.base.commit.String(), ToRef: req.ToRef, Files: []FileStat{}}
	newSide := make(map[string]gitstore.File, len(files))
	for _, f := range files {
		newSide[f.Path] = f
	}
	var paths []string
	for _, be := range s.base.entries {
		if be.mode == gitstore.ModeDir {
			continue
		}
		if f, ok := newSide[be.path]; !ok || f.Hash != be.hash || f.Mode != be.mode {
			paths = append(paths, be.path)
		}
	}
	for _, f := range files {
		if _, ok := s.base.byPath[f.Path]; !ok {
			paths = append(paths, f.Path)
		}
	}
	sort.Strings(paths)
	read := func(h gitstore.Hash, m gitstore.Mode) []byte {
		if m == gitstore.ModeSubmodule {
			return nil
		}
		b, _ := s.g.blobs.get(repo, h)
		return b
	}
	for _, p := range paths {
		if g.CheckRead(p) != nil {
			continue
		}
		var old, nw []byte
		if be := s.base.byPath[p]; be != nil {
			old = read(be.hash, be.mode)
		}
		if f, ok := newSide[p]; ok {
			nw = read(f.Hash, f.Mode)
		}
		a, r, bin := numstat(old, nw)
		out.Files = append(out.Files, FileStat{Path: p, Added: a, Removed: r, Binary: bin})
		out.Added += a
		out.Removed += r
	}
	return out, nil
}
