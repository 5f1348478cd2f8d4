package gateway

import (
	"bytes"
	"encoding/base64"
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

func (s *Session) readFile(c *call) (any, *apiError) {
	var req ReadFileRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	if e := checkRepoPath("path", req.Path, false); e != nil {
		return nil, e
	}
	c.rec.Path = req.Path
	off, max := int64(0), int64(DefaultReadBytes)
	if req.Offset != nil {
		off = *req.Offset
	}
	if req.MaxBytes != nil {
		max = *req.MaxBytes
	}
	if off < 0 || max < 1 || max > MaxReadBytes {
		return nil, invalid("offset must be >= 0 and max_bytes 1 to %d", MaxReadBytes)
	}
	if _, e := s.authorize(c, &grant.Call{Method: MethodReadFile, ReadPaths: []string{req.Path}}); e != nil {
		return nil, e
	}
	e := s.base.byPath[req.Path]
	if e == nil {
		return nil, notFound("no file %q at base_ref %s", req.Path, s.base.commit.Short())
	}
	if !e.isBlob() {
		return nil, notFound("%q is a %s at base_ref %s, not a file (list it with list_tree)", req.Path, e.typ(), s.base.commit.Short())
	}
	data, err := s.g.blobs.get(s.g.cfg.Repo, e.hash)
	if err != nil {
		return nil, &apiError{status: 500, code: CodeInternal, msg: "read " + req.Path + ": " + err.Error(), retryable: true}
	}
	e.size.Store(int64(len(data)))
	size := int64(len(data))
	chunk := data[min(off, size):min(off+max, size)]
	out := FileContent{Path: req.Path, Blob: e.hash.String(), Size: size, Truncated: off+max < size}
	if utf8.Valid(chunk) {
		out.Encoding, out.Content = "utf-8", string(chunk)
	} else {
		out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(chunk)
	}
	return out, nil
}

// size returns a blob entry's size, reading the blob once.
func (s *Session) size(e *baseEntry) *int64 {
	if !e.isBlob() {
		return nil
	}
	n := e.size.Load()
	if n < 0 {
		data, err := s.g.blobs.get(s.g.cfg.Repo, e.hash)
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

func (s *Session) listTree(c *call) (any, *apiError) {
	var req ListTreeRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	dir := "."
	if req.Path != nil {
		dir = *req.Path
	}
	if e := checkRepoPath("path", dir, true); e != nil {
		return nil, e
	}
	c.rec.Path = dir
	max := DefaultMaxEntries
	if req.MaxEntries != nil {
		max = *req.MaxEntries
	}
	if max < 1 || max > MaxEntries {
		return nil, invalid("max_entries must be 1 to %d", MaxEntries)
	}
	g, e := s.authorize(c, &grant.Call{Method: MethodListTree, ReadPaths: s.listPaths(c.token, dir)})
	if e != nil {
		return nil, e
	}
	if dir != "." {
		if d := s.base.byPath[dir]; d == nil || d.mode != gitstore.ModeDir {
			return nil, notFound("no folder %q at base_ref %s", dir, s.base.commit.Short())
		}
	}
	out := TreeListing{Path: dir, Entries: []TreeEntry{}}
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	for _, be := range s.base.under(dir) {
		if !req.Recursive && strings.Contains(be.path[len(prefix):], "/") {
			continue
		}
		if be.mode == gitstore.ModeDir {
			if !g.CanList(be.path) {
				continue
			}
		} else if g.CheckRead(be.path) != nil {
			continue
		}
		if len(out.Entries) == max {
			out.Truncated = true
			break
		}
		out.Entries = append(out.Entries, TreeEntry{Path: be.path, Type: be.typ(), Mode: modeString(be.mode), Object: be.hash.String(), Size: s.size(be)})
	}
	return out, nil
}

func (s *Session) grep(c *call) (any, *apiError) {
	var req GrepRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, e
	}
	if req.Pattern == "" || len(req.Pattern) > 1024 {
		return nil, invalid("pattern: want 1 to 1024 characters")
	}
	expr := req.Pattern
	if req.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, invalid("pattern: not an RE2 regular expression: %v", err)
	}
	if len(req.Paths) > MaxGrepGlobs {
		return nil, invalid("paths: at most %d globs", MaxGrepGlobs)
	}
	for i, gl := range req.Paths {
		if gl == "" || !doublestar.ValidatePattern(gl) {
			return nil, invalid("paths[%d] %q: not a doublestar glob", i, gl)
		}
	}
	max := DefaultMaxMatches
	if req.MaxMatches != nil {
		max = *req.MaxMatches
	}
	if max < 1 || max > MaxMatches {
		return nil, invalid("max_matches must be 1 to %d", MaxMatches)
	}
	g, e := s.authorize(c, &grant.Call{Method: MethodGrep, ReadPaths: s.listPaths(c.token, ".")})
	if e != nil {
		return nil, e
	}
	out := GrepResult{Matches: []GrepMatch{}}
	scanned := int64(0)
files:
	for _, be := range s.base.entries {
		if be.mode != gitstore.ModeFile && be.mode != gitstore.ModeExec {
			continue
		}
		if len(req.Paths) > 0 {
			hit := false
			for _, gl := range req.Paths {
				if m, _ := doublestar.Match(gl, be.path); m {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
		}
		if g.CheckRead(be.path) != nil {
			continue
		}
		data, err := s.g.blobs.get(s.g.cfg.Repo, be.hash)
		if err != nil || isBinary(data) {
			continue
		}
		if scanned += int64(len(data)); scanned > MaxGrepScanBytes {
			out.Truncated = true
			break
		}
		if !re.Match(data) {
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
			if !re.Match(l) {
				continue
			}
			if len(out.Matches) == max {
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
	return BaseRef{RunID: s.a.RunID, BaseRef: s.base.commit.String(), BaseTreeHash: s.base.tree.String()}, nil
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
