package patch

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Options controls Apply.
type Options struct {
	// ThreeWay falls back, for a file whose hunks do not apply, to a diff3
	// merge of the preimage blob named by the index line, the current
	// content and the patched preimage (git apply --3way).
	ThreeWay bool
	// WriteConflicts keeps files that merged with conflicts, with
	// conflict markers, in the resulting tree (the result still reports
	// the conflicts).
	WriteConflicts bool
	// Fuzz lets a hunk apply with up to Fuzz context lines ignored at each
	// end (0, the default, is git apply's exact context).
	Fuzz int
	// Partial chooses what happens to the rest of a patch when part of it
	// does not apply (atomicity policy).
	Partial Partial
}

// Partial is an atomicity policy.
type Partial int

// Atomicity policies: all or nothing (atomic_proposal, the default), every
// file that applies whole (atomic_file), every hunk that applies (hunk_ok).
// With PartialFile or PartialHunk, Apply writes the tree of what applied
// and still returns a *ConflictError listing what did not.
const (
	PartialNone Partial = iota
	PartialFile
	PartialHunk
)

// Result is the outcome of Apply.
type Result struct {
	Tree      OID          // the resulting tree (zero when nothing is left)
	Files     []FileResult // one per file diff, in patch order
	Conflicts []Conflict   // empty when the patch applied
}

// FileResult tells how one file diff applied.
type FileResult struct {
	Path    string       `json:"path"`
	OldPath string       `json:"old_path,omitempty"`
	Status  string       `json:"status"` // added, deleted, modified, renamed, copied
	Method  string       `json:"method"` // exact, offset, fuzz, three-way, conflict
	Hunks   []HunkResult `json:"hunks,omitempty"`
}

// HunkResult tells where one hunk applied.
type HunkResult struct {
	Hunk    int  `json:"hunk"` // 1-based
	Applied bool `json:"applied"`
	Line    int  `json:"line,omitempty"`   // 1-based line of the result where it applied
	Offset  int  `json:"offset,omitempty"` // lines away from where the header said
	Fuzz    int  `json:"fuzz,omitempty"`   // context lines ignored
}

// Conflict is one file or hunk that did not apply.
type Conflict struct {
	Path   string `json:"path"`
	Hunk   int    `json:"hunk,omitempty"` // 1-based hunk of the patch, 0 for the whole file
	Lines  string `json:"lines,omitempty"`
	Reason string `json:"reason"`
}

func (c Conflict) String() string {
	s := c.Path
	if c.Hunk > 0 {
		s += fmt.Sprintf(" hunk #%d", c.Hunk)
	}
	if c.Lines != "" {
		s += " (lines " + c.Lines + ")"
	}
	return s + ": " + c.Reason
}

// ConflictError is returned by Apply when some file or hunk does not apply.
type ConflictError struct {
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	if len(e.Conflicts) == 1 {
		return "patch does not apply: " + e.Conflicts[0].String()
	}
	return fmt.Sprintf("patch does not apply: %d conflicts, first %s", len(e.Conflicts), e.Conflicts[0])
}

// fstate is what a path holds while a patch is applied.
type fstate struct {
	exists  bool
	mode    Mode
	id      OID
	data    []byte
	loaded  bool
	changed bool // set by the patch: to be written
}

type applier struct {
	st    Store
	t     *tree
	opts  Options
	state map[string]*fstate
	res   *Result
}

// Apply applies p to the tree base (zero: the empty tree) in st and returns
// the new tree. Nothing is written to st unless every file applies (or, with
// ThreeWay and WriteConflicts, merged with markers). A path the patch must
// not touch is an *errkind.InputError; hunks that do not apply give a
// *ConflictError together with the Result describing them.
func Apply(st Store, base OID, p *Patch, opts Options) (*Result, error) {
	a := &applier{st: st, t: newTree(st, base), opts: opts, state: map[string]*fstate{}, res: &Result{}}
	for _, f := range p.Files {
		if err := a.file(f); err != nil {
			return a.res, err
		}
	}
	if len(a.res.Conflicts) > 0 && opts.Partial == PartialNone && !(opts.ThreeWay && opts.WriteConflicts && allMerged(a.res)) {
		return a.res, &ConflictError{Conflicts: a.res.Conflicts}
	}
	paths := make([]string, 0, len(a.state))
	for path := range a.state {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		if s := a.state[path]; !s.exists {
			if e, err := a.t.lookup(path); err != nil {
				return a.res, err
			} else if e != nil {
				if err := a.t.remove(path); err != nil {
					return a.res, err
				}
			}
		}
	}
	for _, path := range paths {
		s := a.state[path]
		if !s.exists || !s.changed {
			continue
		}
		e := &entry{mode: s.mode, id: s.id}
		if s.mode != ModeSubmodule {
			e.data, e.hasData = s.data, true
		}
		if err := a.t.put(path, e); err != nil {
			var pe *pathError
			if errors.As(err, &pe) {
				return a.res, &errkind.InputError{Source: "patch", Field: pe.Path, Problem: pe.Problem,
					Hint: "a patch that turns a file into a directory (or back) must delete the old one in the same patch"}
			}
			return a.res, err
		}
	}
	id, err := a.t.write()
	if err != nil {
		return a.res, err
	}
	a.res.Tree = id
	if len(a.res.Conflicts) > 0 {
		return a.res, &ConflictError{Conflicts: a.res.Conflicts}
	}
	return a.res, nil
}

func allMerged(r *Result) bool {
	for _, c := range r.Conflicts {
		if c.Reason != reasonMergeConflict {
			return false
		}
	}
	return true
}

const reasonMergeConflict = "three-way merge conflict"

// get returns the current state of path (nil when absent).
func (a *applier) get(path string) (*fstate, error) {
	if s, ok := a.state[path]; ok {
		if !s.exists {
			return nil, nil
		}
		return s, nil
	}
	e, err := a.t.lookup(path)
	if err != nil || e == nil {
		return nil, err
	}
	s := &fstate{exists: true, mode: e.mode, id: e.id}
	a.state[path] = s
	return s, nil
}

// original returns path as it is in the base tree (nil when absent).
func (a *applier) original(path string) (*fstate, error) {
	e, err := a.t.lookup(path)
	if err != nil || e == nil {
		return nil, err
	}
	return &fstate{exists: true, mode: e.mode, id: e.id}, nil
}

func (a *applier) content(s *fstate) ([]byte, error) {
	if s.loaded || s.mode == ModeSubmodule {
		return s.data, nil
	}
	d, err := a.st.ReadBlob(s.id)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", s.id, err)
	}
	s.data, s.loaded = d, true
	return d, nil
}

func refuse(path, problem, hint string) error {
	return &errkind.InputError{Source: "patch", Field: path, Problem: problem, Hint: hint}
}

func (a *applier) conflict(fr *FileResult, c Conflict) {
	fr.Method = "conflict"
	a.res.Conflicts = append(a.res.Conflicts, c)
}

func (a *applier) file(f *File) error {
	fr := FileResult{Path: f.Path(), Status: status(f), Method: "exact"}
	if f.IsRename || f.IsCopy {
		fr.OldPath = f.OldPath
	}
	defer func() { a.res.Files = append(a.res.Files, fr) }()
	if f.BinaryNoData {
		return refuse(f.Path(), "binary diff without data (\"Binary files ... differ\")",
			"regenerate the patch with git diff --binary or git format-patch")
	}
	var src *fstate
	var old []byte
	if !f.IsNew {
		var err error
		if f.IsRename || f.IsCopy {
			// git patches do not depend on order: a copy or rename reads
			// the base tree, even when an earlier diff changes the source.
			src, err = a.original(f.OldPath)
		} else {
			src, err = a.get(f.OldPath)
		}
		if err != nil {
			return err
		}
		if src == nil {
			a.conflict(&fr, Conflict{Path: f.OldPath, Reason: "does not exist in the base tree"})
			return nil
		}
		if f.OldMode != 0 && f.OldMode.kind() != src.mode.kind() {
			a.conflict(&fr, Conflict{Path: f.OldPath, Reason: fmt.Sprintf("wrong type: the tree has %s, the patch expects %s", src.mode, f.OldMode)})
			return nil
		}
		if old, err = a.content(src); err != nil {
			return err
		}
	}
	if f.IsNew || f.IsRename || f.IsCopy {
		dst, err := a.get(f.NewPath)
		if err != nil {
			return err
		}
		switch {
		case dst == nil || f.IsRename && f.NewPath == f.OldPath:
		case a.opts.ThreeWay && f.IsNew && f.Binary == nil && !f.BinaryNoData && dst.mode != ModeSubmodule && f.NewMode != ModeSubmodule:
			// git apply --3way merges a created file into the one already
			// there, from an empty base (add/add)
			if old, err = a.content(dst); err != nil {
				return err
			}
			src = dst
			f = &File{OldPath: f.NewPath, NewPath: f.NewPath, NewMode: modeOr(f.NewMode, ModeFile), Hunks: f.Hunks, addAdd: true}
		default:
			a.conflict(&fr, Conflict{Path: f.NewPath, Reason: "already exists in the base tree"})
			return nil
		}
	}
	mode := f.NewMode
	if f.newModeFromIndex && src != nil {
		mode = src.mode // (git warns "has type 100755, expected 100644" and keeps the tree's)
	}
	if mode == 0 {
		if src != nil {
			mode = src.mode
		} else {
			mode = ModeFile
		}
	}
	// The paths again, with the modes the tree gives them (a diff that
	// leaves modes unsaid can still make .gitmodules a symlink), as git
	// apply's check_unsafe_path: the old name of a deletion, modification
	// or rename, the new name of everything but a deletion.
	if src != nil && !f.IsCopy {
		if err := CheckPath(f.OldPath, src.mode); err != nil {
			return pathRefusal("patch", f.OldPath, err, "git would refuse this path in a checkout")
		}
	}
	if !f.IsDelete {
		if err := CheckPath(f.NewPath, mode); err != nil {
			return pathRefusal("patch", f.NewPath, err, "git would refuse this path in a checkout")
		}
	}
	var data []byte
	var id OID
	var ok bool
	var err error
	switch {
	case mode == ModeSubmodule || src != nil && src.mode == ModeSubmodule:
		id, ok = a.gitlink(f, src, &fr)
	case f.Binary != nil:
		data, ok, err = a.binary(f, old, &fr)
	default:
		data, ok, err = a.text(f, src, old, &fr)
	}
	if err != nil || !ok {
		return err
	}
	if f.IsDelete {
		if len(data) > 0 {
			a.conflict(&fr, Conflict{Path: f.OldPath, Reason: "removal patch leaves file contents"})
			return nil
		}
		a.state[f.OldPath] = &fstate{}
		return nil
	}
	if mode == ModeSymlink && (src == nil || src.mode != ModeSymlink || !bytes.Equal(data, old) || f.NewPath != f.OldPath) {
		if err := CheckSymlink(f.NewPath, data); err != nil {
			return refuse(f.NewPath, err.Error(), "a patch may only create symlinks that stay inside the tree")
		}
	}
	if f.IsRename {
		a.state[f.OldPath] = &fstate{}
	}
	a.state[f.NewPath] = &fstate{exists: true, mode: mode, id: id, data: data, loaded: true, changed: true}
	return nil
}

func status(f *File) string {
	switch {
	case f.IsNew:
		return "added"
	case f.IsDelete:
		return "deleted"
	case f.IsRename:
		return "renamed"
	case f.IsCopy:
		return "copied"
	}
	return "modified"
}

// gitlink applies a submodule diff: "Subproject commit <sha>" lines.
func (a *applier) gitlink(f *File, src *fstate, fr *FileResult) (OID, bool) {
	var oldID, newID string
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			v := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l.Text, "Subproject commit "), "-dirty"))
			if l.Op != '+' {
				oldID = v
			}
			if l.Op != '-' {
				newID = v
			}
		}
	}
	if src != nil && src.mode == ModeSubmodule && oldID != "" && oldID != src.id.String() {
		a.conflict(fr, Conflict{Path: f.OldPath, Reason: "submodule is at " + src.id.String() + ", the patch expects " + oldID})
		return OID{}, false
	}
	if f.IsDelete {
		return OID{}, true
	}
	id, ok := ParseOID(newID)
	if !ok {
		a.conflict(fr, Conflict{Path: f.Path(), Reason: "submodule diff without a full commit id"})
		return OID{}, false
	}
	return id, true
}

// binary applies a GIT binary patch, checking the preimage and result ids
// against the index line as git does.
func (a *applier) binary(f *File, old []byte, fr *FileResult) ([]byte, bool, error) {
	if f.OldOID != "" && !f.IsNew && !hasPrefixID(BlobID(old), f.OldOID) {
		if a.opts.ThreeWay && !f.IsDelete {
			return a.binaryThreeWay(f, old, fr)
		}
		a.conflict(fr, Conflict{Path: f.OldPath, Reason: "binary patch does not apply: the file is not the preimage " + f.OldOID})
		return nil, false, nil
	}
	data, err := binaryResult(f, old)
	if err != nil {
		a.conflict(fr, Conflict{Path: f.Path(), Reason: err.Error()})
		return nil, false, nil
	}
	return data, true, nil
}

// binaryResult applies f's binary patch to old and checks the result id.
func binaryResult(f *File, old []byte) ([]byte, error) {
	data := f.Binary.Data
	if f.Binary.Kind == BinaryDelta {
		var err error
		if data, err = applyDelta(old, f.Binary.Data); err != nil {
			return nil, fmt.Errorf("binary delta does not apply: %w", err)
		}
	}
	if f.NewOID != "" && !f.IsDelete && !hasPrefixID(BlobID(data), f.NewOID) {
		return nil, fmt.Errorf("binary patch gives a result other than %s", f.NewOID)
	}
	return data, nil
}

// binaryThreeWay is git apply --3way on a binary file that is not the
// preimage: no line merge, so the result is clean only when the file
// already is the patch's result; otherwise a merge conflict that keeps the
// current content (git's binary merge driver keeps "ours").
func (a *applier) binaryThreeWay(f *File, old []byte, fr *FileResult) ([]byte, bool, error) {
	pre, err := a.preimage(f)
	if err != nil {
		return nil, false, err
	}
	if pre == nil {
		a.conflict(fr, Conflict{Path: f.OldPath, Reason: "binary patch does not apply: the file is not the preimage " + f.OldOID + ", which is not in the repository"})
		return nil, false, nil
	}
	theirs, err := binaryResult(f, pre)
	if err != nil {
		a.conflict(fr, Conflict{Path: f.Path(), Reason: err.Error()})
		return nil, false, nil
	}
	fr.Method = "three-way"
	if bytes.Equal(old, theirs) || bytes.Equal(pre, theirs) {
		return old, true, nil
	}
	a.conflict(fr, Conflict{Path: f.Path(), Reason: reasonMergeConflict})
	if a.opts.WriteConflicts {
		return old, true, nil
	}
	return nil, false, nil
}

func hasPrefixID(id OID, prefix string) bool {
	if strings.Trim(prefix, "0") == "" {
		return false
	}
	return strings.HasPrefix(id.String(), prefix)
}

// text applies the hunks of f to old. With ThreeWay it does what git apply
// --3way has done since git 2.32: merge first (the patch applied to the
// preimage blob its index line names, merged onto the current content with
// the preimage as base), and apply the hunks directly only when it cannot
// merge (no index line, the blob is not in the store, the patch does not
// apply to its own preimage). The current content equal to the preimage
// needs no merge: the direct result is the merge's.
func (a *applier) text(f *File, src *fstate, old []byte, fr *FileResult) ([]byte, bool, error) {
	if a.opts.ThreeWay && (!f.IsNew || f.addAdd) && !f.IsDelete { // (git never merges a deletion)
		var pre []byte
		if !f.addAdd {
			var err error
			if pre, err = a.preimage(f); err != nil {
				return nil, false, err
			}
		}
		if (pre != nil || f.addAdd) && !bytes.Equal(pre, old) {
			if theirs, _, bad := applyHunks(pre, f.Hunks, 0); len(bad) == 0 {
				return a.merge(f, pre, old, theirs, fr)
			}
		}
	}
	out, hrs, failed := applyHunks(old, f.Hunks, a.opts.Fuzz)
	fr.Hunks = hrs
	if len(failed) == 0 {
		for _, h := range hrs {
			if h.Fuzz > 0 {
				fr.Method = "fuzz"
			} else if h.Offset != 0 && fr.Method == "exact" {
				fr.Method = "offset"
			}
		}
		return out, true, nil
	}
	reason := "context does not match"
	if a.opts.ThreeWay && !f.IsNew && !f.IsDelete {
		switch pre, err := a.preimage(f); {
		case err != nil:
			return nil, false, err
		case f.OldOID == "":
			reason = "context does not match, and the patch names no preimage blob to merge from (a plain diff has no index line)"
		case pre == nil:
			reason = "context does not match and the preimage blob " + f.OldOID + " is not in the repository"
		default:
			reason = "context does not match, and the patch does not apply to its own preimage " + f.OldOID
		}
	}
	for _, i := range failed {
		h := f.Hunks[i]
		a.conflict(fr, Conflict{Path: f.Path(), Hunk: i + 1, Lines: fmt.Sprintf("%d-%d", h.OldStart, h.OldStart+h.OldLines-1),
			Reason: reason})
	}
	if a.opts.Partial == PartialHunk && len(failed) < len(f.Hunks) && !(a.opts.ThreeWay && !f.IsNew && !f.IsDelete) {
		return out, true, nil // the hunks that applied
	}
	return nil, false, nil
}

// merge is git's three_way_merge: trivial when a side did not change,
// else Merge3; conflicts are listed per hunk of the patch.
func (a *applier) merge(f *File, pre, ours, theirs []byte, fr *FileResult) ([]byte, bool, error) {
	fr.Method = "three-way"
	if bytes.Equal(pre, theirs) || bytes.Equal(ours, theirs) {
		return ours, true, nil
	}
	merged, conflicts := Merge3(pre, ours, theirs, MergeLabels{Ours: "ours", Theirs: "theirs"})
	if len(conflicts) == 0 {
		return merged, true, nil
	}
	fr.Method = "conflict"
	for _, c := range conflicts {
		a.res.Conflicts = append(a.res.Conflicts, Conflict{Path: f.Path(), Hunk: hunkAt(f, c.BaseStart), Lines: fmt.Sprintf("%d-%d", c.BaseStart, c.BaseEnd),
			Reason: reasonMergeConflict})
	}
	if a.opts.WriteConflicts {
		return merged, true, nil
	}
	return nil, false, nil
}

// hunkAt names the hunk whose preimage range holds base line n (0 if none).
func hunkAt(f *File, n int) int {
	best := 0
	for i, h := range f.Hunks {
		if n >= h.OldStart && n <= h.OldStart+h.OldLines {
			return i + 1
		}
		if h.OldStart <= n {
			best = i + 1
		}
	}
	return best
}

// preimage finds the blob the index line names (nil if absent).
func (a *applier) preimage(f *File) ([]byte, error) {
	if f.OldOID == "" || strings.Trim(f.OldOID, "0") == "" {
		return nil, nil
	}
	var id OID
	if full, ok := ParseOID(f.OldOID); ok {
		id = full
	} else {
		pr, ok := a.st.(PrefixResolver)
		if !ok {
			return nil, nil
		}
		ids, err := pr.ResolvePrefix(f.OldOID)
		if err != nil || len(ids) != 1 {
			return nil, nil
		}
		id = ids[0]
	}
	d, err := a.st.ReadBlob(id)
	if err != nil {
		return nil, nil
	}
	return d, nil
}

// applyHunks applies hunks in order to data as git apply does: each hunk
// is searched for at its stated line, then one line further, one line back,
// two further, and so on; a hunk starting at line 1 must match at the start
// and one without trailing context at the end. fuzz > 0 lets context lines
// be dropped. It returns the result, per-hunk results and failed hunks.
func applyHunks(data []byte, hunks []*Hunk, fuzz int) ([]byte, []HunkResult, []int) {
	img := splitLines(data)
	var results []HunkResult
	var failed []int
	for i, h := range hunks {
		var pre, post []string
		for _, l := range h.Lines {
			if l.Op != '+' {
				pre = append(pre, l.Text)
			}
			if l.Op != '-' {
				post = append(post, l.Text)
			}
		}
		leading, trailing := 0, 0
		for _, l := range h.Lines {
			if l.Op != ' ' {
				break
			}
			leading++
		}
		for j := len(h.Lines) - 1; j >= 0 && h.Lines[j].Op == ' '; j-- {
			trailing++
		}
		matchBeginning := h.OldStart <= 1
		matchEnd := trailing == 0
		pos := 0
		if h.NewStart > 0 {
			pos = h.NewStart - 1
		}
		want := pos
		droppedLead, droppedTrail := 0, 0
		at := -1
		for {
			at = findPos(img, pre, pos, matchBeginning, matchEnd)
			if at >= 0 || fuzz == 0 {
				break
			}
			if matchBeginning || matchEnd {
				matchBeginning, matchEnd = false, false
				continue
			}
			canLead := leading > 0 && droppedLead < fuzz && len(pre) > 0
			canTrail := trailing > 0 && droppedTrail < fuzz && len(pre) > 0
			switch {
			case canLead && (leading >= trailing || !canTrail):
				pre, post = pre[1:], post[1:]
				pos--
				leading--
				droppedLead++
			case canTrail:
				pre, post = pre[:len(pre)-1], post[:len(post)-1]
				trailing--
				droppedTrail++
			default:
				goto done
			}
		}
	done:
		if at < 0 {
			failed = append(failed, i)
			results = append(results, HunkResult{Hunk: i + 1})
			continue
		}
		img = append(img[:at], append(append([]string(nil), post...), img[at+len(pre):]...)...)
		results = append(results, HunkResult{Hunk: i + 1, Applied: true, Line: at + 1, Offset: at - want, Fuzz: droppedLead + droppedTrail})
	}
	var b bytes.Buffer
	for _, l := range img {
		b.WriteString(l)
	}
	return b.Bytes(), results, failed
}

func findPos(img, pre []string, line int, matchBeginning, matchEnd bool) int {
	if len(pre) > len(img) {
		return -1
	}
	if matchBeginning {
		line = 0
	} else if matchEnd {
		line = len(img) - len(pre)
	}
	if line > len(img) {
		line = len(img)
	}
	if line < 0 {
		line = 0
	}
	back, fwd := line, line
	try := line
	for i := 0; ; i++ {
		if matchAt(img, pre, try, matchBeginning, matchEnd) {
			return try
		}
	again:
		if back == 0 && fwd == len(img) {
			return -1
		}
		if i&1 == 1 {
			if back == 0 {
				i++
				goto again
			}
			back--
			try = back
		} else {
			if fwd == len(img) {
				i++
				goto again
			}
			fwd++
			try = fwd
		}
	}
}

func matchAt(img, pre []string, at int, matchBeginning, matchEnd bool) bool {
	if at+len(pre) > len(img) {
		return false
	}
	if matchEnd && at+len(pre) != len(img) {
		return false
	}
	if matchBeginning && at != 0 {
		return false
	}
	for i, l := range pre {
		if img[at+i] != l {
			return false
		}
	}
	return true
}
