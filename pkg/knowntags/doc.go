// Package knowntags is dome's memory of the release tags it has read, as
// go.sum is for modules and known_hosts for ssh host keys: the first time a
// tag is read, the tag object and the commit it points at are recorded per
// repository; from then on a tag that points elsewhere is refused with a
// *MovedError naming the commit first seen and the commit now, until someone
// accepts the move explicitly (Accept), which is logged.
//
// The memory is one text file (by default in the user's state folder; a
// project may keep one under version control instead) with a line per tag:
//
//	# comment
//	<repository> <tag> <tag object id> <commit id>
//
// sorted, the repository written with %XX escapes for whitespace, "%", "#" and
// control bytes. Writes take an exclusive lock (flock on the file's folder on
// Unix, so concurrent dome processes never lose each other's entries) and
// replace the file atomically (pkg/outfile), so a crash leaves the old memory
// or the new one. Reads are bounded (pkg/readlimit). The package decides
// nothing about git: callers say which tags they read and how to name a
// repository (RepoKey).
package knowntags
