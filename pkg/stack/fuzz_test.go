package stack

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/ledger"
)

func sampleProposal(t testing.TB) []byte {
	pp := PatchProposal{ProposalID: "p1", BaseRef: strings.Repeat("a", 40), BaseTreeHash: strings.Repeat("b", 40),
		DiffCanonicalization: DiffCanonicalization, DiffDigest: "sha256:" + strings.Repeat("c", 64),
		DiffUnified: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", TouchedFiles: []string{"f"}, IntentTags: []string{"docs"},
		Risk: Risk{Class: RiskLow}, DeclaredConstraints: DeclaredConstraints{Atomicity: AtomicProposal},
		WorkerRunMeta: WorkerRunMeta{WorkerID: "w", RunID: "r", WaveID: "wave-1"}, IdempotencyKey: "k"}
	doc, _, err := Seal(NewHeader(KindPatchProposal, "p1", "r", "wave-1", pp.BaseRef, ts0, "test"), pp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// FuzzParseProposal: the proposal parser never panics, and what it accepts
// is a sealed proposal whose header names its proposal id.
func FuzzParseProposal(f *testing.F) {
	f.Add(sampleProposal(f))
	f.Add([]byte(`{"header":{},"payload":{}}`))
	f.Add([]byte(`{"header":{"artifact_kind":"dome.patch_proposal/v1"},"payload":{"proposal_id":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pp, rej := ParseProposal(data)
		if (pp == nil) == (rej == nil) {
			t.Fatalf("want exactly one of a proposal and a rejection")
		}
		if rej != nil {
			if rej.Code == "" || rej.Class == "" {
				t.Fatalf("rejection without a code: %+v", rej)
			}
			return
		}
		if pp.Sealed.Header.ArtifactKind != KindPatchProposal || pp.Proposal.ProposalID == "" || pp.Proposal.IdempotencyKey == "" {
			t.Fatalf("accepted an incomplete proposal: %+v", pp.Proposal)
		}
		// LoadProposal decodes accepted bytes without checking them again:
		// it must read the same proposal
		got, err := decodeAccepted(data)
		if err != nil || !reflect.DeepEqual(got, pp.Proposal) {
			t.Fatalf("decodeAccepted = %+v, %v; ParseProposal read %+v", got, err, pp.Proposal)
		}
	})
}

// FuzzFold: folding arbitrary payloads under every topic never panics and
// never leaves a half-applied state on error.
func FuzzFold(f *testing.F) {
	for _, topic := range Topics() {
		f.Add(topic, []byte(`{}`))
	}
	f.Add(TopicProposalSubmitted, []byte(`{"proposal_id":"p","wave_id":"wave-1","base_ref":"`+strings.Repeat("b", 40)+`","idempotency_key":"k"}`))
	f.Fuzz(func(t *testing.T, topic string, payload []byte) {
		st := NewState("r1")
		init := ledger.Event{SchemaVersion: ledger.SchemaVersion, Sequence: 1, TS: "2026-01-02T03:04:05Z", Topic: TopicInitialized, RunID: "r1",
			Payload: []byte(`{"run_id":"r1","wave_id":"wave-1","base_ref":"` + strings.Repeat("b", 40) + `","base_tree_hash":"` + strings.Repeat("a", 40) +
				`","target_ref":"refs/heads/main","integration_ref":"refs/dome/integration/r1","determinism_seed":"s","policy_digest":"d","producer":"p"}`)}
		if err := st.Apply(init); err != nil {
			t.Fatal(err)
		}
		before, _ := st.Marshal()
		e := ledger.Event{SchemaVersion: ledger.SchemaVersion, Sequence: 2, TS: "2026-01-02T03:04:05Z", Topic: topic, RunID: "r1", Payload: payload}
		if err := st.Apply(e); err != nil {
			after, _ := st.Marshal()
			if string(after) != string(before) {
				t.Fatalf("a failed Apply changed the state")
			}
		}
	})
}
