package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// Tool is a parsed tool.json.
type Tool struct {
	SchemaVersion  string      `json:"schema_version"`
	ID             string      `json:"id"`
	Title          string      `json:"title"`
	Description    string      `json:"description,omitempty"`
	Owners         []string    `json:"owners"`
	Spec           string      `json:"spec"`
	DefaultProfile string      `json:"default_profile,omitempty"`
	Labels         []string    `json:"labels,omitempty"`
	Homepage       string      `json:"homepage,omitempty"`
	Deprecated     *Deprecated `json:"deprecated,omitempty"`
}

// Deprecated marks a tool as deprecated.
type Deprecated struct {
	Reason      string `json:"reason"`
	Since       string `json:"since,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

// layout is where the registry sits in one commit's tree.
type layout struct {
	root      string        // "registry" or "" (repo root)
	toolsTree gitstore.Hash // the tools/ folder
}

func (l layout) toolsDir() string { return path.Join(l.root, "tools") }

// ToolPath returns the folder of tool id relative to the repository root.
func (l layout) toolPath(id string) string { return path.Join(l.root, "tools", id) }

func (r *Registry) layoutAt(p Pin) (layout, error) {
	r.mu.Lock()
	l, ok := r.layouts[p.Tree]
	r.mu.Unlock()
	if ok {
		return l, nil
	}
	for _, root := range []string{"registry", ""} {
		e, err := r.repo.EntryAt(p.Tree, path.Join(root, "tools"))
		if err == nil && e.Mode.IsDir() {
			l = layout{root: root, toolsTree: e.Hash}
			r.mu.Lock()
			r.layouts[p.Tree] = l
			r.mu.Unlock()
			return l, nil
		}
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			return layout{}, err
		}
	}
	return layout{}, &errkind.InputError{
		Source:  r.repo.Path(),
		Problem: fmt.Sprintf("no registry at commit %s: neither registry/tools/ nor tools/ exists", p.Commit.Short()),
		Hint:    "point --repo at a registry repository, or add registry/tools/<tool_id>/tool.json",
	}
}

// ToolIDs lists the tools at a pinned commit, sorted.
func (r *Registry) ToolIDs(p Pin) ([]string, error) {
	l, err := r.layoutAt(p)
	if err != nil {
		return nil, err
	}
	es, err := r.repo.ReadTree(l.toolsTree)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range es {
		if e.Mode.IsDir() && ValidID(e.Name) {
			ids = append(ids, e.Name)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// FileEntry is one file of a resolved tool, relative to the tool folder.
type FileEntry struct {
	Path string        `json:"path"`
	Mode string        `json:"mode"`
	Blob gitstore.Hash `json:"blob"`
}

// ToolResolution is a tool pinned to a commit with every file's blob id.
type ToolResolution struct {
	ToolID string `json:"tool_id"`
	Pin
	ToolPath string        `json:"tool_path"`
	ToolTree gitstore.Hash `json:"tool_tree"`
	Files    []FileEntry   `json:"files"`
	Tool     *Tool         `json:"-"`
}

// ResolveTool pins ref and returns the tool at that commit, with its
// validated tool.json and every file's blob id.
func (r *Registry) ResolveTool(ctx context.Context, ref Ref, opts PinOptions) (*ToolResolution, error) {
	if opts.Source == "" {
		opts.Source = "tool"
	}
	p, err := r.PinRev(ctx, ref.ID, ref.Rev, opts)
	if err != nil {
		return nil, err
	}
	return r.ToolAt(ref, p)
}

// ResolveToolMeta is ResolveTool without the file listing, for callers that
// read one file (registry cat) and should not pay for walking the folder.
func (r *Registry) ResolveToolMeta(ctx context.Context, ref Ref, opts PinOptions) (*ToolResolution, error) {
	if opts.Source == "" {
		opts.Source = "tool"
	}
	p, err := r.PinRev(ctx, ref.ID, ref.Rev, opts)
	if err != nil {
		return nil, err
	}
	return r.toolAt(ref, p, false)
}

// ToolAt returns tool ref.ID at an already pinned commit, with its files.
func (r *Registry) ToolAt(ref Ref, p Pin) (*ToolResolution, error) { return r.toolAt(ref, p, true) }

func (r *Registry) toolAt(ref Ref, p Pin, withFiles bool) (*ToolResolution, error) {
	l, err := r.layoutAt(p)
	if err != nil {
		return nil, err
	}
	toolPath := l.toolPath(ref.ID)
	e, err := r.repo.EntryAt(p.Tree, toolPath)
	if err != nil || !e.Mode.IsDir() {
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			return nil, err
		}
		return nil, r.missingTool(ref, p, l)
	}
	tool, err := r.readTool(ref.ID, toolPath, e.Hash, p)
	if err != nil {
		return nil, err
	}
	t := &ToolResolution{ToolID: ref.ID, Pin: p, ToolPath: toolPath, ToolTree: e.Hash, Tool: tool}
	if withFiles {
		files, err := r.repo.Walk(e.Hash)
		if err != nil {
			return nil, err
		}
		t.Files = make([]FileEntry, len(files))
		for i, f := range files {
			t.Files[i] = FileEntry{Path: f.Path, Mode: f.Mode.String(), Blob: f.Hash}
		}
	}
	return t, nil
}

// missingTool says which tools exist and where the requested one does.
func (r *Registry) missingTool(ref Ref, p Pin, l layout) error {
	ids, _ := r.ToolIDs(p)
	hint := "available tools: " + strings.Join(ids, ", ")
	if len(ids) == 0 {
		hint = "this commit has no tools"
	}
	if where := r.whereToolExists(ref.ID); len(where) > 0 {
		hint = fmt.Sprintf("%s exists at: %s", ref.ID, strings.Join(where, ", "))
	}
	return &errkind.InputError{
		Source:  "tool",
		Problem: fmt.Sprintf("tool %q not found at %s (%s) in %s", ref.ID, p.Commit.Short(), l.toolPath(ref.ID), r.repo.Path()),
		Hint:    hint,
	}
}

// whereToolExists checks the tips of branches and the tool's release tags:
// cheap, and usually what the user meant.
func (r *Registry) whereToolExists(id string) []string {
	r.repo.KeepDeltaChains() // reads the tree of every branch tip and release
	var out []string
	refs, _ := r.repo.Refs("refs/heads/")
	tags, _ := r.repo.Refs("refs/tags/registry/" + id + "/")
	for _, ref := range append(refs, tags...) {
		c, _, err := r.repo.Peel(ref.Name, ref.Target)
		if err != nil {
			continue
		}
		tree, err := r.repo.CommitTree(c)
		if err != nil {
			continue
		}
		l, err := r.layoutAt(Pin{Commit: c, Tree: tree})
		if err != nil {
			continue
		}
		if e, err := r.repo.EntryAt(tree, l.toolPath(id)); err == nil && e.Mode.IsDir() {
			name := strings.TrimPrefix(strings.TrimPrefix(ref.Name, "refs/heads/"), "refs/tags/")
			out = append(out, fmt.Sprintf("%s (%s)", name, c.Short()))
		}
		if len(out) >= 5 {
			break
		}
	}
	return out
}

func (r *Registry) readTool(id, toolPath string, toolTree gitstore.Hash, p Pin) (*Tool, error) {
	e, err := r.repo.EntryAt(toolTree, "tool.json")
	source := toolPath + "/tool.json@" + p.Commit.Short()
	if err != nil {
		return nil, &errkind.InputError{Source: source, Problem: "missing tool.json", Hint: "every tool folder needs a tool.json (see pkg/registry/schemas/tool.schema.json)"}
	}
	r.mu.Lock()
	t, ok := r.tools[e.Hash]
	r.mu.Unlock()
	if ok && t.ID == id {
		return t, nil
	}
	data, err := r.readRegular(e, source)
	if err != nil {
		return nil, err
	}
	doc, err := r.schemas.get(SchemaTool).ValidateDecode(source, data)
	if err != nil {
		return nil, err
	}
	if t, err = toolOf(doc); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if t.ID != id {
		return nil, &errkind.InputError{Source: source, Field: "/id", Problem: fmt.Sprintf("id %q does not match the folder name %q", t.ID, id), Hint: "rename the folder or fix the id"}
	}
	r.mu.Lock()
	r.tools[e.Hash] = t
	r.mu.Unlock()
	return t, nil
}

// toolOf builds the Tool of a tool.json document that validated against
// tool.schema.json, decoded with numbers as json.Number. The schema has
// fixed the type of every member and admits no other, so this reads what
// decodeStrict would (TestToolOfMatchesDecodeStrict, FuzzToolOf) without
// parsing tool.json a fourth time, nor encoding/json's reflection over Tool
// (its field cache alone cost a cold read some 120 K instructions); a member
// it does not know, or of a type it does not expect, is an error, as in
// decodeStrict.
func toolOf(doc any) (*Tool, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("tool.json is not an object")
	}
	t := &Tool{}
	for k, v := range m {
		var err error
		switch k {
		case "schema_version":
			t.SchemaVersion, err = stringOf(k, v)
		case "id":
			t.ID, err = stringOf(k, v)
		case "title":
			t.Title, err = stringOf(k, v)
		case "description":
			t.Description, err = stringOf(k, v)
		case "owners":
			t.Owners, err = stringsOf(k, v)
		case "spec":
			t.Spec, err = stringOf(k, v)
		case "default_profile":
			t.DefaultProfile, err = stringOf(k, v)
		case "labels":
			t.Labels, err = stringsOf(k, v)
		case "homepage":
			t.Homepage, err = stringOf(k, v)
		case "deprecated":
			t.Deprecated, err = deprecatedOf(v)
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func deprecatedOf(v any) (*Deprecated, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`field "deprecated" is not an object`)
	}
	d := &Deprecated{}
	for k, v := range m {
		var err error
		switch k {
		case "reason":
			d.Reason, err = stringOf("deprecated."+k, v)
		case "since":
			d.Since, err = stringOf("deprecated."+k, v)
		case "replacement":
			d.Replacement, err = stringOf("deprecated."+k, v)
		default:
			err = fmt.Errorf("unknown field %q", "deprecated."+k)
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

func stringOf(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("field %q is not a string", name)
	}
	return s, nil
}

// stringsOf reads an array of strings (empty, not nil, for [], as
// encoding/json does).
func stringsOf(name string, v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("field %q is not an array", name)
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("field %q has an item that is not a string", name)
		}
		out[i] = s
	}
	return out, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ReadFile returns the bytes of a file of a resolved tool; rel is relative
// to the tool folder and may not escape it.
func (r *Registry) ReadFile(t *ToolResolution, rel string) ([]byte, gitstore.Hash, error) {
	clean, err := CleanRelPath(rel)
	if err != nil {
		return nil, gitstore.ZeroHash, &errkind.InputError{Source: "path", Problem: fmt.Sprintf("%q: %v", rel, err), Hint: "give a path inside the tool folder, e.g. spec/openapi.yaml"}
	}
	e, err := r.repo.EntryAt(t.ToolTree, clean)
	if err != nil {
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, gitstore.ZeroHash, &errkind.InputError{Source: "path", Problem: fmt.Sprintf("%s has no file %s at %s", t.ToolID, clean, t.Commit.Short()), Hint: "list the files with: dome resolve " + t.ToolID + "@" + t.Commit.String()}
		}
		return nil, gitstore.ZeroHash, err
	}
	if e.Mode.IsDir() {
		return nil, gitstore.ZeroHash, &errkind.InputError{Source: "path", Problem: fmt.Sprintf("%s/%s is a directory", t.ToolPath, clean), Hint: "name a file"}
	}
	data, err := r.readRegular(e, t.ToolPath+"/"+clean+"@"+t.Commit.Short())
	return data, e.Hash, err
}

// readRegular reads the blob of a tree entry that must be a regular file.
// A symlink's blob is its target path and a submodule has no blob here:
// read as content they would give a parse error about the wrong thing, so
// they are named for what they are (dome never follows either).
func (r *Registry) readRegular(e gitstore.TreeEntry, source string) ([]byte, error) {
	switch {
	case e.Mode.IsRegular():
		return r.repo.ReadBlob(e.Hash)
	case e.Mode == gitstore.ModeSymlink:
		target, err := r.repo.ReadBlob(e.Hash)
		if err != nil {
			return nil, err
		}
		return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("is a symlink (to %q), which dome does not follow", truncateString(string(target), 200)), Hint: "commit the file itself in its place"}
	case e.Mode == gitstore.ModeSubmodule:
		return nil, &errkind.InputError{Source: source, Problem: "is a submodule, which dome does not follow", Hint: "commit the file itself in its place"}
	case e.Mode.IsDir():
		return nil, &errkind.InputError{Source: source, Problem: "is a directory", Hint: "name a file"}
	}
	return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("has the unknown mode %s", e.Mode), Hint: "commit a regular file"}
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CleanRelPath validates a slash-separated path relative to a root: no
// absolute paths, no "..", no ".git" component, no NUL or control bytes.
func CleanRelPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "", errors.New("absolute paths and backslashes are not allowed")
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "", errors.New("control characters are not allowed")
		}
	}
	clean := path.Clean(p)
	for _, comp := range strings.Split(clean, "/") {
		if comp == ".." {
			return "", errors.New("'..' is not allowed")
		}
		if strings.EqualFold(comp, ".git") {
			return "", errors.New(".git is not allowed")
		}
	}
	if clean == "." {
		return "", errors.New("empty path")
	}
	return clean, nil
}

// ToolFiles reads the files of one resolved tool by their path relative to
// the tool folder (it satisfies specfilter.FileReader). Paths outside the
// tool's file list are fs.ErrNotExist.
type ToolFiles struct {
	reg  *Registry
	tool *ToolResolution
}

// Files returns a reader of t's files; t must carry its file list.
func (r *Registry) Files(t *ToolResolution) ToolFiles { return ToolFiles{reg: r, tool: t} }

// ReadFile returns the bytes of the tool file name.
func (f ToolFiles) ReadFile(name string) ([]byte, error) {
	found := false
	for _, e := range f.tool.Files {
		if e.Path == name {
			found = true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("%s has no file %s at %s: %w", f.tool.ToolID, name, f.tool.Commit.Short(), fs.ErrNotExist)
	}
	data, _, err := f.reg.ReadFile(f.tool, name)
	return data, err
}

// Describe names a tool file in messages: its repository path at the commit.
func (f ToolFiles) Describe(name string) string {
	return f.tool.ToolPath + "/" + name + "@" + f.tool.Commit.Short()
}
