// Package schemaval validates JSON documents against JSON Schema (draft
// 2020-12, via github.com/santhosh-tekuri/jsonschema/v6) and turns failures
// into *errkind.InputError values that name the file and the JSON pointer of
// the offending field. It also refuses duplicate object keys, which
// encoding/json would silently collapse. It never loads a schema from the
// network: schemas are compiled from bytes the caller embeds.
package schemaval
