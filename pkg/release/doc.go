// Package release runs dome's release gate for a registry tool: at a pinned
// commit it filters every profile of the tool, runs its contract tests,
// proves that generation reproduces, classifies breaking changes against the
// previous release per profile (pkg/specdiff), enforces SemVer, and writes
// the immutable annotated tag registry/<tool>/vX.Y.Z carrying a canonical
// release record (optionally OpenPGP-signed), pushing only that tag. It also
// verifies existing releases against their records. It composes
// pkg/registry, pkg/specfilter and pkg/specdiff, which is why it is a
// package of its own rather than part of pkg/registry: the registry sits
// below the packages whose checks a release runs.
package release
