package webui

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/dome-registry/dome/pkg/action"
)

func actionURL(name string) string { return Prefix + "/actions/" + url.PathEscape(name) + "/" }

func actionVersionURL(name, version string) string {
	return actionURL(name) + url.PathEscape(version) + "/"
}

func (h *Handler) noActions(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Actions == nil {
		h.fail(w, r, "actions", &inputError{Detail: "This server has no action store.", Hint: "start dome serve --ui with --store"})
		return true
	}
	return false
}

type actionsData struct {
	Actions []actionRow
}

type actionRow struct {
	Name, Description, Latest string
	URL                       string
	Versions                  []versionRow
}

// versionRow is one published version with its verification state.
type versionRow struct {
	Version     string
	URL         string
	Hash        string
	KID         string
	Verified    bool
	Code        string // UNKNOWN_KEY_ID or BAD_SIGNATURE when not verified
	Reason      string
	Deprecated  string // the reason, when deprecated
	Latest      bool
	Revision    string
	ReadProblem string // the store could not return it
}

func (h *Handler) actionsPage(w http.ResponseWriter, r *http.Request) {
	if h.noActions(w, r) {
		return
	}
	sums, err := h.opts.Actions.List(r.Context())
	if err != nil {
		h.fail(w, r, "list actions", err)
		return
	}
	var d actionsData
	for _, s := range sums {
		row := actionRow{Name: s.Name, Description: s.Description, Latest: s.LatestVersion, URL: actionURL(s.Name)}
		row.Versions = h.versionRows(r, s)
		d.Actions = append(d.Actions, row)
	}
	h.render(w, r, http.StatusOK, "actions.html", page{Title: "Signed actions", Crumbs: []crumb{{"dome", Prefix + "/"}, {"actions", ""}}, Data: d})
}

// versionRows reads and verifies every version of an action, newest first.
func (h *Handler) versionRows(r *http.Request, s action.Summary) []versionRow {
	out := make([]versionRow, 0, len(s.Versions))
	for i := len(s.Versions) - 1; i >= 0; i-- {
		v := s.Versions[i]
		row := versionRow{Version: v, URL: actionVersionURL(s.Name, v), Deprecated: s.Deprecated[v], Latest: v == s.LatestVersion}
		rec, err := h.opts.Actions.Get(r.Context(), s.Name, v)
		if err != nil {
			row.ReadProblem = err.Error()
			out = append(out, row)
			continue
		}
		h.verifyInto(&row, rec)
		out = append(out, row)
	}
	return out
}

func (h *Handler) verifyInto(row *versionRow, rec action.Record) {
	ver := h.vcache.VerifyRecord(rec, h.opts.Keys)
	row.Hash, row.KID, row.Verified, row.Revision = ver.Hash, ver.KID, ver.Verified, rec.Revision
	if row.Hash == "" {
		row.Hash = rec.Hash
	}
	if !ver.Verified {
		row.Code, row.Reason = ver.Code(), ver.Reason
	}
}

type actionData struct {
	Name, Description, Latest string
	Versions                  []versionRow
}

func (h *Handler) actionPage(w http.ResponseWriter, r *http.Request) {
	if h.noActions(w, r) {
		return
	}
	name := r.PathValue("name")
	if err := action.CheckName(name); err != nil {
		h.fail(w, r, "action", notFoundf("", "No action %q: %v", name, err))
		return
	}
	sums, err := h.opts.Actions.List(r.Context())
	if err != nil {
		h.fail(w, r, "list actions", err)
		return
	}
	for _, s := range sums {
		if s.Name == name {
			d := actionData{Name: s.Name, Description: s.Description, Latest: s.LatestVersion, Versions: h.versionRows(r, s)}
			h.render(w, r, http.StatusOK, "action.html", page{Title: name,
				Crumbs: []crumb{{"dome", Prefix + "/"}, {"actions", Prefix + "/actions/"}, {name, ""}}, Data: d})
			return
		}
	}
	h.fail(w, r, "action", notFoundf("see the published actions at "+Prefix+"/actions/", "No action %q.", name))
}

type actionVersionData struct {
	Name    string
	Row     versionRow
	View    action.View
	Schema  string // the signed payload, indented
	SigJSON string
}

func (h *Handler) actionVersionPage(w http.ResponseWriter, r *http.Request) {
	if h.noActions(w, r) {
		return
	}
	name, version := r.PathValue("name"), r.PathValue("version")
	if action.CheckName(name) != nil || action.CheckVersion(version) != nil {
		h.fail(w, r, "action", notFoundf("", "No action version %s@%s.", name, version))
		return
	}
	rec, err := h.opts.Actions.Get(r.Context(), name, version)
	switch {
	case errors.Is(err, action.ErrActionNotFound):
		h.fail(w, r, "action", notFoundf("see the published actions at "+Prefix+"/actions/", "No action %q.", name))
		return
	case errors.Is(err, action.ErrVersionNotFound):
		h.fail(w, r, "action", notFoundf("see its versions at "+actionURL(name), "Action %s has no version %s.", name, version))
		return
	case err != nil:
		h.fail(w, r, "get "+name+"@"+version, err)
		return
	}
	d := actionVersionData{Name: name, Row: versionRow{Version: version, URL: actionVersionURL(name, version)}}
	h.verifyInto(&d.Row, rec)
	ver := h.vcache.VerifyRecord(rec, h.opts.Keys)
	d.View = action.NewView(rec, ver)
	if rec.Deprecation != nil {
		d.Row.Deprecated = rec.Deprecation.Reason
	}
	d.Schema = indentJSON(d.View.Schema)
	if d.View.Signature != nil {
		b, _ := json.Marshal(d.View.Signature)
		d.SigJSON = indentJSON(b)
	}
	h.render(w, r, http.StatusOK, "action_version.html", page{Title: name + "@" + version,
		Crumbs: []crumb{{"dome", Prefix + "/"}, {"actions", Prefix + "/actions/"}, {name, actionURL(name)}, {version, ""}}, Data: d})
}

// indentJSON lays out JSON for reading; bytes that are not JSON are shown
// as they are.
func indentJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}
