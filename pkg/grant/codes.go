package grant

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable reason code. Verification codes are listed in the order
// Verify checks them; derivation codes follow.
type Code string

// Verification reason codes.
const (
	CodeMalformed          Code = "MALFORMED"            // not a grant dome can read: structure, types, unknown or missing fields
	CodeWrongKind          Code = "WRONG_KIND"           // an artifact of another kind presented as a grant
	CodeBadSignature       Code = "BAD_SIGNATURE"        // the signature does not verify, or the payload changed since signing
	CodeUnknownKeyID       Code = "UNKNOWN_KEY_ID"       // the kid is not a trusted key
	CodeNotYetValid        Code = "NOT_YET_VALID"        // issued_at is in the future (beyond the clock skew)
	CodeExpired            Code = "EXPIRED"              // expires_at has passed (beyond the clock skew)
	CodeWrongAudience      Code = "WRONG_AUDIENCE"       // audience differs from the verifier's
	CodeWrongRun           Code = "WRONG_RUN"            // run_id differs
	CodeWrongWave          Code = "WRONG_WAVE"           // wave_id differs
	CodeWrongWorker        Code = "WRONG_WORKER"         // the grant is bound to another worker
	CodeWrongNodeExecution Code = "WRONG_NODE_EXECUTION" // the grant is bound to another node execution
	CodeRevoked            Code = "REVOKED"              // its jti or profile_id is revoked
	CodeReplayed           Code = "REPLAYED"             // its jti is spent (a single-use grant already used)
	CodeMethodNotGranted   Code = "METHOD_NOT_GRANTED"   // the method is not in allowed_methods
	CodePathOutsideRoots   Code = "PATH_OUTSIDE_ROOTS"   // a path is outside the read (or write) roots
	CodePathDenied         Code = "PATH_DENIED"          // a path matches a deny glob
	CodeHostNotAllowed     Code = "HOST_NOT_ALLOWED"     // a host is not in allow_hosts
	CodeBudgetExhausted    Code = "BUDGET_EXHAUSTED"     // a call or wall-time budget is used up
	CodeNotSingleUse       Code = "NOT_SINGLE_USE"       // Spend on a grant that is not single-use
	CodeStoreFailed        Code = "STORE_FAILED"         // the spent/revoked store could not answer (fail closed)
)

// Derivation and issuing codes.
const (
	CodeBadPolicy            Code = "BAD_POLICY"             // policy_spec.json is invalid
	CodeBadResolver          Code = "BAD_RESOLVER"           // resolver_spec.json is invalid or does not match the contracts
	CodeUnknownCapability    Code = "UNKNOWN_CAPABILITY"     // a required capability is not in the resolver spec
	CodeCardLacksCapability  Code = "CARD_LACKS_CAPABILITY"  // the card does not offer a required capability
	CodeCardLacksClass       Code = "CARD_LACKS_CLASS"       // the card's maximum classes exclude a capability's class
	CodeClassNotPermitted    Code = "CLASS_NOT_PERMITTED"    // the policy does not let this role hold the class (admin: coordinator only)
	CodeAudienceNotPermitted Code = "AUDIENCE_NOT_PERMITTED" // the role may not ask for this audience
	CodeProfileMismatch      Code = "PROFILE_MISMATCH"       // the A2A profile is for another card or audience, or lacks a capability
	CodeNoMethods            Code = "NO_METHODS"             // nothing is left to grant
	CodeTTLOverCap           Code = "TTL_OVER_CAP"           // the requested lifetime exceeds the policy's max_ttl_seconds
	CodeBadRequest           Code = "BAD_REQUEST"            // a derive or issue input is invalid (ids, times, narrowing)
)

// Input reports whether a code means bad input (exit 2) rather than a failed
// verification (exit 1).
func (c Code) Input() bool {
	switch c {
	case CodeMalformed, CodeBadPolicy, CodeBadResolver, CodeUnknownCapability, CodeCardLacksCapability,
		CodeCardLacksClass, CodeClassNotPermitted, CodeAudienceNotPermitted, CodeProfileMismatch,
		CodeNoMethods, CodeTTLOverCap, CodeBadRequest, CodeNotSingleUse:
		return true
	}
	return false
}

// Error is a refusal with its reason code. Source names the input (a file,
// "grant", a flag) and Field the place in it (a JSON pointer or a name).
type Error struct {
	Code   Code
	Source string
	Field  string
	Msg    string
	Hint   string
	Err    error
}

func (e *Error) Error() string {
	parts := make([]string, 0, 4)
	if e.Code.Input() || e.Code == CodeWrongKind {
		// Bad input: say where in which input.
		for _, p := range []string{e.Source, e.Field} {
			if p != "" {
				parts = append(parts, p)
			}
		}
	} else if e.Msg != "" {
		parts = append(parts, "grant refused")
	}
	if e.Msg != "" {
		parts = append(parts, e.Msg)
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ") + " (" + string(e.Code) + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the reason code of err ("" for nil or an error that is not
// an *Error).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// AsError returns err's *Error, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func refuse(code Code, field, format string, a ...any) *Error {
	return &Error{Code: code, Source: "grant", Field: field, Msg: fmt.Sprintf(format, a...)}
}
