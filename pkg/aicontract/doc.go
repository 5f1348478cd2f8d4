// Package aicontract compiles a project's stack preset, a rule catalog with
// the project's toggles and a command into a byte-stable contract text for an
// AI assistant, as the rules resolver spec (RESOLVER_SPEC, "a compiler, not a
// brain") defines: command to intent by a fixed mapping, the ruleset base
// (rules with defaultEnabled) plus toggles filtered by intent, deterministic
// conflict resolution (error against error blocks; warn loses to error; info
// loses to anything; dome also blocks warn against warn, where the spec is
// silent), constraints compiled preset, then rules, then project overrides,
// and the spec's fixed template with its six sections in order. It returns
// the spec's ResolveResult: a ResolvedContract whose id is the sha256 of the
// RFC 8785 form (https://www.rfc-editor.org/rfc/rfc8785) of the inputs that
// determine it, or a BlockedResolution with one of four reasons. Catalogs
// are versioned JSON files validated against the JSON Schemas in schemas/,
// read through a Source (a directory or a git tree at a pinned commit, as
// the caller chooses); every catalog problem names its file, line, column and
// field. It uses no model, infers nothing, reads no clock (generatedAt is an
// input, not part of the id) and never logs the user's input, only its digest.
package aicontract
