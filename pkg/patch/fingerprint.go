package patch

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// FingerprintVersion names the hunk fingerprint scheme and its normalization
// rules. Version 1:
//   - every hunk line is normalized: a final "\r\n" or "\r" becomes "\n", a
//     missing final newline is added, trailing spaces and tabs before the
//     newline are removed;
//   - base_context_digest is sha256 over the normalized preimage of the hunk
//     (context and removed lines, in order);
//   - edit_digest is sha256 over the normalized removed and added lines, each
//     prefixed by its "-" or "+", in order;
//   - range_hint is the hunk's preimage range in the base, 1-based and
//     inclusive ({start, end}; end = start-1 for a pure insertion without
//     context, meaning "between line end and line start");
//   - binary diffs and diffs without hunks (mode changes, renames, empty
//     files) give one file-level fingerprint whose edit_digest hashes the
//     header facts (modes, ids, rename source) and whose range is absent.
//
// Digests are written "sha256:<64 hex>".
const FingerprintVersion = "dome.hunk_fingerprint/v1"

// Range is a range_hint: base lines start..end, inclusive.
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Fingerprint is hunk fingerprint (section 7).
type Fingerprint struct {
	Path               string `json:"path"`
	BaseRef            string `json:"base_ref"`
	BaseContextDigest  string `json:"base_context_digest"`
	EditDigest         string `json:"edit_digest"`
	RangeHint          *Range `json:"range_hint,omitempty"`
	FingerprintVersion string `json:"fingerprint_version"`
	Hunk               int    `json:"hunk"` // 1-based hunk within the file, 0 for file-level
}

// Fingerprints returns the fingerprints of every hunk of p against baseRef,
// in patch order. The path is the file's path in the base (its old path for
// renames and deletions, the new path for created files).
func Fingerprints(p *Patch, baseRef string) []Fingerprint {
	var out []Fingerprint
	for _, f := range p.Files {
		path := f.OldPath
		if path == "" {
			path = f.NewPath
		}
		if len(f.Hunks) == 0 || f.Binary != nil {
			out = append(out, Fingerprint{Path: path, BaseRef: baseRef, BaseContextDigest: digest(nil),
				EditDigest: digest([]string{fileFacts(f)}), FingerprintVersion: FingerprintVersion})
			continue
		}
		for i, h := range f.Hunks {
			var pre, edit []string
			for _, l := range h.Lines {
				n := normalizeLine(l.Text)
				if l.Op != '+' {
					pre = append(pre, n)
				}
				if l.Op != ' ' {
					edit = append(edit, string(l.Op)+n)
				}
			}
			start := h.OldStart
			if h.OldLines == 0 {
				start = h.OldStart + 1
			}
			out = append(out, Fingerprint{Path: path, BaseRef: baseRef, BaseContextDigest: digest(pre), EditDigest: digest(edit),
				RangeHint: &Range{Start: start, End: start + h.OldLines - 1}, FingerprintVersion: FingerprintVersion, Hunk: i + 1})
		}
	}
	return out
}

func fileFacts(f *File) string {
	var b strings.Builder
	b.WriteString(status(f) + " " + f.OldPath + " " + f.NewPath + " " + f.OldMode.String() + " " + f.NewMode.String() + " " + f.OldOID + " " + f.NewOID)
	if f.Binary != nil {
		b.WriteString(" binary " + hex.EncodeToString(sha256Sum(f.Binary.Data)))
	}
	return b.String()
}

func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func normalizeLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	return strings.TrimRight(s, " \t") + "\n"
}

func digest(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Overlap is what two patches have in common.
type Overlap struct {
	Overlaps bool          `json:"overlaps"`
	Files    []string      `json:"files"` // paths both patches touch, sorted
	Hunks    []HunkOverlap `json:"hunks"`
}

// HunkOverlap is one pair of overlapping hunks.
type HunkOverlap struct {
	Path   string `json:"path"`
	HunkA  int    `json:"hunk_a"`
	HunkB  int    `json:"hunk_b"`
	RangeA *Range `json:"range_a,omitempty"`
	RangeB *Range `json:"range_b,omitempty"`
	Reason string `json:"reason"` // "range" or "context_digest"
}

// FileTouches lists the paths a patch touches (old and new paths), sorted.
func FileTouches(p *Patch) []string {
	set := map[string]bool{}
	for _, f := range p.Files {
		if f.OldPath != "" {
			set[f.OldPath] = true
		}
		if f.NewPath != "" {
			set[f.NewPath] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ComputeOverlap applies overlap rule to two fingerprint sets:
// two patches overlap when fingerprints share a path and their range hints
// intersect, or when their base_context_digest is equal and their
// edit_digest differs. File-level overlap (a path both patches touch) is
// reported in Files; Overlaps is true only at hunk level or when both patches
// change the same file without hunks (a file-level fingerprint). Equal hunks
// (same context, same edit) do not overlap: they are the same change.
func ComputeOverlap(a, b *Patch, fa, fb []Fingerprint) Overlap {
	ov := Overlap{Files: []string{}, Hunks: []HunkOverlap{}}
	ta, tb := FileTouches(a), FileTouches(b)
	inB := map[string]bool{}
	for _, p := range tb {
		inB[p] = true
	}
	for _, p := range ta {
		if inB[p] {
			ov.Files = append(ov.Files, p)
		}
	}
	for _, x := range fa {
		for _, y := range fb {
			same := x.BaseContextDigest == y.BaseContextDigest && x.EditDigest == y.EditDigest
			switch {
			case x.Path == y.Path && x.RangeHint != nil && y.RangeHint != nil && intersect(*x.RangeHint, *y.RangeHint) && !same:
				ov.Hunks = append(ov.Hunks, HunkOverlap{Path: x.Path, HunkA: x.Hunk, HunkB: y.Hunk, RangeA: x.RangeHint, RangeB: y.RangeHint, Reason: "range"})
			case x.Path == y.Path && (x.RangeHint == nil || y.RangeHint == nil) && !same:
				ov.Hunks = append(ov.Hunks, HunkOverlap{Path: x.Path, HunkA: x.Hunk, HunkB: y.Hunk, RangeA: x.RangeHint, RangeB: y.RangeHint, Reason: "file"})
			case x.RangeHint != nil && y.RangeHint != nil && x.BaseContextDigest == y.BaseContextDigest && x.EditDigest != y.EditDigest:
				ov.Hunks = append(ov.Hunks, HunkOverlap{Path: x.Path, HunkA: x.Hunk, HunkB: y.Hunk, RangeA: x.RangeHint, RangeB: y.RangeHint, Reason: "context_digest"})
			}
		}
	}
	ov.Overlaps = len(ov.Hunks) > 0
	return ov
}

// intersect reports whether two range hints share a base line; an empty
// range (an insertion point) intersects a range that holds it strictly
// inside, or an equal insertion point.
func intersect(a, b Range) bool {
	ae, be := a.End < a.Start, b.End < b.Start
	switch {
	case ae && be:
		return a.Start == b.Start
	case ae:
		return a.Start > b.Start && a.Start <= b.End
	case be:
		return b.Start > a.Start && b.Start <= a.End
	}
	return a.Start <= b.End && b.Start <= a.End
}
