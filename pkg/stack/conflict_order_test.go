package stack

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// Conflict decisions tied on policy precedence break by proposal id, then
// by conflict fingerprint, whatever order they were found in.
func TestConflictTieBreakOrder(t *testing.T) {
	want := []ConflictDecision{
		{PolicyPrecedence: 1, ProposalID: "p-b", ConflictFingerprint: "sha256:ff"},
		{PolicyPrecedence: 2, ProposalID: "p-a", ConflictFingerprint: "sha256:99"}, // tied on 2: p-a before p-c
		{PolicyPrecedence: 2, ProposalID: "p-c", ConflictFingerprint: "sha256:11"},
		{PolicyPrecedence: 3, ProposalID: "p-d", ConflictFingerprint: "sha256:0a"}, // tied on 3 and p-d: by fingerprint
		{PolicyPrecedence: 3, ProposalID: "p-d", ConflictFingerprint: "sha256:0b", Attempt: 1},
		{PolicyPrecedence: 3, ProposalID: "p-d", ConflictFingerprint: "sha256:0b", Attempt: 2},
	}
	if !slices.Equal(ConflictTieBreakOrder, []string{"policy_precedence", "proposal_id", "conflict_fingerprint"}) {
		t.Fatalf("tie-break order recorded: %v", ConflictTieBreakOrder)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sort.SliceStable(got, func(i, j int) bool { return conflictLess(&got[i], &got[j]) })
		for i := range want {
			if got[i].ProposalID != want[i].ProposalID || got[i].ConflictFingerprint != want[i].ConflictFingerprint || got[i].Attempt != want[i].Attempt {
				t.Fatalf("round %d: position %d is %+v, want %+v", round, i, got[i], want[i])
			}
		}
	}
}
