// Package gitstore is dome's only door to git: it opens a local repository
// (worktree, linked worktree or bare) or a remote URL through a cached bare
// clone, resolves revisions, reads commits, trees and blobs straight from the
// object store, writes blobs, trees, commits and annotated tags, and updates
// refs with git's own lock-file protocol (compare-and-swap). It never runs the
// git binary, never checks out a worktree and never touches the network
// unless the caller opened a remote. It is the only package that imports
// go-git (github.com/go-git/go-git/v5); its API speaks in its own Hash, Mode
// and entry types so that go-git types never leak out.
package gitstore
