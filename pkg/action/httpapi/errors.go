package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Stable error codes of the API (six and the server's own).
const (
	CodeActionNotFound       = "ACTION_NOT_FOUND"
	CodeVersionNotFound      = "VERSION_NOT_FOUND"
	CodeUnknownKeyID         = "UNKNOWN_KEY_ID"
	CodeBadSignature         = "BAD_SIGNATURE"
	CodeImmutableConflict    = "IMMUTABLE_VERSION_CONFLICT"
	CodeUnauthorized         = "UNAUTHORIZED"
	CodeInvalidJSON          = "INVALID_JSON"
	CodeInvalidAction        = "INVALID_ACTION"
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	CodePublishDisabled      = "PUBLISH_DISABLED"
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeNotFound             = "NOT_FOUND"
	CodeNotReady             = "NOT_READY"
	CodeInternal             = "INTERNAL"

	// Answers to requests net/http refuses before any handler runs
	// (Listener puts them in the error shape).
	CodeBadRequest              = "BAD_REQUEST"                // a malformed request line, header or Host
	CodeHeadersTooLarge         = "HEADERS_TOO_LARGE"          // the request headers are over the server's limit
	CodeExpectationFailed       = "EXPECTATION_FAILED"         // an Expect header other than 100-continue
	CodeNotImplemented          = "NOT_IMPLEMENTED"            // a transfer coding the server does not implement
	CodeHTTPVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED" // not HTTP/1.0 or HTTP/1.1
)

// Status returns the HTTP status of an error code (500 for an unknown one).
func Status(code string) int {
	switch code {
	case CodeActionNotFound, CodeVersionNotFound, CodeNotFound:
		return http.StatusNotFound
	case CodeUnknownKeyID, CodeBadSignature, CodeInvalidJSON, CodeInvalidAction, CodeBadRequest:
		return http.StatusBadRequest
	case CodeImmutableConflict:
		return http.StatusConflict
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodePublishDisabled, CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeNotReady:
		return http.StatusServiceUnavailable
	case CodeHeadersTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case CodeExpectationFailed:
		return http.StatusExpectationFailed
	case CodeNotImplemented:
		return http.StatusNotImplemented
	case CodeHTTPVersionNotSupported:
		return http.StatusHTTPVersionNotSupported
	}
	return http.StatusInternalServerError
}

// Codes returns every error code the API answers with.
func Codes() []string {
	return []string{
		CodeActionNotFound, CodeVersionNotFound, CodeUnknownKeyID, CodeBadSignature,
		CodeImmutableConflict, CodeUnauthorized, CodeInvalidJSON, CodeInvalidAction,
		CodePayloadTooLarge, CodeUnsupportedMediaType, CodePublishDisabled,
		CodeMethodNotAllowed, CodeNotFound, CodeNotReady, CodeInternal,
		CodeBadRequest, CodeHeadersTooLarge, CodeExpectationFailed, CodeNotImplemented,
		CodeHTTPVersionNotSupported,
	}
}

// apiError is error object.
type apiError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

type errorBody struct {
	Error apiError `json:"error"`
}

// writeError answers with the error object of code (its status from codes).
func writeError(w http.ResponseWriter, code, message string, details map[string]any) {
	if lw, ok := w.(*logWriter); ok {
		lw.code = code
	}
	b, code := errorJSON(code, message, details)
	writeJSON(w, Status(code), b)
}

// errorJSON is the body of an error answer, with its final newline, and the
// code it carries.
func errorJSON(code, message string, details map[string]any) ([]byte, string) {
	b, err := json.Marshal(errorBody{Error: apiError{Code: code, Message: message, Details: details}})
	if err != nil { // details hold strings and numbers only
		return []byte(`{"error":{"code":"INTERNAL","message":"encode the error"}}` + "\n"), CodeInternal
	}
	return append(b, '\n'), code
}

// writeJSON writes a JSON body with its length.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	writeBody(w, status, body, []string{strconv.Itoa(len(body))})
}

// writeBody writes a JSON body whose Content-Length header value the caller
// made (cached responses keep theirs).
func writeBody(w http.ResponseWriter, status int, body []byte, contentLength []string) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	h["Content-Length"] = contentLength
	w.WriteHeader(status)
	w.Write(body)
}
