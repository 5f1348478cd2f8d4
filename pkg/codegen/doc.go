// Package codegen generates API clients deterministically from a tool's
// filtered spec (pkg/specfilter), a profile and a generator bundle read
// from git at its pinned ref (generators/<bundle_id>/bundle.json plus its
// templates, never from the binary). It runs two engines: oapi-codegen v2
// linked as a library for Go (serialized, each call on a private copy of the
// document, formatted with go/format) and a text/template engine over the
// bundle's own templates for TypeScript and Python. Every client gets an
// operations index (operations.json) and a manifest.json recording every
// input by ref and hash, the toolchain and each output's sha256, with no
// timestamps. It writes clients all or nothing (staging folder, then
// rename), removes stale files using the previous manifest, and checks
// drift (unified diffs via go-diff, and which input changed). Every
// client also gets a run-time layer rendered from the bundle's templates
// with the client's Policy (profile + filtered spec), the error Taxonomy and
// the identity its loader checks manifest.json against. It refuses
// operations without an operationId, names that collide after mangling,
// and output paths that leave the client folder. Manifests are hashed as
// RFC 8785 canonical JSON (https://www.rfc-editor.org/rfc/rfc8785).
package codegen
