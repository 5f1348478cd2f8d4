package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
	"github.com/dome-registry/dome/pkg/specfilter"
)

type specOpDecision struct {
	specfilter.OperationDecision
	webhook bool
}

func decisions(ds []specfilter.OperationDecision, webhook bool) []specOpDecision {
	out := make([]specOpDecision, len(ds))
	for i, d := range ds {
		out[i] = specOpDecision{d, webhook}
	}
	return out
}

// --- one profile of a tool

type profileData struct {
	Commit    string
	ToolID    string
	ToolURL   string
	Profile   string
	Path      string
	Blob      string
	Digest    string
	Error     string
	Info      specInfo
	Ops       []opDetail
	Selectors []specfilter.SelectorUse
	Counts    specfilter.Counts
	Warnings  []string
	Dropped   []specfilter.OperationDecision
}

// specInfo and opDetail are what a page shows of a filtered spec: read from
// its canonical JSON, shown as text.
type specInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type opDetail struct {
	Method, Path string
	Webhook      bool
	OperationID  string
	Summary      string
	Description  string
	Tags         []string
	Deprecated   bool
	Security     []string
}

type specOperation struct {
	OperationID string   `json:"operationId"`
	Summary     string   `json:"summary"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Deprecated  bool     `json:"deprecated"`
}

type specDoc struct {
	Info     specInfo                              `json:"info"`
	Paths    map[string]map[string]json.RawMessage `json:"paths"`
	Webhooks map[string]map[string]json.RawMessage `json:"webhooks"`
	XHooks   map[string]map[string]json.RawMessage `json:"x-webhooks"`
}

// operationDetails reads the texts of the kept operations from a filtered
// spec's canonical JSON (bounded: specfilter produced it under its limits).
func operationDetails(res *specfilter.Result) (specInfo, []opDetail) {
	var doc specDoc
	_ = json.Unmarshal(res.JSON, &doc)
	get := func(o specfilter.Operation) specOperation {
		var src map[string]map[string]json.RawMessage
		switch {
		case !o.Webhook:
			src = doc.Paths
		case doc.Webhooks[o.Path] != nil:
			src = doc.Webhooks
		default:
			src = doc.XHooks
		}
		var op specOperation
		if raw, ok := src[o.Path][strings.ToLower(o.Method)]; ok {
			_ = json.Unmarshal(raw, &op)
		}
		return op
	}
	out := make([]opDetail, 0, len(res.Operations))
	for _, o := range res.Operations {
		op := get(o)
		d := opDetail{Method: o.Method, Path: o.Path, Webhook: o.Webhook, OperationID: o.OperationID, Summary: op.Summary,
			Description: op.Description, Tags: o.Tags, Deprecated: op.Deprecated}
		for _, alt := range o.Security {
			var names []string
			for n, scopes := range alt {
				if len(scopes) > 0 {
					n += " (" + strings.Join(scopes, ", ") + ")"
				}
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) == 0 {
				names = []string{"none"}
			}
			d.Security = append(d.Security, strings.Join(names, " + "))
		}
		out = append(out, d)
	}
	return doc.Info, out
}

func (h *Handler) profilePage(w http.ResponseWriter, r *http.Request) {
	t, commit, ok := h.resolveTool(w, r)
	if !ok {
		return
	}
	id := r.PathValue("profile")
	f, err := h.filterAll(t)
	if err != nil {
		h.fail(w, r, "filter "+t.ToolID, err)
		return
	}
	known := false
	for _, x := range f.ids {
		known = known || x == id
	}
	if !known {
		h.fail(w, r, "profile", notFoundf("profiles of "+t.ToolID+" at "+short(commit)+": "+strings.Join(f.ids, ", "), "No profile %q for tool %s at %s.", id, t.ToolID, short(commit)))
		return
	}
	d := profileData{Commit: commit, ToolID: t.ToolID, ToolURL: toolURL(commit, t.ToolID), Profile: id, Error: f.errs[id]}
	if res, ok := f.results[id]; ok {
		d.Path, d.Blob, d.Digest = res.Profile.Path, res.Profile.Blob.String(), res.Result.Digest
		d.Info, d.Ops = operationDetails(res.Result)
		ex := res.Result.Explain
		d.Selectors, d.Counts, d.Warnings = ex.Selectors, ex.Counts, ex.Warnings
		for _, od := range append(append([]specfilter.OperationDecision{}, ex.Operations...), ex.Webhooks...) {
			if !od.Kept {
				d.Dropped = append(d.Dropped, od)
			}
		}
	}
	h.render(w, r, http.StatusOK, "profile.html", page{Title: t.ToolID + " " + id + " at " + short(commit),
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"registry " + short(commit), registryURL(commit)}, {t.ToolID, d.ToolURL}, {id, ""}}, Data: d})
}

// --- one release

type releaseData struct {
	ToolID  string
	ToolURL string
	Row     releaseRow
	Record  *registry.ReleaseRecord
	Raw     string
	Tagger  string
	Date    string
	// Checks: the record's profile blobs and filtered-spec digests
	// re-derived at the recorded commit (release.Verify without
	// regenerating clients).
	Problems []string
	Profiles []releaseProfile
	Clients  []kv
}

type releaseProfile struct {
	ID, Blob, Digest, URL string
}

type kv struct{ Key, Value string }

func (h *Handler) releasePage(w http.ResponseWriter, r *http.Request) {
	t, commit, ok := h.resolveTool(w, r)
	if !ok {
		return
	}
	version := r.PathValue("version")
	rels, err := h.opts.Registry.Releases(t.ToolID)
	if err != nil {
		h.fail(w, r, "releases", err)
		return
	}
	var rel *registry.Release
	var names []string
	for i := range rels {
		names = append(names, rels[i].Version)
		if rels[i].Version == version {
			rel = &rels[i]
		}
	}
	if rel == nil {
		hint := t.ToolID + " has no releases"
		if len(names) > 0 {
			hint = "releases of " + t.ToolID + ": " + strings.Join(names, ", ")
		}
		h.fail(w, r, "release", notFoundf(hint, "No release %s of %s.", version, t.ToolID))
		return
	}
	if rel.Commit.String() != commit {
		// The URL pins the release's commit: a tag that moved is another release.
		h.fail(w, r, "release", &inputError{Gone: true, Detail: "Release " + version + " of " + t.ToolID + " points at " + rel.Commit.String() + ", not " + commit + ".",
			Hint: "the tag moved after this link was made; its current page is " + toolURL(rel.Commit.String(), t.ToolID) + "releases/" + version + "/"})
		return
	}
	d := releaseData{ToolID: t.ToolID, ToolURL: toolURL(commit, t.ToolID)}
	for _, row := range h.releaseRows(t.ToolID, rels) {
		if row.Version == version {
			d.Row = row
		}
	}
	if info, err := h.opts.Registry.ReadRelease(*rel); err == nil {
		d.Record, d.Raw = info.Record, string(info.Raw)
		d.Tagger = info.Tag.Tagger.Name + " <" + info.Tag.Tagger.Email + ">"
		d.Date = info.Tag.Tagger.When.UTC().Format("2006-01-02 15:04:05 UTC")
		for _, id := range sortedKeys(info.Record.Profiles) {
			p := info.Record.Profiles[id]
			d.Profiles = append(d.Profiles, releaseProfile{ID: id, Blob: p.ProfileBlob.String(), Digest: p.FilteredSpecDigest, URL: d.ToolURL + "profiles/" + url.PathEscape(id) + "/"})
		}
		for _, k := range sortedKeys(info.Record.Manifests) {
			d.Clients = append(d.Clients, kv{k, info.Record.Manifests[k]})
		}
	}
	v, _ := cached(h.cache, "verify\x00"+rel.Tag+"\x00"+rel.TagObject.String(), func() (*release.Verification, error) {
		return release.Verify(r.Context(), h.opts.Registry, *rel, release.VerifyOptions{Keyring: h.opts.Keyring}), nil
	})
	d.Problems = v.Problems
	h.render(w, r, http.StatusOK, "release.html", page{Title: t.ToolID + " " + version,
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"registry " + short(commit), registryURL(commit)}, {t.ToolID, d.ToolURL}, {version, ""}}, Data: d})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// --- the breaking changes between two commits of a tool

type diffData struct {
	ToolID           string
	From, To         string
	FromURL, ToURL   string
	FromName, ToName string // release versions at those commits, if any
	Profiles         []release.ProfileDiff
	Breaking         int
	NonBreaking      int
}

func (h *Handler) diffPage(w http.ResponseWriter, r *http.Request) {
	t, commit, ok := h.resolveTool(w, r)
	if !ok {
		return
	}
	base := r.PathValue("base")
	bp, isSHA, err := h.pinCommit(r.Context(), t.ToolID, base)
	if err != nil {
		h.fail(w, r, "pin "+base, err)
		return
	}
	if !isSHA {
		redirectPinned(w, r, base, bp.Commit.String())
		return
	}
	from := bp.Commit.String()
	diffs, err := cached(h.cache, "diff\x00"+t.ToolID+"\x00"+from+"\x00"+commit, func() ([]release.ProfileDiff, error) {
		out, err := release.Diff(r.Context(), h.opts.Registry, registry.Ref{ID: t.ToolID, Rev: from}, registry.Ref{ID: t.ToolID, Rev: commit}, "")
		return out, notFoundInput(err)
	})
	if err != nil {
		h.fail(w, r, "diff "+t.ToolID, err)
		return
	}
	d := diffData{ToolID: t.ToolID, From: from, To: commit, FromURL: toolURL(from, t.ToolID), ToURL: toolURL(commit, t.ToolID), Profiles: diffs}
	if rels, err := h.opts.Registry.Releases(t.ToolID); err == nil {
		for _, rel := range rels {
			switch rel.Commit.String() {
			case from:
				d.FromName = rel.Version
			case commit:
				d.ToName = rel.Version
			}
		}
	}
	for _, p := range diffs {
		d.Breaking += len(p.Report.Breaking)
		d.NonBreaking += len(p.Report.NonBreaking)
	}
	h.render(w, r, http.StatusOK, "diff.html", page{Title: t.ToolID + " " + short(from) + ".." + short(commit),
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"registry " + short(commit), registryURL(commit)}, {t.ToolID, d.ToURL}, {"diff from " + short(from), ""}}, Data: d})
}
