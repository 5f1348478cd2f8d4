package stack

import "github.com/dome-registry/dome/pkg/gitstore"

// split is step 2 of the conflict policy (seed section 8): apply the part
// of f's proposal that applies onto the head, when the policy and the
// proposal's atomicity allow it. It returns nil when the proposal is not
// split.
func (s *stacker) split(f failedAttempt) (*SplitOutcome, AppliedOutcome, error) {
	_ = gitstore.ZeroHash
	return nil, AppliedOutcome{}, nil
}
