// Package gateway is the tool gateway a sandboxed worker talks to: HTTP over
// the one Unix socket bound into its sandbox, the server of the repo-read
// skill (read_file, list_tree, grep, get_base_ref, get_diff_stats, answered
// from git objects at the wave's base commit, never from a checkout) and the
// patch-proposal skill (submit_patch, submit_metadata, into the run's
// stack). Their OpenAPI contracts are registry/tools/repo-read and
// registry/tools/patch-proposal; every error answers in the skills' one
// taxonomy ({"error": {code, message, retryable, details}}).
//
// A Session is one worker attempt (run, wave, node, node execution,
// worker, base commit). Every call presents a grant (Authorization: Bearer
// <dome.tool_profile/v0.1>), checked on every call with grant.Verifier's
// Authorize against the session's bindings: signature, validity, audience,
// run, wave, worker and node execution, revocation, replay of a spent
// single-use grant, the method, the paths (read roots, write roots, deny
// globs; listings and searches show only what the grant may read) and the
// budgets. A call is one HTTP request for an operation that passes the grant
// checks: it is charged 1 against budgets.max_calls and 1 against its
// capability's max_calls_by_capability; a refused call is charged nothing
// but counted, and a session refusing more than Config.MaxRefusals calls is
// flooded: it answers every further request at once and tells the
// coordinator. Wall time is measured by the grant's meter from the first
// call (budgets.max_wall_seconds) on the clock Config.Now gives; the
// coordinator bounds the worker process itself with the sandbox's wall-time
// limit.
//
// Writes require an idempotency_key that starts with the attempt's
// node_execution_id and ":", and are deduplicated on (method,
// idempotency_key, run_id): the same request again gets the first response
// with replayed true (also after a crash, from the ledger), another request
// under the same key IDEMPOTENCY_CONFLICT. submit_patch re-seals the
// worker's proposal with the coordinator's facts (proposal_id is the task
// id; worker_run_meta is the session's worker, tool profile, run, wave,
// node, node execution and the budgets used; the idempotency key is the
// call's) and submits it to the stack, whose verification and policy
// pre-filter decide; what the worker claimed in worker_run_meta is
// dropped.
//
// Every call is a record in the run's ledger: a write is its own
// gateway.call event, recorded before it is answered (with the answer, for
// replays); other calls are recorded in gateway.calls events of at most
// 256 calls each, at the latest when the session closes. The package
// prints nothing and reads no clock of its own.
package gateway
