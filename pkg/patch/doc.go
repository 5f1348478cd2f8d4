// Package patch parses git diffs (git diff, git format-patch and git show
// output, including renames, copies, mode changes, symlinks, quoted paths and
// GIT binary patches in literal and delta form) and applies them to a tree in
// an object store, as `git apply --cached` would: strictly, with git's offset
// search, with optional fuzz, or three-way (diff3 of the preimage blob named
// by the index line, the current content and the patched preimage). It also
// computes hunk fingerprints (FingerprintVersion), `git patch-id
// --stable` ids, and overlap between two patches. It works over the small
// Store interface (blobs and trees by id), so it never touches a worktree and
// is testable in memory (MemStore); it refuses paths outside the tree, .git
// components, control bytes, symlinks leaving the tree, file/directory swaps
// the patch does not spell out, oversized patches and hunks whose header
// counts disagree with their body. Format: git's diff output, see
// https://git-scm.com/docs/diff-format and https://git-scm.com/docs/git-apply.
package patch
