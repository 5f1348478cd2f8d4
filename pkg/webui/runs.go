package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// runLayout checks the URL's run id and the server's runs folder.
func (h *Handler) runLayout(w http.ResponseWriter, r *http.Request) (stack.Layout, bool) {
	if h.opts.RunsDir == "" {
		h.fail(w, r, "runs", &inputError{Detail: "This server has no runs folder.", Hint: "start dome serve --ui inside the repository or with --ops DIR"})
		return stack.Layout{}, false
	}
	id := r.PathValue("run")
	if err := ledger.CheckRunID(id); err != nil {
		h.fail(w, r, "run", notFoundf("", "No run %q: %v", id, err))
		return stack.Layout{}, false
	}
	return stack.NewLayout(h.opts.RunsDir, id), true
}

// viewAt returns the view of the run at sequence seq (0: the latest) and
// the events up to it.
func (h *Handler) viewAt(l stack.Layout, seq int64) (*RunView, []ledger.Event, error) {
	rl := h.runs.get(l)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if err := rl.refresh(); err != nil {
		return nil, nil, err
	}
	latest := int64(len(rl.events))
	if latest == 0 {
		return nil, nil, &inputError{Detail: fmt.Sprintf("Run %s has no events yet.", l.RunID), Hint: "dome stack init --run " + l.RunID + " starts it"}
	}
	if seq == 0 {
		seq = latest
	}
	if seq < 1 || seq > latest {
		return nil, nil, &inputError{Detail: fmt.Sprintf("Run %s has no event %d: its ledger has %d.", l.RunID, seq, latest), Hint: "its latest state is at " + runURL(l.RunID)}
	}
	evs := rl.events[:seq:seq]
	key := "runview\x00" + l.Root + "\x00" + strconv.FormatInt(seq, 10)
	if v, ok := h.cache.get(key); ok {
		cp := *v.(*RunView)
		cp.Latest = latest
		return &cp, evs, nil
	}
	var v *RunView
	if seq == latest && rl.foldErr == nil {
		v = h.buildView(l, &rl.state, evs, seq, latest, nil)
		cloneView(v)
	} else {
		st, err := stack.Fold(l.RunID, evs)
		v = h.buildView(l, &st, evs, seq, latest, err)
	}
	h.cache.put(key, v)
	return v, evs, nil
}

// cloneView copies the parts of a view that alias the folded state, whose
// slices a later event may rewrite (a rollback shortens the layers, and the
// next layer reuses their array).
func cloneView(v *RunView) {
	v.Waves = slices.Clone(v.Waves)
	v.Layers = slices.Clone(v.Layers)
	v.Rejections = slices.Clone(v.Rejections)
	v.Validations = slices.Clone(v.Validations)
	v.Gates = slices.Clone(v.Gates)
	v.Promotions = slices.Clone(v.Promotions)
	if v.Promoted != nil {
		p := *v.Promoted
		v.Promoted = &p
	}
	if v.Plan != nil {
		v.Plan.Ordered = slices.Clone(v.Plan.Ordered)
		v.Plan.Rejected = slices.Clone(v.Plan.Rejected)
	}
}

func parseSeq(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// runRequest resolves the run and sequence of a /runs/{run}/at/{seq}/ URL.
func (h *Handler) runRequest(w http.ResponseWriter, r *http.Request) (stack.Layout, *RunView, []ledger.Event, bool) {
	l, ok := h.runLayout(w, r)
	if !ok {
		return l, nil, nil, false
	}
	seq, ok := parseSeq(r.PathValue("seq"))
	if !ok {
		h.fail(w, r, "run", notFoundf("a sequence is a positive number: "+runURL(l.RunID)+"at/1/", "No event %q in run %s.", r.PathValue("seq"), l.RunID))
		return l, nil, nil, false
	}
	v, evs, err := h.viewAt(l, seq)
	if err != nil {
		h.fail(w, r, "run "+l.RunID, err)
		return l, nil, nil, false
	}
	return l, v, evs, true
}

func runCrumbs(v *RunView, last string) []crumb {
	c := []crumb{{"dome", Prefix + "/"}, {"runs", Prefix + "/runs/"}, {v.RunID, runURL(v.RunID)}, {"event " + strconv.FormatInt(v.Sequence, 10), v.Base}}
	if last != "" {
		c = append(c, crumb{last, ""})
	} else {
		c[len(c)-1].URL = ""
	}
	return c
}

// --- pages

type runsData struct {
	Dir  string
	Runs []runListRow
}

func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.RunsDir == "" {
		h.fail(w, r, "runs", &inputError{Detail: "This server has no runs folder.", Hint: "start dome serve --ui inside the repository or with --ops DIR"})
		return
	}
	runs, err := listRuns(h.opts.RunsDir)
	if err != nil {
		h.fail(w, r, "list runs", err)
		return
	}
	h.render(w, r, http.StatusOK, "runs.html", page{Title: "Runs", Crumbs: []crumb{{"dome", Prefix + "/"}, {"runs", ""}}, Data: runsData{Dir: h.opts.RunsDir, Runs: runs}})
}

// runLatest shows the run's latest state; while the run goes on the page
// follows its ledger (server-sent events) and links its stable URL.
func (h *Handler) runLatest(w http.ResponseWriter, r *http.Request) {
	l, ok := h.runLayout(w, r)
	if !ok {
		return
	}
	v, _, err := h.viewAt(l, 0)
	if err != nil {
		h.fail(w, r, "run "+l.RunID, err)
		return
	}
	p := page{Title: "Run " + v.RunID, Crumbs: []crumb{{"dome", Prefix + "/"}, {"runs", Prefix + "/runs/"}, {v.RunID, ""}}, Permalink: v.Base, Data: h.runPageData(v)}
	if !v.Ended {
		p.Live = runURL(v.RunID) + "live?after=" + strconv.FormatInt(v.Sequence, 10)
	}
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, http.StatusOK, "run.html", p)
}

// runPageData is the run page: the view and, for a wave run, its drawn graph.
type runPageData struct {
	*RunView
	QueueDrawing   *Drawing
	QueueDrawError string
}

func (h *Handler) runPageData(v *RunView) runPageData {
	d := runPageData{RunView: v}
	if q := v.Queue; q != nil && q.Error == "" {
		type drawn struct {
			d   *Drawing
			err string
		}
		dr, _ := cached(h.cache, "queuegraph\x00"+q.Digest, func() (drawn, error) {
			d, err := draw(q.Mermaid)
			return drawn{d, err}, nil
		})
		d.QueueDrawing, d.QueueDrawError = dr.d, dr.err
	}
	return d
}

func (h *Handler) runPage(w http.ResponseWriter, r *http.Request) {
	_, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "run.html", page{Title: "Run " + v.RunID + " at event " + strconv.FormatInt(v.Sequence, 10), Crumbs: runCrumbs(v, ""), Data: h.runPageData(v)})
}

// runJSON answers the same view as JSON.
func (h *Handler) runJSON(w http.ResponseWriter, r *http.Request) {
	_, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		h.fail(w, r, "encode run "+v.RunID, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

type eventsData struct {
	View   *RunView
	Events []eventRow
}

type eventRow struct {
	Sequence int64
	TS       string
	Topic    string
	EventID  string
	Payload  string
	Cut      bool
}

// maxPayloadShown bounds the payload text shown per event.
const maxPayloadShown = 4096

func (h *Handler) eventsPage(w http.ResponseWriter, r *http.Request) {
	_, v, evs, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	d := eventsData{View: v, Events: make([]eventRow, 0, len(evs))}
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		p := string(e.Payload)
		cut := len(p) > maxPayloadShown
		if cut {
			p = p[:maxPayloadShown]
		}
		d.Events = append(d.Events, eventRow{Sequence: e.Sequence, TS: e.TS, Topic: e.Topic, EventID: e.EventID, Payload: p, Cut: cut})
	}
	h.render(w, r, http.StatusOK, "events.html", page{Title: "Run " + v.RunID + " ledger", Crumbs: runCrumbs(v, "ledger"), Data: d})
}
