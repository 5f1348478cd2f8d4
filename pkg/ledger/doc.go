// Package ledger owns dome's append-only event log: the
// "event.envelope" events (schema_version, sequence, event_id, ts, topic,
// run_id, payload) of one run, one file per event under
// ops/runs/<run_id>/events/event.<sequence>.json, the sequence zero-padded to
// twelve digits so that names sort in order. Sequences start at 1 and are
// contiguous; event_id is the "sha256:<hex>" digest of the RFC 8785 canonical
// event without its event_id member, so every event checks itself; ts is an
// input (RFC 3339 UTC), never read from a clock here. Each file holds the
// canonical bytes of its event.
//
// One process writes a run at a time: Open takes an exclusive flock(2) on
// events/.lock, which the kernel releases when the process exits or is
// killed. Every write is a temporary file, fsync, rename and fsync of the
// directory, so a crash leaves either the whole event or none; the temporary
// files a crash leaves behind are ignored by Read and removed by Open. Read
// and Validate refuse gaps, files that do not parse, unknown members,
// mismatched sequences or run ids and event ids that do not check. The
// package knows no topic's payload: callers (pkg/stack, pkg/workflow) own
// their payload types and fold events into state.
package ledger
