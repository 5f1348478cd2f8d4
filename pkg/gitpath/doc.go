// Package gitpath decides whether a path may enter a git tree. It follows
// git's own check (verify_path in read-cache.c, which `git apply`, `git
// add` and `git checkout` run on every path) with both of git's
// protections on, whatever the platform: core.protectNTFS (git's default
// everywhere) and core.protectHFS (git's default on macOS). So besides
// empty, ".", ".." and ".git" components (".git" in any case) and absolute
// paths, it refuses the names Windows and macOS file systems resolve to
// .git: a trailing dot or space (".git.", ".git "), the 8.3 short name
// ("git~1"), an NTFS alternate data stream (".git::$INDEX_ALLOCATION"),
// ".git" spelled with Unicode code points HFS+ ignores (U+200C and the
// like), and a symlink named .gitmodules (or an alias of it). Two rules go
// beyond verify_path, as git fsck flags the same names: a symlink named
// .gitattributes, .gitignore or .mailmap (git no longer follows them, so
// such a link only hides the file), and control bytes (NUL, newline, ESC
// ...) anywhere in a path. The package reads no repository and imports
// nothing of dome's.
package gitpath
