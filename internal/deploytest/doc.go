// Package deploytest checks the files that package dome for deployment, as
// far as a machine without a container engine can: compose.yaml against the
// Compose Specification's JSON Schema (testdata/compose-spec.json, from
// github.com/compose-spec/compose-spec, schema/compose-spec.json) plus the
// rules dome's deployment keeps (health checks, a non-root, read-only dome),
// and the Dockerfile's build stage, whose go build command it runs to prove
// the binary it makes is static and starts. It holds tests only.
package deploytest
