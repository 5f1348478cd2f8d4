// Package gitstore is dome's door to a local git repository: it opens a
// worktree, linked worktree or bare repository, resolves revisions, reads
// refs (loose and packed), commits, tags, trees and blobs straight from the
// object store (loose objects, packs and their alternates), writes blobs,
// trees, commits and annotated tags (loose objects or packs) and updates
// refs with git's own lock-file protocol (compare-and-swap). It reads git's
// formats itself (gitformat-pack, gitformat-commit, gitrepository-layout,
// git-config) and writes the bytes git and go-git write. It never runs the
// git binary, never checks out a worktree and never touches the network.
//
// Every dome process pays package initialization for every package it
// links, so gitstore imports no go-git package, no OpenPGP and no network
// code: reading a registry (pkg/registry) needs none of them. What does
// lives in sub-packages: gitremote (cached mirrors of remote URLs, fetch and
// push, through go-git's transports), gitsign (OpenPGP tag signatures) and
// gitworktree (moving a checked-out branch with its worktree, ignore rules,
// through go-git's worktree code). Only those import go-git, and its types
// never leak out: the API speaks in gitstore's own Hash, Mode and entry
// types. internal/archtest keeps it so.
package gitstore
