// Package reporead serves the repo-read skill contract's operations to
// agent runs in-process: read_file, list_tree, grep and get_base_ref, each
// a tool named <tool>/<operationId> whose input schema is the operation's
// request body in the contract at the run's commit. The reads are the
// gateway's own (gateway.Reader: git objects at the commit, never a
// checkout; the same bounds, encodings and answers a sandboxed worker
// gets); inputs reach a tool only after they pass that schema and the
// calling agent's grant (pkg/agent's Executor), and listings and searches,
// which read more than the paths a call names, skip every entry the grant
// does not let the agent read.
package reporead

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Operations returns the operations served, by operationId.
func Operations() []string { return []string{"get_base_ref", "grep", "list_tree", "read_file"} }

// blobCacheBytes bounds the blobs one run's tools keep in memory.
const blobCacheBytes = 64 << 20

// Options say what the tools read.
type Options struct {
	Repo    *gitstore.Repo
	Commit  gitstore.Hash
	RunID   string
	Tool    string                       // the contract's tool id, e.g. repo-read
	Schemas map[string]*schemaval.Schema // input schema by operationId
}

type runFunc = func(context.Context, agent.ToolContext, json.RawMessage) (json.RawMessage, error)

// Tools returns one tool per operation whose input schema Options has.
func Tools(o Options) ([]*agent.Tool, error) {
	rd, err := gateway.NewReader(o.Repo, o.Commit, o.RunID, blobCacheBytes)
	if err != nil {
		return nil, fmt.Errorf("reporead: %w", err)
	}
	runs := map[string]runFunc{
		"read_file": op(func(_ context.Context, _ agent.ToolContext, req gateway.ReadFileRequest) (any, error) {
			return rd.ReadFile(req)
		}),
		"list_tree": op(func(_ context.Context, tc agent.ToolContext, req gateway.ListTreeRequest) (any, error) {
			return rd.ListTree(req, filter(tc))
		}),
		"grep": op(func(ctx context.Context, tc agent.ToolContext, req gateway.GrepRequest) (any, error) {
			return rd.Grep(ctx, req, filter(tc))
		}),
		"get_base_ref": op(func(context.Context, agent.ToolContext, struct{}) (any, error) {
			return rd.BaseRef(), nil
		}),
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

// op decodes a tool's input into the gateway's request type and encodes
// its answer as the gateway does.
func op[Req any](f func(context.Context, agent.ToolContext, Req) (any, error)) runFunc {
	return func(ctx context.Context, tc agent.ToolContext, in json.RawMessage) (json.RawMessage, error) {
		var req Req
		if len(in) > 0 {
			if err := json.Unmarshal(in, &req); err != nil {
				return nil, fmt.Errorf("%s: %v", gateway.CodeInvalidArgument, err)
			}
		}
		out, err := f(ctx, tc, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// toolFilter is the calling agent's grant as the gateway's ReadFilter.
type toolFilter struct{ can func(string) bool }

func filter(tc agent.ToolContext) gateway.ReadFilter {
	if tc.CanRead == nil { // no grant said what it may read: nothing
		return toolFilter{func(string) bool { return false }}
	}
	return toolFilter{tc.CanRead}
}

func (f toolFilter) CanRead(p string) bool   { return f.can(p) }
func (f toolFilter) CanList(dir string) bool { return f.can(dir) }

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
