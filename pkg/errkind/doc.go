// Package errkind holds the kinds of error that decide dome's exit code: an
// InputError is something the user must fix in an input (exit 2), a CheckError
// is a check that ran and failed (exit 1: drift, conflict, verification).
// Packages return these wrapped with context; cmd/dome maps them to exit codes
// in one place. The package prints nothing and depends on nothing.
package errkind
