// Package action is the signed action registry of seed
// action-registry-contract.md: action schemas are canonicalized (RFC 8785),
// hashed, signed with Ed25519 (pkg/signing, embedded signature form) and
// stored immutably by (name, version) behind the Store interface, with a git
// store (actiongit, the default) and a PostgreSQL store (actionpg). The HTTP
// API of `dome serve` lives in httpapi. The package prints nothing.
package action
