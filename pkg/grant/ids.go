package grant

import (
	"fmt"
	"strings"
	"time"
)

// ArtifactKind is the artifact kind (and signature payload type) of a grant.
const ArtifactKind = "dome.tool_profile/v0.1"

// artifactVersion is the header version of grants of this kind.
const artifactVersion = "0.1"

// MaxGrantBytes bounds a grant's size: verification reads no more.
const MaxGrantBytes = 64 << 10

// CheckID validates an identifier used in a grant (run_id, wave_id,
// worker_id, node_id, node_execution_id, issuer, audience, jti, profile_id):
// 1 to 128 characters, letters, digits and . _ : @ + - , starting with a
// letter or digit. Identifiers become file names and log fields, so nothing
// else is allowed.
func CheckID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%q: want 1 to 128 characters", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._:@+-", rune(c))) {
			return fmt.Errorf("%q: use letters, digits and . _ : @ + - (starting with a letter or digit)", id)
		}
	}
	return nil
}

// checkCapabilityID validates a capability name as the resolver spec writes
// them: ^[a-z0-9][a-z0-9._-]*$, at most 128 characters.
func checkCapabilityID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("capability %q: want 1 to 128 characters", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("capability %q: want ^[a-z0-9][a-z0-9._-]*$", id)
		}
	}
	return nil
}

// checkToolID validates a tool id: ^[a-z0-9][a-z0-9._-]*$, at most 128.
func checkToolID(id string) error {
	if err := checkCapabilityID(id); err != nil {
		return fmt.Errorf("tool %q: want ^[a-z0-9][a-z0-9._-]*$ and at most 128 characters", id)
	}
	return nil
}

// checkOperationID validates an operationId that becomes part of a method
// name: 1 to 128 of letters, digits, _ . - .
func checkOperationID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("operationId %q: want 1 to 128 characters", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("operationId %q: a method name takes letters, digits, _ . - only", id)
		}
	}
	return nil
}

// MethodName returns the method name of an operation: "<tool_id>/<operationId>".
func MethodName(tool, operationID string) string { return tool + "/" + operationID }

// SplitMethod splits "<tool_id>/<operationId>".
func SplitMethod(m string) (tool, op string, ok bool) {
	tool, op, ok = strings.Cut(m, "/")
	if !ok || checkToolID(tool) != nil || checkOperationID(op) != nil {
		return "", "", false
	}
	return tool, op, true
}

// FormatTime writes a grant time: RFC 3339 in UTC, whole seconds.
func FormatTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// parseTime reads a grant time, which must be written as FormatTime writes
// it (one spelling per instant, so the signed bytes name one time).
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || FormatTime(t) != s {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 UTC time in whole seconds, e.g. 2026-01-02T03:04:05Z", s)
	}
	return t, nil
}
