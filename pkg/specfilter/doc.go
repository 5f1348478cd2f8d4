// Package specfilter turns a tool's OpenAPI document (3.0.x or 3.1.x, YAML or
// JSON) and a profile into filtered.openapi.json: the operations the
// profile's selectors pick (allow minus deny; deny wins), exactly the
// components they reach (following $ref, discriminator mappings, security
// scheme names, tags and links to a fixpoint), the tags they use, and the
// profile's servers and extension stripping, as RFC 8785 canonical JSON
// (https://www.rfc-editor.org/rfc/rfc8785) via pkg/canonical. It works on a
// generic JSON tree that keeps every field as written; kin-openapi is used
// only to validate (https://spec.openapis.org/oas/v3.1.0). External $refs
// are read through a FileReader rooted at the tool folder and bundled into
// components under deterministic names. It refuses http(s), file:// and
// other URL references, absolute paths and paths leaving the tool folder,
// never touches the network, and refuses YAML alias bombs, deep nesting and
// duplicate keys with bounded time and memory. Every problem with an input
// is an *errkind.InputError naming the file, the JSON pointer and the line.
package specfilter
