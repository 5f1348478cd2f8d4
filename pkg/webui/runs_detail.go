package webui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
)

// maxArtifactBytes bounds a run artifact read for a page.
const maxArtifactBytes = 64 << 20

// readArtifact reads an artifact the ledger cites by path and digest: the
// path must stay inside the run folder, the bytes must have the recorded
// digest, and the sealed document must be of kind; its payload is decoded
// into v.
func readArtifact(l stack.Layout, rel, digest, kind string, v any) (*artifact.Sealed, error) {
	if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, fmt.Errorf("the ledger names %q, which is not a path inside the run folder", rel)
	}
	f, err := os.Open(l.Abs(rel))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	if len(b) > maxArtifactBytes {
		return nil, fmt.Errorf("%s is over %d bytes", rel, maxArtifactBytes)
	}
	if d := canonical.Digest(b); d != digest {
		return nil, fmt.Errorf("%s hashes to %s, the ledger recorded %s: it changed after the event", rel, d, digest)
	}
	s, err := artifact.Open(b, artifact.OpenOptions{Kind: kind})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	if v != nil {
		if err := json.Unmarshal(s.Payload, v); err != nil {
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
	}
	return s, nil
}

// --- the plan

type planData struct {
	View      *RunView
	Plan      *stack.StackPlan
	Error     string
	Scores    []stack.SelectionScore
	Drawing   *Drawing
	DrawError string
	Mermaid   string
	Dot       string
	Signer    string
}

// planArtifact is a plan read and drawn once per artifact digest.
type planArtifact struct {
	plan      *stack.StackPlan
	signer    string
	mermaid   string
	dot       string
	drawing   *Drawing
	drawError string
}

func (h *Handler) loadPlan(l stack.Layout, v *RunView) (*planArtifact, error) {
	if v.Plan == nil {
		return nil, &inputError{Detail: fmt.Sprintf("Run %s has no plan at event %d.", v.RunID, v.Sequence), Hint: "dome stack plan --run " + v.RunID + " computes one"}
	}
	return cached(h.cache, "plan\x00"+v.Plan.Digest, func() (*planArtifact, error) {
		var p stack.StackPlan
		s, err := readArtifact(l, v.Plan.Path, v.Plan.Digest, stack.KindStackPlan, &p)
		if err != nil {
			return nil, err
		}
		pa := &planArtifact{plan: &p, signer: s.Header.KID, mermaid: stack.RenderMermaid(p), dot: stack.RenderDot(p)}
		pa.drawing, pa.drawError = draw(pa.mermaid)
		return pa, nil
	})
}

// draw lays out Mermaid text, or says why it is not drawn.
func draw(mermaid string) (*Drawing, string) {
	g, err := ParseMermaid(mermaid)
	if err != nil {
		return nil, err.Error()
	}
	d, err := Layout(g)
	if err != nil {
		return nil, err.Error()
	}
	return d, ""
}

func (h *Handler) planPage(w http.ResponseWriter, r *http.Request) {
	l, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	d := planData{View: v}
	pa, err := h.loadPlan(l, v)
	if ie, isInput := err.(*inputError); isInput {
		h.fail(w, r, "plan", ie)
		return
	}
	if err != nil {
		d.Error = err.Error()
	} else {
		d.Plan, d.Scores, d.Drawing, d.DrawError, d.Mermaid, d.Dot, d.Signer = pa.plan, pa.plan.SelectionScores, pa.drawing, pa.drawError, pa.mermaid, pa.dot, pa.signer
	}
	h.render(w, r, http.StatusOK, "plan.html", page{Title: "Run " + v.RunID + " plan", Crumbs: runCrumbs(v, "plan"), Data: d})
}

// planSource answers plan.mmd and plan.dot: the bytes dome stack plan
// --format mermaid|dot prints for the same plan.
func (h *Handler) planSource(w http.ResponseWriter, r *http.Request) {
	l, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	pa, err := h.loadPlan(l, v)
	if err != nil {
		h.fail(w, r, "plan", err)
		return
	}
	text := pa.mermaid
	if strings.HasSuffix(r.URL.Path, ".dot") {
		text = pa.dot
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, text)
}

// graphSource answers graph.mmd and graph.dot of a wave run's work queue:
// the bytes dome run graph --format mermaid|dot prints.
func (h *Handler) graphSource(w http.ResponseWriter, r *http.Request) {
	_, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	if v.Queue == nil || v.Queue.Error != "" {
		h.fail(w, r, "graph", notFoundf("a wave run keeps its TaskSpec graph in work.queue.json", "Run %s has no readable work queue.", v.RunID))
		return
	}
	text := v.Queue.Mermaid
	if strings.HasSuffix(r.URL.Path, ".dot") {
		text = v.Queue.Dot
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, text)
}

// --- checkpoints on the integration ref

type checkpointsData struct {
	View   *RunView
	Base   string
	Rows   []checkpointRow
	RefAt  string // where the integration ref points now
	InSync bool
	Error  string
}

type checkpointRow struct {
	N                    int
	Commit, Parent, Tree string
	Info                 stack.CheckpointInfo
	IsDome               bool
	Subject              string
	Known                bool // a layer of the run at this event
}

func (h *Handler) checkpointsPage(w http.ResponseWriter, r *http.Request) {
	_, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	d := checkpointsData{View: v}
	repo := h.repo()
	switch {
	case repo == nil:
		d.Error = "This server has no repository to read the integration ref from."
	case len(v.Waves) == 0:
		d.Error = "The run has no base yet."
	default:
		d.Base = v.Waves[0].BaseRef
		if at, err := repo.Ref(v.IntegrationRef); err == nil {
			d.RefAt = at.String()
			d.InSync = d.RefAt == v.IntegrationHead
		}
		base, ok1 := gitstore.ParseHash(d.Base)
		head, ok2 := gitstore.ParseHash(v.IntegrationHead)
		if !ok1 || !ok2 {
			d.Error = "The ledger's base or head is not a commit id."
			break
		}
		chain, err := stack.Chain(repo, base, head, 1<<20)
		if err != nil {
			d.Error = "The integration head's history cannot be read: " + err.Error()
			break
		}
		known := map[string]bool{}
		for _, l := range v.Layers {
			known[l.CheckpointID] = true
		}
		for i, c := range chain {
			row := checkpointRow{N: i + 1, Commit: c.Commit.String(), Parent: c.Parent.String(), Tree: c.Tree.String(), Info: c.Checkpoint, IsDome: c.IsDome, Known: known[c.Commit.String()]}
			if cm, err := repo.Commit(c.Commit); err == nil {
				row.Subject, _, _ = strings.Cut(cm.Message, "\n")
			}
			d.Rows = append(d.Rows, row)
		}
	}
	h.render(w, r, http.StatusOK, "checkpoints.html", page{Title: "Run " + v.RunID + " checkpoints", Crumbs: runCrumbs(v, "checkpoints"), Data: d})
}

// repo is the repository the runs integrate into.
func (h *Handler) repo() *gitstore.Repo {
	if h.opts.Repo != nil {
		return h.opts.Repo
	}
	if h.opts.Registry != nil {
		return h.opts.Registry.Repo()
	}
	return nil
}

// --- one validation report

type validationData struct {
	View   *RunView
	State  stack.ValidationState
	Report *stack.ValidationReport
	Error  string
	Tools  []kv
}

func (h *Handler) validationPage(w http.ResponseWriter, r *http.Request) {
	l, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	id := r.PathValue("report")
	var st *stack.ValidationState
	for i := range v.Validations {
		if v.Validations[i].ReportID == id {
			st = &v.Validations[i]
		}
	}
	if st == nil {
		h.fail(w, r, "validation", notFoundf("the run's validations are listed at "+v.Base, "Run %s has no validation report %q at event %d.", v.RunID, id, v.Sequence))
		return
	}
	d := validationData{View: v, State: *st}
	var rep stack.ValidationReport
	if _, err := readArtifact(l, st.Path, st.ArtifactDigest, stack.KindValidationReport, &rep); err != nil {
		d.Error = err.Error()
	} else {
		d.Report = &rep
		for _, k := range sortedKeys(rep.Environment.Tools) {
			d.Tools = append(d.Tools, kv{k, rep.Environment.Tools[k]})
		}
	}
	h.render(w, r, http.StatusOK, "validation.html", page{Title: "Validation " + id, Crumbs: runCrumbs(v, "validation "+id), Data: d})
}

// --- the evidence chain behind a promotion

type evidenceData struct {
	View       *RunView
	Decisions  []decisionView
	Audit      *stack.PromotionVerification
	AuditError string
}

type decisionView struct {
	State    stack.PromotionState
	Decision *stack.PromotionDecision
	Error    string
	// Signature: "not signed", "signed by KID, verified", "signed by KID
	// (not checked: ...)" or what failed.
	Signature   string
	SignatureOK bool
	Evidence    []evidenceRow
	Gate        *stack.GateDecision
	GateError   string
}

type evidenceRow struct {
	stack.EvidenceRef
	URL   string
	State string
	OK    bool
}

func (h *Handler) signatureState(hd artifact.Header) (string, bool) {
	switch {
	case hd.Signature == "":
		return "not signed", false
	case h.opts.CoordinatorKeys == nil:
		return "signed by " + hd.KID + " (not checked: the server has no coordinator keys)", false
	}
	if err := artifact.VerifyHeader(hd, h.opts.CoordinatorKeys); err != nil {
		return "signed by " + hd.KID + ": the signature does not verify: " + err.Error(), false
	}
	return "signed by " + hd.KID + ", verified", true
}

func (h *Handler) evidencePage(w http.ResponseWriter, r *http.Request) {
	l, v, _, ok := h.runRequest(w, r)
	if !ok {
		return
	}
	d := evidenceData{View: v}
	for _, ps := range v.Promotions {
		dv := decisionView{State: ps}
		var dec stack.PromotionDecision
		s, err := readArtifact(l, ps.Path, ps.ArtifactDigest, stack.KindPromotionDecision, &dec)
		if err != nil {
			dv.Error = err.Error()
			d.Decisions = append(d.Decisions, dv)
			continue
		}
		dv.Decision = &dec
		dv.Signature, dv.SignatureOK = h.signatureState(s.Header)
		for _, e := range dec.Evidence {
			row := evidenceRow{EvidenceRef: e}
			if e.Kind == stack.KindValidationReport {
				row.URL = v.Base + "validations/" + e.ID + "/"
			}
			if e.Kind == stack.KindGateDecision {
				var g stack.GateDecision
				if gs, err := readArtifact(l, e.Path, e.Digest, stack.KindGateDecision, &g); err != nil {
					dv.GateError = err.Error()
				} else {
					dv.Gate = &g
					if gs.Header.Signature != "" {
						if st, ok := h.signatureState(gs.Header); !ok {
							dv.GateError = "gate decision " + st
						}
					}
				}
			}
			row.State, row.OK = evidenceState(l, e)
			dv.Evidence = append(dv.Evidence, row)
		}
		d.Decisions = append(d.Decisions, dv)
	}
	if v.Promoted != nil && v.Sequence == v.Latest && h.repo() != nil {
		res, err := stack.VerifyPromotion(h.repo(), l, stack.VerifyPromotionOptions{Trusted: h.opts.CoordinatorKeys})
		if err != nil {
			d.AuditError = err.Error()
		}
		d.Audit = res
	}
	h.render(w, r, http.StatusOK, "evidence.html", page{Title: "Run " + v.RunID + " evidence", Crumbs: runCrumbs(v, "evidence"), Data: d})
}

// evidenceState checks one cited artifact: present, with the cited digest.
func evidenceState(l stack.Layout, e stack.EvidenceRef) (string, bool) {
	if !filepath.IsLocal(filepath.FromSlash(e.Path)) {
		return "the path is outside the run folder", false
	}
	f, err := os.Open(l.Abs(e.Path))
	if err != nil {
		return "missing: " + err.Error(), false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxArtifactBytes+1))
	if err != nil {
		return "unreadable: " + err.Error(), false
	}
	if d := canonical.Digest(b); d != e.Digest {
		return "changed since the promotion: it hashes to " + d, false
	}
	return "present, digest matches", true
}
