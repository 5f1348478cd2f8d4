// Package grantstoretest is the conformance suite every grant.Store passes (the
// file store and the PostgreSQL store), its multi-process helpers (many
// processes spending one grant; a process killed with SIGKILL while
// spending), and MemStore, an in-memory reference store for tests.
package grantstoretest
