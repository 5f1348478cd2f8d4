// Package skill reads skill contracts: registry tools whose OpenAPI
// operations declare x-dome-class (read | write | admin), x-dome-side-effect
// (none | artifact_put | proposal_register) and x-dome-idempotency
// ({required, key, dedupe_by}). Check enforces the contract rules (reads
// are pure; every write and admin operation requires an idempotency_key in
// its request body, and worker writes a node_execution_id; every operation
// answers errors in the one shared taxonomy, error_taxonomy.json: code,
// message, retryable). Catalog turns tools into the grant.Catalog that a
// resolver spec is checked against: each operation with its class (declared,
// or for plain tools inferred from its HTTP method), side effect and tags.
// It reads tools through pkg/registry and pkg/specfilter only.
package skill
