// Package httpapi is the HTTP API of the action registry (seed
// action-registry-contract.md, described as OpenAPI 3.1 in
// registry/tools/action-registry/spec/openapi.yaml): an http.Handler over an
// action.Store, a trusted key set and a verification cache, routed with
// Go 1.22 ServeMux patterns.
//
//	GET  /actions                                     200 {"items": [{name, latest_version, versions, description}]}
//	GET  /actions/{name}/versions/{version}           200 {name, version, schema, hash, signature, verified[, reason]}
//	GET  /actions/{name}/versions/{version}/verify    200 {name, version, verified, kid, alg, hash[, reason]}
//	POST /actions/{name}/versions/{version}           201 new, 200 identical republish (X-API-Key)
//	GET  /healthz, GET /readyz                        200 {"status": "ok"}, 503 NOT_READY
//
// Every error is {"error": {"code", "message", "details"}} with a stable code
// (ACTION_NOT_FOUND, VERSION_NOT_FOUND, UNKNOWN_KEY_ID, BAD_SIGNATURE,
// IMMUTABLE_VERSION_CONFLICT, UNAUTHORIZED, INVALID_JSON, INVALID_ACTION,
// PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, PUBLISH_DISABLED,
// METHOD_NOT_ALLOWED, NOT_FOUND, NOT_READY, INTERNAL), and so is every answer
// net/http makes itself to a request it cannot read, once the server listens
// through Listener (BAD_REQUEST, HEADERS_TOO_LARGE, EXPECTATION_FAILED,
// NOT_IMPLEMENTED, HTTP_VERSION_NOT_SUPPORTED). A publish must be sent as
// application/json (charset=utf-8 at most); anything else, no type included,
// is UNSUPPORTED_MEDIA_TYPE.
//
// Tamper behaviour: a stored document that no longer verifies (changed bytes,
// a changed hash column, an untrusted kid) is served with "verified": false
// and a "reason"; reads never fail because of it. Verification results and
// the rendered responses are cached by the SHA-256 of the stored bytes and
// the trusted key set, so a changed byte is a cache miss and is verified
// again. The API key is compared as SHA-256 digests with crypto/subtle;
// without a configured key, publishing answers 405 PUBLISH_DISABLED. The
// package prints nothing: access and error logs go to the slog.Logger the
// caller gives.
package httpapi
