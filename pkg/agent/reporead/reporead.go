// Package reporead serves the repo-read skill contract's operations to
// agent runs in-process: read_file, list_tree, grep and get_base_ref, read
// from git objects at the run's commit (never a checkout), each a tool
// named <tool>/<operationId> whose input schema is the operation's request
// body in the contract at that commit. Inputs reach a tool only after they
// pass that schema and the calling agent's grant (pkg/agent's Executor);
// grep, which reads more than the paths a call names, skips every file the
// grant does not let the agent read. Outputs follow the contract's response
// schemas. Reads are bounded: a file is returned up to max_bytes, grep
// skips files over 1 MiB and binary ones, listings and matches stop at
// their limits and say they were cut.
package reporead

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Operations returns the operations served, by operationId.
func Operations() []string { return []string{"get_base_ref", "grep", "list_tree", "read_file"} }

// Limits.
const (
	maxGrepFileBytes = 1 << 20
	maxLineBytes     = 1000
)

// Options say what the tools read.
type Options struct {
	Repo    *gitstore.Repo
	Commit  gitstore.Hash
	RunID   string
	Tool    string                       // the contract's tool id, e.g. repo-read
	Schemas map[string]*schemaval.Schema // input schema by operationId
}

// Tools returns one tool per operation whose input schema Options has.
func Tools(o Options) ([]*agent.Tool, error) {
	tree, err := o.Repo.CommitTree(o.Commit)
	if err != nil {
		return nil, fmt.Errorf("reporead: commit %s: %w", o.Commit.Short(), err)
	}
	s := &server{repo: o.Repo, commit: o.Commit, tree: tree, runID: o.RunID}
	runs := map[string]func(context.Context, agent.ToolContext, json.RawMessage) (json.RawMessage, error){
		"read_file": s.readFile, "list_tree": s.listTree, "grep": s.grep, "get_base_ref": s.baseRef,
	}
	access := map[string]func(json.RawMessage) agent.Access{
		"read_file": pathAccess, "list_tree": pathAccess, "grep": grepAccess,
	}
	var out []*agent.Tool
	for _, op := range Operations() {
		schema, ok := o.Schemas[op]
		if !ok {
			continue
		}
		out = append(out, &agent.Tool{Name: o.Tool + "/" + op, Input: schema, Access: access[op], Run: runs[op],
			Description: "repo-read " + op + " at " + o.Commit.Short()})
	}
	return out, nil
}

type server struct {
	repo   *gitstore.Repo
	commit gitstore.Hash
	tree   gitstore.Hash
	runID  string
}

// pathAccess: read_file and list_tree read the path they name.
func pathAccess(in json.RawMessage) agent.Access {
	var x struct {
		Path string `json:"path"`
	}
	json.Unmarshal(in, &x)
	if x.Path == "" {
		x.Path = "."
	}
	return agent.Access{ReadPaths: []string{x.Path}}
}

// grepAccess: a search reads below the fixed prefix of each glob (the
// whole tree without globs); files are checked one by one as well.
func grepAccess(in json.RawMessage) agent.Access {
	var x struct {
		Paths []string `json:"paths"`
	}
	json.Unmarshal(in, &x)
	if len(x.Paths) == 0 {
		return agent.Access{ReadPaths: []string{"."}}
	}
	var out []string
	for _, g := range x.Paths {
		out = append(out, globPrefix(g))
	}
	return agent.Access{ReadPaths: out}
}

// globPrefix is the directory part of a glob before its first pattern
// character ("." when it starts with one).
func globPrefix(g string) string {
	i := strings.IndexAny(g, "*?[{\\")
	if i < 0 {
		return g
	}
	d := path.Dir(g[:i] + "x")
	if d == "" {
		return "."
	}
	return d
}

func cleanPath(p string) (string, error) {
	if p == "" || p == "." {
		return ".", nil
	}
	return registry.CleanRelPath(p)
}

func (s *server) entry(p string) (gitstore.TreeEntry, error) {
	if p == "." {
		return gitstore.TreeEntry{Mode: gitstore.ModeDir, Hash: s.tree}, nil
	}
	e, err := s.repo.EntryAt(s.tree, p)
	if errors.Is(err, gitstore.ErrNotFound) {
		return e, fmt.Errorf("NOT_FOUND: %s does not exist at %s", p, s.commit.Short())
	}
	return e, err
}

func (s *server) readFile(_ context.Context, _ agent.ToolContext, in json.RawMessage) (json.RawMessage, error) {
	var req struct {
		Path     string `json:"path"`
		Offset   int64  `json:"offset"`
		MaxBytes int64  `json:"max_bytes"`
	}
	req.MaxBytes = 262144
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, err
	}
	p, err := cleanPath(req.Path)
	if err != nil || p == "." {
		return nil, fmt.Errorf("INVALID_ARGUMENT: path %q: %v", req.Path, err)
	}
	e, err := s.entry(p)
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsRegular() {
		return nil, fmt.Errorf("INVALID_ARGUMENT: %s is not a regular file (mode %s): symlinks and folders are not read", p, e.Mode)
	}
	size, err := s.repo.BlobSize(e.Hash)
	if err != nil {
		return nil, err
	}
	data, err := s.repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	if req.Offset > size {
		req.Offset = size
	}
	end := min(size, req.Offset+req.MaxBytes)
	chunk := data[req.Offset:end]
	out := map[string]any{"path": p, "blob": e.Hash.String(), "size": size, "truncated": end < size}
	if utf8.Valid(chunk) && bytes.IndexByte(chunk, 0) < 0 {
		out["encoding"], out["content"] = "utf-8", string(chunk)
	} else {
		out["encoding"], out["content"] = "base64", base64.StdEncoding.EncodeToString(chunk)
	}
	return json.Marshal(out)
}

type treeEntry struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Mode   string `json:"mode"`
	Object string `json:"object"`
	Size   *int64 `json:"size,omitempty"`
}

func typeOf(m gitstore.Mode) string {
	switch {
	case m.IsDir():
		return "tree"
	case m == gitstore.ModeSymlink:
		return "symlink"
	case m == gitstore.ModeSubmodule:
		return "submodule"
	}
	return "blob"
}

func (s *server) listTree(_ context.Context, tc agent.ToolContext, in json.RawMessage) (json.RawMessage, error) {
	req := struct {
		Path       string `json:"path"`
		Recursive  bool   `json:"recursive"`
		MaxEntries int    `json:"max_entries"`
	}{Path: ".", MaxEntries: 10000}
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, err
	}
	p, err := cleanPath(req.Path)
	if err != nil {
		return nil, fmt.Errorf("INVALID_ARGUMENT: path %q: %v", req.Path, err)
	}
	e, err := s.entry(p)
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsDir() {
		return nil, fmt.Errorf("INVALID_ARGUMENT: %s is not a folder", p)
	}
	entries := []treeEntry{}
	truncated := false
	var walk func(prefix string, t gitstore.Hash) error
	walk = func(prefix string, t gitstore.Hash) error {
		es, err := s.repo.ReadTree(t)
		if err != nil {
			return err
		}
		for _, e := range es {
			full := e.Name
			if prefix != "." {
				full = prefix + "/" + e.Name
			}
			if !tc.CanRead(full) {
				continue // what the grant does not let the agent read, it does not see
			}
			if len(entries) == req.MaxEntries {
				truncated = true
				return nil
			}
			te := treeEntry{Path: full, Type: typeOf(e.Mode), Mode: e.Mode.String(), Object: e.Hash.String()}
			if e.Mode.IsRegular() {
				if n, err := s.repo.BlobSize(e.Hash); err == nil {
					te.Size = &n
				}
			}
			entries = append(entries, te)
			if req.Recursive && e.Mode.IsDir() {
				if err := walk(full, e.Hash); err != nil || truncated {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(p, e.Hash); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"path": p, "entries": entries, "truncated": truncated})
}

type grepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func (s *server) grep(ctx context.Context, tc agent.ToolContext, in json.RawMessage) (json.RawMessage, error) {
	req := struct {
		Pattern    string   `json:"pattern"`
		Paths      []string `json:"paths"`
		IgnoreCase bool     `json:"ignore_case"`
		MaxMatches int      `json:"max_matches"`
	}{MaxMatches: 1000}
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, err
	}
	expr := req.Pattern
	if req.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("INVALID_ARGUMENT: pattern: %v", err)
	}
	for _, g := range req.Paths {
		if !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("INVALID_ARGUMENT: paths: %q is not a valid glob", g)
		}
	}
	files, err := s.repo.Walk(s.tree)
	if err != nil {
		return nil, err
	}
	matches := []grepMatch{}
	truncated := false
	for _, f := range files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !f.Mode.IsRegular() || !matchesAny(req.Paths, f.Path) || !tc.CanRead(f.Path) {
			continue
		}
		if n, err := s.repo.BlobSize(f.Hash); err != nil || n > maxGrepFileBytes {
			continue
		}
		data, err := s.repo.ReadBlob(f.Hash)
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if !re.Match(line) {
				continue
			}
			if len(matches) == req.MaxMatches {
				truncated = true
				break
			}
			text := strings.ToValidUTF8(string(bytes.TrimRight(line, "\r")), "\uFFFD")
			if len(text) > maxLineBytes {
				text = text[:maxLineBytes]
				for !utf8.ValidString(text) {
					text = text[:len(text)-1]
				}
			}
			matches = append(matches, grepMatch{Path: f.Path, Line: i + 1, Text: text})
		}
		if truncated {
			break
		}
	}
	return json.Marshal(map[string]any{"matches": matches, "truncated": truncated})
}

func matchesAny(globs []string, p string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
	}
	return false
}

func (s *server) baseRef(context.Context, agent.ToolContext, json.RawMessage) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"run_id": s.runID, "base_ref": s.commit.String(), "base_tree_hash": s.tree.String()})
}
