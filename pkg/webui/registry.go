package webui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitsign"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
)

// registryURL is the stable URL of the registry at a commit.
func registryURL(commit string) string { return Prefix + "/registry/" + commit + "/" }

func toolURL(commit, tool string) string {
	return registryURL(commit) + "tools/" + url.PathEscape(tool) + "/"
}

func (h *Handler) noRegistry(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Registry == nil {
		h.fail(w, r, "registry", &inputError{Detail: "This server has no registry.", Hint: "start dome serve --ui inside a registry repository or with --repo PATH"})
		return true
	}
	return false
}

// pinCommit pins rev to a commit. A full SHA is answered as itself (ok);
// anything else (HEAD, a branch, a tag, a short SHA, vX.Y.Z for a tool's
// release) is resolved now and the caller redirects to the SHA, so that
// every page a user can share names a commit. Moving names are resolved on
// every request (the registry's pin cache would keep HEAD where it first was).
func (h *Handler) pinCommit(ctx context.Context, toolID, rev string) (p registry.Pin, isSHA bool, err error) {
	reg := h.opts.Registry
	if _, full := gitstore.ParseHash(rev); full && strings.ToLower(rev) == rev {
		p, err = reg.PinRev(ctx, toolID, rev, registry.PinOptions{Source: "URL"})
		return p, true, notFoundInput(err)
	}
	gitRev := rev
	if toolID != "" && registry.IsReleaseVersion(rev) {
		gitRev = registry.ReleaseRef(toolID, rev)
	}
	res, err := reg.Repo().ResolveRevision(gitRev)
	if err != nil {
		return p, false, &inputError{Detail: "No commit, tag or branch " + rev + " in the registry repository.", Hint: "use a full commit SHA, HEAD, a branch, a tag or a release vX.Y.Z"}
	}
	return registry.Pin{Requested: rev, Commit: res.Commit}, false, nil
}

// notFoundInput turns the registry's input errors (unknown tool, profile,
// commit) into 404 pages that carry their message and hint.
func notFoundInput(err error) error {
	var ie *errkind.InputError
	if errors.As(err, &ie) {
		return &inputError{Detail: ie.Problem, Hint: ie.Hint}
	}
	return err
}

// redirectPinned answers a URL that names a moving revision with a
// redirect to the same page at the commit it names now.
func redirectPinned(w http.ResponseWriter, r *http.Request, from, to string) {
	segs := strings.Split(r.URL.Path, "/")
	for i, s := range segs {
		if s == url.PathEscape(from) || s == from {
			segs[i] = to
			break
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, strings.Join(segs, "/"), http.StatusFound)
}

// --- the registry at a commit

type registryData struct {
	Commit string
	Tools  []toolRow
}

type toolRow struct {
	registry.ToolSummary
	URL        string
	Deprecated string
	Releases   []releaseRow
}

// releaseRow is one release tag with the state of its record and
// signature.
type releaseRow struct {
	Version   string
	Tag       string
	TagObject string
	Commit    string
	URL       string // the release page, under the release's commit
	DiffURL   string // the diff against the previous release ("" for the first)
	Previous  string
	// Record: "ok", or what is wrong ("lightweight tag", "moved: ...").
	Record   string
	RecordOK bool
	// Signature: "unsigned", "signed (not checked: no keyring)",
	// "signed by <key id>", or "bad signature: ...".
	Signature   string
	SignatureOK bool
	Signed      bool
	Breaking    int
	AllowReason string
}

func (h *Handler) registryIndex(w http.ResponseWriter, r *http.Request) {
	if h.noRegistry(w, r) {
		return
	}
	rev := r.PathValue("rev")
	p, isSHA, err := h.pinCommit(r.Context(), "", rev)
	if err != nil {
		h.fail(w, r, "pin "+rev, err)
		return
	}
	if !isSHA {
		redirectPinned(w, r, rev, p.Commit.String())
		return
	}
	commit := p.Commit.String()
	tools, err := h.opts.Registry.List(p)
	if err != nil {
		h.fail(w, r, "list tools", notFoundInput(err))
		return
	}
	all, err := h.opts.Registry.AllReleases()
	if err != nil {
		h.fail(w, r, "list releases", err)
		return
	}
	d := registryData{Commit: commit}
	for _, t := range tools {
		row := toolRow{ToolSummary: t, URL: toolURL(commit, t.ID), Releases: h.releaseRows(t.ID, all[t.ID])}
		if t.Deprecated != nil {
			row.Deprecated = t.Deprecated.Reason
		}
		d.Tools = append(d.Tools, row)
	}
	h.render(w, r, http.StatusOK, "registry.html", page{Title: "Registry at " + short(commit),
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"registry " + short(commit), ""}}, Data: d})
}

// releaseRows describes a tool's releases, newest first.
func (h *Handler) releaseRows(toolID string, rels []registry.Release) []releaseRow {
	out := make([]releaseRow, 0, len(rels))
	for i, rel := range rels {
		row := h.releaseState(rel)
		row.URL = toolURL(row.Commit, toolID) + "releases/" + url.PathEscape(rel.Version) + "/"
		if i > 0 {
			prev := rels[i-1]
			row.Previous = prev.Version
			row.DiffURL = toolURL(row.Commit, toolID) + "diff/" + prev.Commit.String() + "/"
		}
		out = append(out, row)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// releaseState reads a release tag's record and checks its signature; the
// answer is kept per tag object (a tag object never changes; a moved tag is
// another object).
func (h *Handler) releaseState(rel registry.Release) releaseRow {
	key := "release\x00" + rel.Tag + "\x00" + rel.TagObject.String() + "\x00" + rel.Commit.String()
	row, _ := cached(h.cache, key, func() (releaseRow, error) {
		row := releaseRow{Version: rel.Version, Tag: rel.Tag, TagObject: rel.TagObject.String(), Commit: rel.Commit.String()}
		reg := h.opts.Registry
		info, err := reg.ReadRelease(rel)
		switch {
		case err != nil:
			row.Record = err.Error()
		case info.Record.Commit != rel.Commit:
			row.Record = "moved: the tag points at " + rel.Commit.Short() + ", its record says " + info.Record.Commit.Short()
		default:
			row.Record, row.RecordOK = "ok", true
			row.Breaking = len(info.Record.BreakingChanges)
			row.AllowReason = info.Record.AllowBreaking
		}
		row.Signature = "unsigned"
		if info != nil && info.Tag != nil && info.Tag.PGPSignature != "" {
			row.Signed = true
			row.Signature = "signed (not checked: the server has no keyring)"
			if len(h.opts.Keyring) > 0 {
				id, err := gitsign.VerifyTagSignature(reg.Repo(), rel.TagObject, h.opts.Keyring)
				if err != nil {
					row.Signature = "bad signature: " + err.Error()
				} else {
					row.Signature, row.SignatureOK = "signed by "+id, true
				}
			}
		}
		return row, nil
	})
	return row
}

// --- one tool at a commit

type toolData struct {
	Commit   string
	Details  *registry.ToolDetails
	Homepage string
	Profiles []profileColumn
	Ops      []opRow
	Releases []releaseRow
	Files    []registry.FileEntry
	Langs    []langRow
}

type langRow struct{ Lang, Bundle string }

type profileColumn struct {
	ID      string
	URL     string
	Default bool
	Kept    int
	Digest  string
	Error   string // the profile does not filter cleanly
}

// opRow is one operation of the spec and what each profile does with it.
type opRow struct {
	Method, Path, OperationID string
	Webhook                   bool
	Cells                     []opCell // one per profile column
}

type opCell struct {
	Kept     bool
	Decision string // allow, deny, not allowed, ...
	Selector string
}

// filtered is every profile of a tool filtered at one commit.
type filtered struct {
	tool    *registry.ToolResolution
	ids     []string
	results map[string]release.Filtered
	errs    map[string]string
	loadErr string
}

// filterAll filters the tool with each of its profiles; the answer is kept
// per tool tree (the same tree filters the same way).
func (h *Handler) filterAll(t *registry.ToolResolution) (*filtered, error) {
	return cached(h.cache, "filter\x00"+t.ToolID+"\x00"+t.Commit.String(), func() (*filtered, error) {
		reg := h.opts.Registry
		ids, err := reg.ProfileIDs(t.ToolID, t.Pin)
		if err != nil {
			return nil, notFoundInput(err)
		}
		f := &filtered{tool: t, ids: ids, results: map[string]release.Filtered{}, errs: map[string]string{}}
		for _, id := range ids {
			res, err := release.FilterProfiles(reg, t, []string{id})
			if err != nil {
				f.errs[id] = err.Error()
				continue
			}
			f.results[id] = res[id]
		}
		return f, nil
	})
}

func (h *Handler) resolveTool(w http.ResponseWriter, r *http.Request) (*registry.ToolResolution, string, bool) {
	if h.noRegistry(w, r) {
		return nil, "", false
	}
	rev, toolID := r.PathValue("rev"), r.PathValue("tool")
	if !registry.ValidID(toolID) {
		h.fail(w, r, "tool", notFoundf("tool ids are lower-case letters, digits and dashes", "No tool %q.", toolID))
		return nil, "", false
	}
	p, isSHA, err := h.pinCommit(r.Context(), toolID, rev)
	if err != nil {
		h.fail(w, r, "pin "+rev, err)
		return nil, "", false
	}
	if !isSHA {
		redirectPinned(w, r, rev, p.Commit.String())
		return nil, "", false
	}
	t, err := h.opts.Registry.ToolAt(registry.Ref{ID: toolID, Rev: rev}, p)
	if err != nil {
		h.fail(w, r, "tool "+toolID, notFoundInput(err))
		return nil, "", false
	}
	return t, p.Commit.String(), true
}

func (h *Handler) toolPage(w http.ResponseWriter, r *http.Request) {
	t, commit, ok := h.resolveTool(w, r)
	if !ok {
		return
	}
	reg := h.opts.Registry
	det, err := reg.Show(t)
	if err != nil {
		h.fail(w, r, "show "+t.ToolID, notFoundInput(err))
		return
	}
	f, err := h.filterAll(t)
	if err != nil {
		h.fail(w, r, "filter "+t.ToolID, err)
		return
	}
	d := toolData{Commit: commit, Details: det, Files: t.Files, Releases: h.releaseRows(t.ToolID, det.AllReleases)}
	if u, err := url.Parse(t.Tool.Homepage); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		d.Homepage = t.Tool.Homepage
	}
	for l, g := range det.Generators {
		d.Langs = append(d.Langs, langRow{l, g.Bundle})
	}
	sort.Slice(d.Langs, func(i, j int) bool { return d.Langs[i].Lang < d.Langs[j].Lang })
	d.Profiles, d.Ops = operationMatrix(f, commit, t.Tool.DefaultProfile)
	h.render(w, r, http.StatusOK, "tool.html", page{Title: t.ToolID + " at " + short(commit),
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"registry " + short(commit), registryURL(commit)}, {t.ToolID, ""}}, Data: d})
}

// operationMatrix lays out every operation of the spec against every
// profile: kept or not, and the selector that decided.
func operationMatrix(f *filtered, commit, def string) ([]profileColumn, []opRow) {
	var cols []profileColumn
	type key struct{ m, p string }
	rows := map[key]*opRow{}
	var order []key
	for ci, id := range f.ids {
		col := profileColumn{ID: id, URL: toolURL(commit, f.tool.ToolID) + "profiles/" + url.PathEscape(id) + "/", Default: id == def, Error: f.errs[id]}
		if res, ok := f.results[id]; ok {
			col.Kept = len(res.Result.Operations)
			col.Digest = res.Result.Digest
			ex := res.Result.Explain
			for _, list := range [][]specOpDecision{decisions(ex.Operations, false), decisions(ex.Webhooks, true)} {
				for _, od := range list {
					k := key{od.Method, od.Path}
					row := rows[k]
					if row == nil {
						row = &opRow{Method: od.Method, Path: od.Path, OperationID: od.OperationID, Webhook: od.webhook, Cells: make([]opCell, len(f.ids))}
						rows[k] = row
						order = append(order, k)
					}
					row.Cells[ci] = opCell{Kept: od.Kept, Decision: od.Decision, Selector: od.Selector}
				}
			}
		}
		cols = append(cols, col)
	}
	out := make([]opRow, 0, len(order))
	for _, k := range order {
		out = append(out, *rows[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Webhook != out[j].Webhook {
			return !out[i].Webhook
		}
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return cols, out
}
