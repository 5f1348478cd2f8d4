// Package gitworktree does what needs a worktree's files and index, which
// pkg/gitstore never touches: moving a branch that is checked out together
// with its clean worktree (what git's receive.denyCurrentBranch=updateInstead
// does), and reading a worktree's ignore rules (.gitignore files and
// .git/info/exclude, gitignore(5)). It uses go-git's worktree status, index
// and gitignore matcher; it is a package of its own because linking go-git's
// worktree code (with its transports, config and diff packages) costs every
// process start-up time, and reading a registry needs none of it.
package gitworktree
