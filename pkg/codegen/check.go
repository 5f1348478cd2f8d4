package codegen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Drift kinds of a file.
const (
	DriftChanged = "changed" // on disk, different bytes
	DriftMissing = "missing" // expected, not on disk
	DriftStale   = "stale"   // on disk and in the old manifest, no longer generated
)

// FileDrift is one file that differs.
type FileDrift struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Diff string `json:"diff,omitempty"` // unified diff, on disk -> expected
}

// ClientDrift is the check result of one client folder.
type ClientDrift struct {
	Dir string `json:"dir"`
	// Status: ok, drifted, missing (no client folder), stale (a client the
	// registry no longer produces).
	Status string      `json:"status"`
	Files  []FileDrift `json:"files,omitempty"`
	// Causes names which inputs changed (from the manifests), or that the
	// generated files were edited while the inputs are the same.
	Causes []string `json:"causes,omitempty"`
}

// OK reports whether the client matches.
func (d *ClientDrift) OK() bool { return d.Status == "ok" }

// Check compares clients with what is under out, without writing anything.
// With a scope, client folders in scope that the batch did not produce are
// reported stale.
func Check(out string, clients []*Client, scope *Scope) ([]*ClientDrift, error) {
	if err := CheckOutDir(out); err != nil {
		return nil, err
	}
	var res []*ClientDrift
	for _, c := range clients {
		d, err := checkClient(out, c)
		if err != nil {
			return nil, err
		}
		res = append(res, d)
	}
	if scope != nil {
		done := map[string]bool{}
		for _, c := range clients {
			done[c.Dir()] = true
		}
		dirs, err := FindClients(out)
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			lang, tool, _ := splitClientDir(dir)
			if done[dir] || !scope.owns(lang, tool) {
				continue
			}
			d := &ClientDrift{Dir: dir, Status: "stale", Causes: []string{"the registry no longer generates this client (profile, tool or language target removed)"}}
			if m, _ := readManifestAt(filepath.Join(out, filepath.FromSlash(dir))); m != nil {
				for _, o := range m.Outputs {
					d.Files = append(d.Files, FileDrift{Path: o.Path, Kind: DriftStale})
				}
			}
			res = append(res, d)
		}
	}
	return res, nil
}

func checkClient(out string, c *Client) (*ClientDrift, error) {
	dir := filepath.Join(out, filepath.FromSlash(c.Dir()))
	d := &ClientDrift{Dir: c.Dir(), Status: "ok"}
	if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		d.Status = "missing"
		d.Causes = []string{"the client was never generated here (new tool, profile or language target)"}
		for _, f := range c.Files {
			d.Files = append(d.Files, FileDrift{Path: f.Path, Kind: DriftMissing})
		}
		return d, nil
	} else if err != nil {
		return nil, err
	} else if !fi.IsDir() {
		d.Status = "drifted"
		d.Causes = []string{dir + " is a file"}
		return d, nil
	}
	old, merr := readManifestAt(dir)
	produced := map[string]bool{}
	var edited []string
	for _, f := range c.Files {
		produced[f.Path] = true
		data, err := readlimit.ReadRegularFile(filepath.Join(dir, filepath.FromSlash(f.Path)), readlimit.Document)
		if errors.Is(err, fs.ErrNotExist) {
			d.Files = append(d.Files, FileDrift{Path: f.Path, Kind: DriftMissing})
			continue
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(data, f.Data) {
			d.Files = append(d.Files, FileDrift{Path: f.Path, Kind: DriftChanged, Diff: UnifiedDiff(c.Dir()+"/"+f.Path, string(data), string(f.Data))})
			if old != nil && recorded(old, f.Path) != FileDigest(data) {
				edited = append(edited, f.Path)
			}
		}
	}
	if old != nil {
		for _, o := range old.Outputs {
			if produced[o.Path] {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(o.Path))); err == nil {
				d.Files = append(d.Files, FileDrift{Path: o.Path, Kind: DriftStale})
			}
		}
	}
	switch {
	case merr != nil:
		d.Causes = append(d.Causes, "manifest.json is unreadable: "+merr.Error())
		d.Files = append(d.Files, FileDrift{Path: ManifestFile, Kind: DriftChanged})
	case old == nil:
		d.Causes = append(d.Causes, "manifest.json is missing")
		d.Files = append(d.Files, FileDrift{Path: ManifestFile, Kind: DriftMissing})
	default:
		d.Causes = append(d.Causes, Causes(old, c.Manifest)...)
		if !sameContent(old, c.Manifest) && len(d.Causes) == 0 {
			d.Causes = append(d.Causes, "manifest.json differs from what these inputs produce")
		}
		if !sameContent(old, c.Manifest) {
			cur, _ := readlimit.ReadRegularFile(filepath.Join(dir, ManifestFile), readlimit.Document)
			d.Files = append(d.Files, FileDrift{Path: ManifestFile, Kind: DriftChanged, Diff: UnifiedDiff(c.Dir()+"/"+ManifestFile, string(cur), string(c.Encoded))})
		}
	}
	if len(edited) > 0 {
		d.Causes = append(d.Causes, "edited by hand (no longer match their manifest hashes): "+joinMax(edited, 5))
	}
	if len(d.Files) > 0 || len(d.Causes) > 0 {
		d.Status = "drifted"
	}
	return d, nil
}

func recorded(m *Manifest, p string) string {
	for _, o := range m.Outputs {
		if o.Path == p {
			return o.SHA256
		}
	}
	return ""
}

// UnifiedDiff renders a unified diff (3 lines of context) from a to b,
// computed line by line with go-diff.
func UnifiedDiff(name, a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var ls []line
	for _, d := range diffs {
		text := d.Text
		parts := strings.SplitAfter(text, "\n")
		for _, p := range parts {
			if p != "" {
				ls = append(ls, line{d.Type, p})
			}
		}
	}
	const ctx = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	// Group changes into hunks.
	i := 0
	aLine, bLine := 1, 1
	type pos struct{ a, b int }
	at := make([]pos, len(ls))
	for k, l := range ls {
		at[k] = pos{aLine, bLine}
		switch l.op {
		case diffmatchpatch.DiffEqual:
			aLine++
			bLine++
		case diffmatchpatch.DiffDelete:
			aLine++
		case diffmatchpatch.DiffInsert:
			bLine++
		}
	}
	for i < len(ls) {
		if ls[i].op == diffmatchpatch.DiffEqual {
			i++
			continue
		}
		start := i - ctx
		if start < 0 {
			start = 0
		}
		end := i
		for end < len(ls) {
			if ls[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			// equal run: does another change follow within 2*ctx?
			j := end
			for j < len(ls) && ls[j].op == diffmatchpatch.DiffEqual {
				j++
			}
			if j < len(ls) && j-end <= 2*ctx {
				end = j
				continue
			}
			end = min(end+ctx, len(ls))
			break
		}
		na, nb := 0, 0
		for _, l := range ls[start:end] {
			if l.op != diffmatchpatch.DiffInsert {
				na++
			}
			if l.op != diffmatchpatch.DiffDelete {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", at[start].a, na, at[start].b, nb)
		for _, l := range ls[start:end] {
			prefix := " "
			switch l.op {
			case diffmatchpatch.DiffDelete:
				prefix = "-"
			case diffmatchpatch.DiffInsert:
				prefix = "+"
			}
			out.WriteString(prefix + l.text)
			if !strings.HasSuffix(l.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}
