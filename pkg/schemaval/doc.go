// Package schemaval validates JSON documents against JSON Schema and turns
// failures into *errkind.InputError values that name the file and the JSON
// pointer of the offending field; it also refuses duplicate object keys,
// which encoding/json would silently collapse, and nesting deeper than 1000.
//
// It implements the draft 2020-12 keywords dome's own schemas use (listed
// in keywords.go) and refuses, at compile time, any schema with a keyword it
// does not implement, so a schema can never be silently weakened. It is
// hand-written rather than a wrapper of github.com/santhosh-tekuri/jsonschema
// because that library compiles its meta-schemas in an init function (about
// 3 ms, more than the rest of dome's start-up together), which every dome
// command would pay; the tests run both validators over the same schemas
// and documents and require the same verdicts. Schemas are compiled from
// bytes the caller embeds; nothing is loaded from the network.
package schemaval
