// Package registry reads dome's registry layout out of git objects: it
// parses and pins tool@ref, profile@ref and bundle@ref to a full commit SHA
// and blob ids, lists tools with their profiles, languages and releases, and
// validates every registry file it reads against its JSON Schema (embedded
// in the binary, see schemas/). The registry lives in any git repository,
// at the root (tools/...) or in a registry/ folder (registry/tools/...),
// found automatically per commit. Releases are annotated tags
// registry/<tool_id>/vX.Y.Z. It reads through pkg/gitstore only: no
// checkout, no git binary, no network unless the repository is a remote.
package registry
