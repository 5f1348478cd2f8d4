// Package worker is the worker's side of a wave run, what dome worker
// submit does inside the sandbox: read the scratch tree the worker changed,
// diff it against the wave's base as the gateway's repo-read skill shows it
// (get_base_ref, one recursive list_tree, read_file of each file that
// changed or went away), seal the diff as a patch proposal
// (dome.patch_proposal/v1) and submit it with the attempt's grant through
// the patch-proposal skill. It refuses paths git refuses (pkg/gitpath),
// symlinks whose target leaves the tree, files that are neither regular
// files nor symlinks, and trees past its bounds; a folder the grant may not
// read is not in the scratch tree, so it is not in the diff either. It
// runs no git and needs no repository.
package worker

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
)

// Defaults of Options.
const (
	DefaultMaxFiles = 100000
	DefaultMaxBytes = 256 << 20
)

// Attempt is who submits: the ids the coordinator hands the worker
// (DOME_RUN_ID, DOME_WAVE_ID, DOME_NODE_ID, DOME_NODE_EXECUTION_ID,
// DOME_WORKER_ID). The gateway replaces them with its own in the proposal
// it keeps; they name the proposal the worker seals.
type Attempt struct {
	RunID, WaveID, NodeID, NodeExecutionID, WorkerID string
}

// Options of a submission.
type Options struct {
	Dir         string // the scratch tree
	Attempt     Attempt
	IntentTags  []string
	Constraints stack.DeclaredConstraints
	Exclude     []string // doublestar globs of paths to leave out of the diff (build output, caches)
	KeySuffix   string   // the idempotency key is <node_execution_id>:<KeySuffix> (default submit_patch:1)
	MaxFiles    int
	MaxBytes    int64
	Now         time.Time
}

// Result is what a submission did.
type Result struct {
	BaseRef  string                `json:"base_ref"`
	Touched  []string              `json:"touched_files"`
	NoChange bool                  `json:"no_change"` // nothing to propose: nothing was submitted
	Submit   *gateway.SubmitResult `json:"submit,omitempty"`
	Calls    int                   `json:"calls"` // gateway calls made
}

// Submit diffs opts.Dir against the wave's base through c and submits the
// change.
func Submit(ctx context.Context, c *gateway.Client, opts Options) (Result, error) {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.KeySuffix == "" {
		opts.KeySuffix = "submit_patch:1"
	}
	a := opts.Attempt
	if a.NodeExecutionID == "" || a.RunID == "" || a.WaveID == "" {
		return Result{}, &errkind.InputError{Source: "environment", Problem: "the attempt's run, wave and node execution ids are not set",
			Hint: "run it as a worker of dome run (which sets DOME_RUN_ID, DOME_WAVE_ID, DOME_NODE_EXECUTION_ID), or pass them as flags"}
	}
	for _, g := range opts.Exclude {
		if !doublestar.ValidatePattern(g) {
			return Result{}, &errkind.InputError{Source: "--exclude", Field: g, Problem: "not a doublestar glob"}
		}
	}
	files, err := ReadTree(opts.Dir, opts.Exclude, opts.MaxFiles, opts.MaxBytes)
	if err != nil {
		return Result{}, err
	}
	res := Result{}
	base, err := c.GetBaseRef(ctx)
	res.Calls++
	if err != nil {
		return res, err
	}
	res.BaseRef = base.BaseRef
	st, err := newGatewayStore(ctx, c, &res.Calls)
	if err != nil {
		return res, err
	}
	tree, ok := gitstore.ParseHash(base.BaseTreeHash)
	if !ok {
		return res, fmt.Errorf("get_base_ref: base_tree_hash %q is not an object id", base.BaseTreeHash)
	}
	st.root = tree
	p, err := patch.DiffTree(st, tree, files, patch.DiffOptions{})
	if err != nil {
		if st.err != nil {
			return res, st.err
		}
		return res, &errkind.InputError{Source: opts.Dir, Problem: err.Error()}
	}
	if len(p.Files) == 0 {
		res.NoChange = true
		return res, nil
	}
	key := a.NodeExecutionID + ":" + opts.KeySuffix
	prop, err := stack.ProposeDiff(base.BaseRef, base.BaseTreeHash, patch.Format(p), stack.ProposeOptions{
		RunID: a.RunID, WaveID: a.WaveID, DiffSource: "the scratch tree", ProposalID: proposalID(a),
		IntentTags: opts.IntentTags, Constraints: opts.Constraints, IdempotencyKey: key,
		Worker:    stack.WorkerRunMeta{WorkerID: orDefault(a.WorkerID, "worker"), NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID},
		CreatedAt: opts.Now, Producer: "dome worker submit",
	})
	if err != nil {
		return res, err
	}
	res.Touched = prop.Proposal.TouchedFiles
	sr, err := c.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: key, NodeExecutionID: a.NodeExecutionID, Proposal: prop.Doc})
	res.Calls++
	if err != nil {
		return res, err
	}
	res.Submit = &sr
	return res, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// proposalID is the id the worker gives its proposal (the gateway keeps
// the proposal as the task's).
func proposalID(a Attempt) string {
	id := a.NodeID
	if id == "" {
		id = "proposal"
	}
	return id
}

// ReadTree reads the files below dir as the new side of a diff: regular
// files (executable when any execute bit is set) and symlinks whose target
// stays in the tree, skipping paths matching exclude. It refuses, naming
// the path, what git would refuse, other file types, and trees past
// maxFiles or maxBytes. Nothing is followed: a symlink is read as a link.
func ReadTree(dir string, exclude []string, maxFiles int, maxBytes int64) ([]patch.NewFile, error) {
	var out []patch.NewFile
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, g := range exclude {
			if m, _ := doublestar.Match(g, rel); m {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() {
			if err := patch.CheckPath(rel+"/x", patch.ModeFile); err != nil {
				return refused(rel, err)
			}
			return nil
		}
		if len(out) >= maxFiles {
			return &errkind.InputError{Source: dir, Problem: fmt.Sprintf("more than %d files", maxFiles), Hint: "leave build output out with --exclude GLOB"}
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			target = filepath.ToSlash(target)
			if err := patch.CheckPath(rel, patch.ModeSymlink); err != nil {
				return refused(rel, err)
			}
			if err := patch.CheckSymlink(rel, []byte(target)); err != nil {
				return refused(rel, err)
			}
			out = append(out, patch.NewFile{Path: rel, Mode: patch.ModeSymlink, Data: []byte(target)})
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			if total += info.Size(); total > maxBytes {
				return &errkind.InputError{Source: dir, Problem: fmt.Sprintf("the tree is over %d bytes", maxBytes), Hint: "leave build output out with --exclude GLOB"}
			}
			mode := patch.ModeFile
			if info.Mode()&0o111 != 0 {
				mode = patch.ModeExec
			}
			if err := patch.CheckPath(rel, mode); err != nil {
				return refused(rel, err)
			}
			data, err := readBounded(p, info.Size())
			if err != nil {
				return err
			}
			out = append(out, patch.NewFile{Path: rel, Mode: mode, Data: data})
		default:
			return &errkind.InputError{Source: dir, Field: rel, Problem: "not a regular file, a folder or a symlink", Hint: "remove it, or leave it out with --exclude"}
		}
		return nil
	})
	if err != nil {
		var ie *errkind.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func refused(rel string, err error) error {
	return &errkind.InputError{Source: "the scratch tree", Field: rel, Problem: err.Error(), Hint: "git refuses this path: rename or remove it"}
}

// readBounded reads a file that stat said is size bytes, refusing one that
// grew meanwhile.
func readBounded(p string, size int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > size {
		return nil, fmt.Errorf("%s changed while it was read", p)
	}
	return data, nil
}

// gatewayStore is the base tree as the gateway shows it: one recursive
// listing, and blobs read on demand (each checked against its id).
type gatewayStore struct {
	ctx   context.Context
	c     *gateway.Client
	calls *int
	root  gitstore.Hash
	trees map[gitstore.Hash][]patch.TreeEntry
	paths map[gitstore.Hash]string // blob id -> a path holding it
	err   error
}

func newGatewayStore(ctx context.Context, c *gateway.Client, calls *int) (*gatewayStore, error) {
	max := gateway.MaxEntries
	ls, err := c.ListTree(ctx, gateway.ListTreeRequest{Recursive: true, MaxEntries: &max})
	*calls++
	if err != nil {
		return nil, err
	}
	if ls.Truncated {
		return nil, fmt.Errorf("list_tree: the base tree has more than %d entries", max)
	}
	s := &gatewayStore{ctx: ctx, c: c, calls: calls, trees: map[gitstore.Hash][]patch.TreeEntry{}, paths: map[gitstore.Hash]string{}}
	dirs := map[string]gitstore.Hash{".": {}}
	for _, e := range ls.Entries {
		if e.Type == gateway.TypeTree {
			h, ok := gitstore.ParseHash(e.Object)
			if !ok {
				return nil, fmt.Errorf("list_tree: %s: bad object id %q", e.Path, e.Object)
			}
			dirs[e.Path] = h
		}
	}
	children := map[string][]patch.TreeEntry{}
	for _, e := range ls.Entries {
		h, ok := gitstore.ParseHash(e.Object)
		if !ok {
			return nil, fmt.Errorf("list_tree: %s: bad object id %q", e.Path, e.Object)
		}
		var mode patch.Mode
		switch e.Mode {
		case "040000":
			mode = patch.ModeDir
		case "100644":
			mode = patch.ModeFile
		case "100755":
			mode = patch.ModeExec
		case "120000":
			mode = patch.ModeSymlink
		case "160000":
			mode = patch.ModeSubmodule
		default:
			return nil, fmt.Errorf("list_tree: %s: mode %q", e.Path, e.Mode)
		}
		parent, name := ".", e.Path
		if i := strings.LastIndexByte(e.Path, '/'); i >= 0 {
			parent, name = e.Path[:i], e.Path[i+1:]
		}
		children[parent] = append(children[parent], patch.TreeEntry{Name: name, Mode: mode, ID: h})
		if mode != patch.ModeDir && mode != patch.ModeSubmodule {
			s.paths[h] = e.Path
		}
	}
	for d, h := range dirs {
		s.trees[h] = children[d]
	}
	s.trees[gitstore.Hash{}] = children["."]
	return s, nil
}

func (s *gatewayStore) ReadTree(id patch.OID) ([]patch.TreeEntry, error) {
	if id == s.root {
		id = gitstore.Hash{}
	}
	es, ok := s.trees[id]
	if !ok {
		return nil, fmt.Errorf("tree %s is not in the gateway's listing", id.Short())
	}
	return es, nil
}

func (s *gatewayStore) ReadBlob(id patch.OID) ([]byte, error) {
	p, ok := s.paths[id]
	if !ok {
		return nil, fmt.Errorf("blob %s is not in the gateway's listing", id.Short())
	}
	var data []byte
	off, max := int64(0), int64(gateway.MaxReadBytes)
	for {
		fc, err := s.c.ReadFile(s.ctx, gateway.ReadFileRequest{Path: p, Offset: &off, MaxBytes: &max})
		*s.calls++
		if err != nil {
			s.err = err
			return nil, s.err
		}
		chunk := []byte(fc.Content)
		if fc.Encoding == "base64" {
			if chunk, err = base64.StdEncoding.DecodeString(fc.Content); err != nil {
				return nil, fmt.Errorf("read_file %s: %w", p, err)
			}
		}
		data = append(data, chunk...)
		if !fc.Truncated {
			break
		}
		if len(chunk) == 0 {
			return nil, fmt.Errorf("read_file %s: a truncated answer without content", p)
		}
		off += int64(len(chunk))
	}
	if patch.BlobID(data) != id {
		return nil, fmt.Errorf("read_file %s: the content is not blob %s", p, id.Short())
	}
	return data, nil
}

func (s *gatewayStore) WriteBlob([]byte) (patch.OID, error) {
	return patch.OID{}, errors.New("the gateway's base tree is read-only")
}

func (s *gatewayStore) WriteTree([]patch.TreeEntry) (patch.OID, error) {
	return patch.OID{}, errors.New("the gateway's base tree is read-only")
}
