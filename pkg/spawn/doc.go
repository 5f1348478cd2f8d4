// Package spawn owns the SpawnSpec, the boundary contract every worker
// invocation is dispatched with (run_id, wave_id, node_id,
// node_execution_id, task_spec_ref, tool_profile_ref, container_ref,
// action_spec, determinism_seed, inputs_hash). Validation fails closed:
// unknown and missing fields are refused, as are duplicate members;
// task_spec_ref and tool_profile_ref must be immutable (a full commit SHA
// or a sha256 digest, optionally after a name and "@"); container_ref must
// name an image by digest; action_spec is intent-level only; inputs_hash is
// recomputed (the sha256 of the RFC 8785 canonical spec without
// inputs_hash) and compared. A Spec value exists only through Parse or New,
// both of which validate: dispatch code that takes a Spec never sees an
// unvalidated one, and the zero Spec reports Valid() false.
package spawn
