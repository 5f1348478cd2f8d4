package stack

import (
	"time"

	"github.com/dome-registry/dome/pkg/ledger"
)

// Withdraw takes back a pending proposal (stack.proposal.withdrawn): the
// attempt that submitted it did not pass, so the proposal must never be
// planned. reason is a reason code (failed, lost, cancelled, ...).
func (r *Run) Withdraw(proposalID, reason, detail string, at time.Time) (ledger.Event, error) {
	return r.Record(TopicProposalWithdrawn, at, ProposalWithdrawnPayload{ProposalID: proposalID, Reason: reason, Detail: detail})
}
