// Package contracttest runs a tool's golden contract-test cases
// (registry/tools/<tool_id>/contract-tests/cases/*.json, keyed by
// operation_id) against a profile: it validates each case's request and
// response against the filtered spec with kin-openapi's openapi3filter,
// reports cases whose operation the profile excludes, builds the generated
// Go client in a temporary module and runs it against an in-process mock
// server that serves the golden responses (checking the request the client
// sends equals the golden request), type-checks the TypeScript client with
// tsc --noEmit, byte-compiles the Python client, and checks that every
// client's operations index equals the filtered spec's operation set
// (cross-SDK equivalence). It never reaches the network beyond 127.0.0.1
// and never installs toolchains: the caller names them, and a missing one
// is a skip, or a failure in CI.
package contracttest
