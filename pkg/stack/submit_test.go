package stack

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/signing"
)

func TestSubmit_ReasonCodes(t *testing.T) {
	f := newFixture(t)
	worker, _ := signing.GenerateKey("worker-1", rand.Reader)
	stranger, _ := signing.GenerateKey("stranger", rand.Reader)
	trusted, _ := signing.NewTrustedKeys(worker.Public())
	docs := f.propose(proposeArgs{id: "docs", changes: map[string]string{"docs/guide.md": "guide\nmore\n"}, key: "k-docs"})
	other := f.propose(proposeArgs{id: "docs2", changes: map[string]string{"docs/guide.md": "guide\nother\n"}, key: "k-docs"})
	readme := map[string]string{"README.md": "# demo\n\nintro!\n"}
	ok := func(id string) []byte { return f.propose(proposeArgs{id: id, changes: readme}) }
	g := f.repo
	_ = g

	cases := []struct {
		name    string
		doc     []byte
		opts    SubmitOptions
		outcome string
		code    string
	}{
		{"accepted", docs, SubmitOptions{}, OutcomeAccepted, ""},
		{"replayed idempotency key, same proposal", docs, SubmitOptions{}, OutcomeDuplicate, ""},
		{"replayed idempotency key, different proposal", other, SubmitOptions{}, OutcomeRejected, ReasonIdempotencyConflict},
		{"not JSON", []byte("{"), SubmitOptions{}, OutcomeRejected, ReasonMalformed},
		{"payload edited after sealing", []byte(strings.Replace(string(ok("e1")), `"worker_id":"w-e1"`, `"worker_id":"w-xx"`, 1)), SubmitOptions{}, OutcomeRejected, ReasonMalformed},
		{"unknown payload member", reseal(t, ok("u1"), func(m map[string]any) { m["extra"] = 1 }, nil), SubmitOptions{}, OutcomeRejected, ReasonUnknownField},
		{"unknown nested member", reseal(t, ok("u2"), func(m map[string]any) { m["risk"].(map[string]any)["x"] = true }, nil), SubmitOptions{}, OutcomeRejected, ReasonUnknownField},
		{"missing idempotency_key", reseal(t, ok("m1"), func(m map[string]any) { delete(m, "idempotency_key") }, nil), SubmitOptions{}, OutcomeRejected, ReasonMissingField},
		{"missing diff", reseal(t, ok("m2"), func(m map[string]any) { delete(m, "diff_unified") }, nil), SubmitOptions{}, OutcomeRejected, ReasonMissingField},
		{"bad value", reseal(t, ok("v1"), func(m map[string]any) { m["risk"].(map[string]any)["class"] = "tiny" }, nil), SubmitOptions{}, OutcomeRejected, ReasonInvalidField},
		{"header object_id differs", reseal(t, ok("h1"), nil, func(h *artifact.Header) { h.ObjectID = "other" }), SubmitOptions{}, OutcomeRejected, ReasonHeaderMismatch},
		{"run mismatch", reseal(t, ok("r1"), func(m map[string]any) { m["worker_run_meta"].(map[string]any)["run_id"] = "run-2" }, func(h *artifact.Header) { h.RunID = "run-2" }), SubmitOptions{}, OutcomeRejected, ReasonRunMismatch},
		{"wave mismatch", reseal(t, ok("w1"), func(m map[string]any) { m["worker_run_meta"].(map[string]any)["wave_id"] = "wave-2" }, func(h *artifact.Header) { h.WaveID = "wave-2" }), SubmitOptions{}, OutcomeRejected, ReasonWaveMismatch},
		{"short base_ref", reseal(t, ok("b1"), func(m map[string]any) { m["base_ref"] = f.base[:12] }, func(h *artifact.Header) { h.BaseRef = f.base[:12] }), SubmitOptions{}, OutcomeRejected, ReasonBaseRefNotSHA},
		{"other base_ref", reseal(t, ok("b2"), func(m map[string]any) { m["base_ref"] = strings.Repeat("1", 40) }, func(h *artifact.Header) { h.BaseRef = strings.Repeat("1", 40) }), SubmitOptions{}, OutcomeRejected, ReasonBaseRefMismatch},
		{"lying base_tree_hash", reseal(t, ok("t1"), func(m map[string]any) { m["base_tree_hash"] = strings.Repeat("2", 40) }, func(h *artifact.Header) { h.BaseTreeHash = strings.Repeat("2", 40) }), SubmitOptions{}, OutcomeRejected, ReasonBaseTreeMismatch},
		{"unknown canonicalization", reseal(t, ok("c1"), func(m map[string]any) { m["diff_canonicalization"] = "raw" }, nil), SubmitOptions{}, OutcomeRejected, ReasonDiffCanonicalization},
		{"diff changed, digest kept", reseal(t, ok("d1"), func(m map[string]any) {
			m["diff_unified"] = strings.Replace(m["diff_unified"].(string), "+intro!", "+intro?", 1)
		}, nil), SubmitOptions{}, OutcomeRejected, ReasonDiffDigestMismatch},
		{"diff does not parse", reseal(t, ok("d2"), func(m map[string]any) { m["diff_unified"] = "not a diff" }, nil), SubmitOptions{}, OutcomeRejected, ReasonDiffUnreadable},
		{"touched_files lie", reseal(t, ok("f1"), func(m map[string]any) { m["touched_files"] = []string{"docs/guide.md"} }, nil), SubmitOptions{}, OutcomeRejected, ReasonTouchedFilesMismatch},
		{"fingerprints lie", reseal(t, ok("f2"), func(m map[string]any) {
			m["hunk_fingerprints"].([]any)[0].(map[string]any)["edit_digest"] = "sha256:00"
		}, nil), SubmitOptions{}, OutcomeRejected, ReasonFingerprintMismatch},
		{"forbidden path", f.propose(proposeArgs{id: "pol", changes: map[string]string{"policy/keep.txt": "mine\n"}}), SubmitOptions{}, OutcomeRejected, ReasonForbiddenPath},
		{"dependency without deps intent", f.propose(proposeArgs{id: "dep1", changes: map[string]string{"go.mod": "module demo\n\ngo 1.26\n\nrequire x v1\n"}}), SubmitOptions{}, OutcomeRejected, ReasonDependencyGated},
		{"dependency, declared no_deps", f.propose(proposeArgs{id: "dep2", intents: []string{"deps"}, constraints: DeclaredConstraints{NoDeps: true},
			changes: map[string]string{"go.mod": "module demo\n\ngo 1.26\n\nrequire x v2\n"}}), SubmitOptions{}, OutcomeRejected, ReasonConstraintViolated},
		{"dependency with deps intent", f.propose(proposeArgs{id: "dep3", intents: []string{"deps"}, changes: map[string]string{"go.mod": "module demo\n\ngo 1.26\n\nrequire x v3\n"}}), SubmitOptions{}, OutcomeAccepted, ""},
		{"intent not allowed", f.propose(proposeArgs{id: "i1", intents: []string{"party"}, changes: readme}), SubmitOptions{}, OutcomeRejected, ReasonIntentNotAllowed},
		{"size limit", ok("s1"), SubmitOptions{Policy: func() *Policy { p := *DefaultPolicy(); p.SizeLimits.MaxLinesChanged = 1; return &p }()}, OutcomeRejected, ReasonSizeLimit},
		{"does not apply on the base", reseal(t, ok("a1"), func(m map[string]any) {
			d := strings.Replace(m["diff_unified"].(string), " intro", " outro", 0)
			d = strings.Replace(d, "-intro\n", "-intra\n", 1)
			m["diff_unified"] = d
			m["diff_digest"] = digestOfCanonical(t, d)
			delete(m, "hunk_fingerprints")
		}, func(h *artifact.Header) { h.InputsHash = "" }), SubmitOptions{}, OutcomeRejected, ReasonApplyCheckFailed},
		{"unsigned, signature required", ok("g1"), SubmitOptions{RequireSignature: true, Trusted: trusted}, OutcomeRejected, ReasonSignatureRequired},
		{"signed by an untrusted key", f.propose(proposeArgs{id: "g2", changes: readme, sign: &stranger}), SubmitOptions{Trusted: trusted}, OutcomeRejected, ReasonSignatureUntrusted},
		{"signature stripped, not required", reseal(t, f.propose(proposeArgs{id: "g3", changes: readme, sign: &worker}), nil, func(h *artifact.Header) {}), SubmitOptions{Trusted: trusted}, OutcomeAccepted, ""},
		{"signed header altered", forge(t, f.propose(proposeArgs{id: "g4", changes: readme, sign: &worker})), SubmitOptions{Trusted: trusted}, OutcomeRejected, ReasonSignatureInvalid},
		{"signed by a trusted key", f.propose(proposeArgs{id: "g5", changes: readme, sign: &worker}), SubmitOptions{Trusted: trusted, RequireSignature: true}, OutcomeAccepted, ""},
		{"proposal id reused", reseal(t, f.propose(proposeArgs{id: "docs", changes: readme, key: "k-x"}), nil, nil), SubmitOptions{}, OutcomeRejected, ReasonDuplicateProposalID},
	}
	r := f.open()
	defer r.Close()
	for _, tc := range cases {
		o, err := r.Submit(f.repo, tc.name, tc.doc, tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if o.Outcome != tc.outcome || o.ReasonCode != tc.code {
			t.Errorf("%s: outcome %s %s (%s), want %s %s", tc.name, o.Outcome, o.ReasonCode, o.Detail, tc.outcome, tc.code)
		}
	}
	if res, err := Replay(f.layout); err != nil || !res.Equal {
		t.Fatalf("replay: %+v %v", res, err)
	}
}

// forge changes a signed header field without re-signing.
func forge(t *testing.T, doc []byte) []byte {
	t.Helper()
	return []byte(strings.Replace(string(doc), `"producer":"test"`, `"producer":"evil"`, 1))
}

func digestOfCanonical(t *testing.T, d string) string {
	t.Helper()
	return "sha256:" + digestHex(d)
}
