// Package actiongit is the git store of the action registry (action.Store):
// every published version is the file registry/actions/<name>/<version>.json
// (the canonical signed document, byte for byte) on a dedicated branch,
// refs/heads/actions unless configured, one commit per publish. A publish
// reads the branch head, refuses a (name, version) already there with
// another hash (action.ErrImmutableConflict), writes the blob, tree and
// commit, fsyncs them and moves the branch with a compare-and-swap ref
// update (pkg/gitstore, git's lock-file protocol); when another publisher,
// in this process or another, moved the branch first it re-reads the new
// head and tries again, so no version is ever lost. Reads look at the
// branch head and cache what they learn per head commit. Audit walks the
// branch history and proves that no (name, version) ever changed bytes or
// disappeared once published, naming the commit that did. The package talks
// to git only through pkg/gitstore and never touches a worktree: a branch
// checked out in a worktree is refused for publishing.
package actiongit
