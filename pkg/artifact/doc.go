// Package artifact owns the standard header every dome artifact carries
// (DESIGN.md "Formats"; the "standard envelope" of the orchestration seed) and
// the sealed document {"header": {...}, "payload": {...}}: Seal computes the
// payload digest over the RFC 8785 canonical payload, records the
// canonicalization ("jcs-rfc8785") and optionally signs; Open checks the
// header, the kind, the digest and the signature. The signature covers the
// whole canonical header (so the payload through payload_digest, and every
// header field but signature itself), signed with package signing as payload
// type artifact_kind. The package reads no clock: created_at is an input
// (ParseSourceDateEpoch reads a pinned SOURCE_DATE_EPOCH value). It does not
// know any payload's schema; callers own their payload types.
package artifact
