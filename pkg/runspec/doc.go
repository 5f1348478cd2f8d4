// Package runspec owns the files that define a wave run under
// ops/runs/<run_id>/: the work queue (work.queue.json, "dome.work.queue/v1":
// TaskSpec nodes with containers, required capabilities and typed outputs,
// dependencies, priority groups, resources and declared cycles), the run
// policy (policy/run_policy.json, "dome.run_policy/v1": concurrency,
// attempts, failure strategy, score weights, endgame, scarce capacities, risk
// points and sandbox limits) and the run manifest (run.manifest.json, a
// sealed "dome.run.manifest/v1" artifact pinning the base commit, the
// registry commit, the queue and policy digests, the cards, the determinism seed and the
// environment). It parses them strictly (JSON Schema draft 2020-12, no
// duplicate keys, bounded sizes), checks the queue's graph with pkg/workflow
// (errors name the JSON pointer of each field at fault and a cycle's path),
// and maps a queue and a policy onto the workflow engine. Tasks declare
// capabilities, never methods: the resolver of the grants maps one to the
// other. It reads and writes no files itself.
package runspec
