// Package gitremote is dome's door to remote repositories: it keeps a bare
// mirror of a remote (file://, https://, http://, ssh://, git:// or scp-like
// URL) in dome's cache, cloning it on first use and fetching every ref when
// asked (gitstore.Repo.Fetch), and pushes single refs. It speaks git's
// protocols through go-git, serves file:// URLs in-process (dome never runs
// git), and serializes clones and fetches of one URL across processes with
// a lock file. It is a package of its own because go-git's transports (HTTP,
// SSH, their crypto) cost every process that links them start-up time, and
// reading a local registry, or one already cached, needs none of them.
package gitremote
