// Package grant owns ToolProfile grants: the signed, short-lived,
// single-purpose credentials a worker presents on every tool call.
//
// A grant is derived, never written by hand: Derive computes
// ToolProfile = policy ∩ resolver(required_capabilities(node)) ∩ card from
// the policy spec (policy/policy_spec.json: who may hold which capability
// class, grant lifetimes, the constraints every grant starts from), the
// resolver spec (policy/resolver_spec.json: capability -> operations or
// families, each with a constraints template), the catalog of the skill
// contracts' operations and the A2A card of what will run the node (and,
// optionally, an A2A profile that narrows it further). Constraints (IO roots,
// deny globs, hosts, budgets) only ever narrow after the policy defaults and
// the capability templates set them; Explain says which rule let each method
// in and which kept each other method out.
//
// Issue binds a derivation to one execution (run, wave, worker, node
// execution, audience, issued_at/expires_at, a random jti) and seals it as a
// standard artifact of kind "dome.tool_profile/v0.1" (package artifact),
// signed with Ed25519 through package signing over the canonical header,
// which covers the RFC 8785 canonical payload through payload_digest. The
// wire form of a grant is exactly those canonical bytes.
//
// Verify checks a grant in a fixed order, each failure with its own stable
// reason code (codes.go): structure, signature and key id, validity window
// (with a bounded clock skew), audience, run, wave, worker and node execution
// bindings, revocation (by jti or profile_id), replay of a spent jti, the
// method, and the call's constraints (paths inside the roots and outside the
// deny globs, hosts, budgets). Nothing is spent when verification fails;
// Spend and Authorize spend a single-use grant atomically in a Store, which
// keeps spent jtis per issuer (pruned after expiry) and revocations. Time is
// always an input. The package reads no files, keys or clocks of its own.
package grant
