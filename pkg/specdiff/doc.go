// Package specdiff classifies the differences between two OpenAPI 3.x
// documents (dome compares the canonical filtered specs of one profile at two
// commits) into breaking and non-breaking changes for a client of the older
// one: removed operations, removed or renamed parameters, parameters or
// request properties that became required, type changes, narrowed enums,
// removed response codes or media types, removed security schemes. It reads
// the documents as plain JSON trees, follows local $refs with cycle
// protection, and returns changes in a stable order. It never fetches
// anything and does not validate the documents (pkg/specfilter does).
package specdiff
