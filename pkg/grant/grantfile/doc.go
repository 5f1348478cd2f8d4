// Package grantfile is the default grant.Store: spent jtis and revocations
// in one append-only log file (grants.log, JSON Lines) in a folder, by
// default ops/runs/<run_id>/grants/ beside the run's ledger.
//
// A spend or a revocation is acknowledged only after its line is written
// and fdatasync'ed. Writers from any number of processes take an exclusive
// flock on the folder's lock file, first read whatever other processes
// appended, decide, append and sync; concurrent spends in one process are
// committed in groups, one write and one sync per group, which is how the
// store keeps thousands of durable spends per second on one disk. A writer
// killed mid-append leaves at most a partial last line, never acknowledged,
// which the next writer cuts off. Readers take no lock: they read complete
// lines only. Prune (and compaction, when most of the log has expired)
// rewrites the log to a temporary file, syncs it and renames it into place;
// other processes notice the new file and reread it. Files are created
// mode 0600 and opened without following symlinks.
package grantfile
