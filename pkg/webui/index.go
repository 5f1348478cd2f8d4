package webui

import (
	"net/http"
)

type indexData struct {
	HasRegistry bool
	Head        string // HEAD's commit
	HeadError   string
	HasActions  bool
	HasRuns     bool
	Runs        []runListRow
}

// index is the start page: where each view is. Its links name HEAD's
// commit as it is now; the pages behind them are stable.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	d := indexData{HasRegistry: h.opts.Registry != nil, HasActions: h.opts.Actions != nil, HasRuns: h.opts.RunsDir != ""}
	if d.HasRegistry {
		if res, err := h.opts.Registry.Repo().ResolveRevision("HEAD"); err != nil {
			d.HeadError = err.Error()
		} else {
			d.Head = res.Commit.String()
		}
	}
	if d.HasRuns {
		d.Runs, _ = listRuns(h.opts.RunsDir)
	}
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, http.StatusOK, "index.html", page{Title: "dome", Data: d})
}
