package grant

import "fmt"

// Class is a capability class: read (observation only), write (bounded
// mutation: artifacts and patch proposals, never repository history) or
// admin (gates, promotion, repository mutation; coordinator only).
type Class string

// The capability classes, in increasing privilege.
const (
	ClassRead  Class = "read"
	ClassWrite Class = "write"
	ClassAdmin Class = "admin"
)

// Classes lists the classes in increasing privilege.
func Classes() []Class { return []Class{ClassRead, ClassWrite, ClassAdmin} }

// Rank orders classes: read 1, write 2, admin 3, anything else 0.
func (c Class) Rank() int {
	switch c {
	case ClassRead:
		return 1
	case ClassWrite:
		return 2
	case ClassAdmin:
		return 3
	}
	return 0
}

// Mutates reports whether calls of this class change state (write, admin):
// they need an idempotency key and spend a single-use grant.
func (c Class) Mutates() bool { return c == ClassWrite || c == ClassAdmin }

// ParseClass reads a class name.
func ParseClass(s string) (Class, error) {
	c := Class(s)
	if c.Rank() == 0 {
		return "", fmt.Errorf("class %q: want read, write or admin", s)
	}
	return c, nil
}

// Side-effect classes of skill operations (x-dome-side-effect).
const (
	SideEffectNone             = "none"              // pure
	SideEffectArtifactPut      = "artifact_put"      // content-addressed write
	SideEffectProposalRegister = "proposal_register" // registers proposal metadata
)

// ValidSideEffect reports whether s is a known side-effect class.
func ValidSideEffect(s string) bool {
	return s == SideEffectNone || s == SideEffectArtifactPut || s == SideEffectProposalRegister
}

// Roles that hold grants (the policy's holders).
const (
	RoleWorker      = "worker"
	RoleCoordinator = "coordinator"
	RolePlanner     = "planner"
)

// Audiences every policy knows.
const (
	AudienceWorker      = "worker_runtime"
	AudienceCoordinator = "coordinator"
)
