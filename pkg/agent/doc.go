// Package agent is dome's agent domain: agent profiles (registry/agents/<id>.agent.json,
// "dome.agent/v1", JSON Schema draft 2020-12 in schemas/, YAML read by the
// YAML 1.2 core schema) validated in full before they enter a Set, where
// create and update are distinct and the standard agent must stay enabled;
// deterministic selection of an agent for a task (example tasks +0.6 exact,
// +0.4 contained, notForTasks -0.5, up to +0.3 for shared terms, clamped to
// [0, 1], ties by agent id, the standard agent at 0.5 as the fallback);
// abilities (registry/abilities/<id>.md) injected into the system prompt
// before a prompt is sent, core first, then by relevance, within a token
// budget counted in cl100k_base; workflows run on pkg/workflow's engine (in
// array order, or as a DAG with maxConcurrency; failFast, continueOnError,
// rollback), each step's events and checkpoints (stepIndex, completedStepId,
// stepOutputs, context, memorySnapshot) recorded durably in the run's ledger
// (pkg/ledger) before the next step starts, and resumed at stepIndex + 1
// without recomputing a completed step; delegation along a tracked chain
// bounded by maxDepth (default 5) that refuses the agent itself and its
// ancestors as an error result; and tool calls through an Executor that
// checks the tool's JSON Schema, then the agent's grant (pkg/grant), before
// any tool code runs, and returns immutable results. Models are reached
// through pkg/agent/provider. It reads no registry files, environment or
// clock of its own: the caller passes the registry's files, the journal and
// the time; LoadRun reads a run's ledger.
package agent
