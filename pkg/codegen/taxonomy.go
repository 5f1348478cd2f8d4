package codegen

import (
	"sort"
	"strconv"

	"github.com/dome-registry/dome/pkg/canonical"
)

// ErrorCode is one code of the error taxonomy every generated client uses:
// the same failure gives the same code and retryability in each language.
type ErrorCode struct {
	Code        string `json:"code"`
	Retryable   bool   `json:"retryable"`
	Statuses    []int  `json:"statuses,omitempty"` // the HTTP statuses that map to it
	Description string `json:"description"`
}

// Taxonomy lists every code, HTTP mappings first. A status the table does
// not name maps to client_error (4xx) or server_error (5xx); 1xx and 3xx
// responses are not errors. Retryable says a later attempt may succeed;
// clients retry only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE,
// TRACE), and only as often as the profile's client.max_retries allows.
var Taxonomy = []ErrorCode{
	{Code: "invalid_request", Statuses: []int{400}, Description: "the server refused the request as malformed"},
	{Code: "unauthenticated", Statuses: []int{401}, Description: "credentials missing or rejected by the server"},
	{Code: "permission_denied", Statuses: []int{403}, Description: "the credentials do not allow this"},
	{Code: "not_found", Statuses: []int{404, 410}, Description: "no such resource"},
	{Code: "conflict", Statuses: []int{409}, Description: "the request conflicts with the resource's state"},
	{Code: "precondition_failed", Statuses: []int{412, 428}, Description: "a precondition of the request does not hold"},
	{Code: "payload_too_large", Statuses: []int{413}, Description: "the request body is too large"},
	{Code: "unsupported_media_type", Statuses: []int{415}, Description: "the server does not take this content type"},
	{Code: "unprocessable", Statuses: []int{422}, Description: "well-formed but semantically invalid"},
	{Code: "rate_limited", Retryable: true, Statuses: []int{429}, Description: "too many requests: retry later"},
	{Code: "client_error", Description: "any other 4xx status"},
	{Code: "not_implemented", Statuses: []int{501}, Description: "the server does not implement this"},
	{Code: "unavailable", Retryable: true, Statuses: []int{502, 503}, Description: "the server or a gateway is unavailable"},
	{Code: "timeout", Retryable: true, Statuses: []int{408, 504}, Description: "no response in time: the per-attempt timeout (client.timeout_ms) or a 408/504 status"},
	{Code: "server_error", Retryable: true, Description: "500 and any other 5xx status"},
	{Code: "network_error", Retryable: true, Description: "the connection failed (refused, reset, DNS)"},
	{Code: "canceled", Description: "the caller canceled the call"},
	{Code: "decode_error", Description: "the response body does not decode as its content type says"},
	{Code: "host_not_allowed", Description: "the URL's host is not in the profile's net.allow_hosts, or the URL is not an http(s) URL with a host: refused before any connection"},
	{Code: "budget_exceeded", Description: "a family of the operation has used budgets.max_calls_by_family: refused before any connection"},
	{Code: "wall_time_exceeded", Description: "budgets.max_wall_seconds have passed since the client was made: refused before any connection"},
	{Code: "auth_not_allowed", Description: "credentials or a security alternative of a type the profile's auth.mode does not allow"},
	{Code: "auth_missing", Description: "no credentials for any allowed security alternative of the operation: refused before any connection"},
	{Code: "config_invalid", Description: "the client's configuration is wrong (unknown scheme name, bad base URL)"},
	{Code: "unknown_operation", Description: "a request that matches no operation of the client (Go: requests made outside the generated methods)"},
	{Code: "policy_invalid", Description: "the embedded policy breaks a rule (net.allow_hosts entries, auth.mode)"},
	{Code: "manifest_invalid", Description: "loader: manifest.json is not a dome manifest in canonical form"},
	{Code: "file_missing", Description: "loader: a file manifest.json lists is missing"},
	{Code: "file_modified", Description: "loader: a file's sha256 or size differs from manifest.json"},
	{Code: "artifact_hash_mismatch", Description: "loader: client_artifact_hash does not match the outputs"},
	{Code: "pin_mismatch", Description: "loader: the manifest is not for the tool@ref or profile@ref asked for"},
	{Code: "client_mismatch", Description: "loader: manifest.json describes other inputs than the code was generated from (edited by hand, or another client's)"},
}

// ClassifyStatus maps an HTTP status to its code and retryability; ok is
// false for statuses that are not errors (below 400).
func ClassifyStatus(status int) (code string, retryable, ok bool) {
	if status < 400 || status > 599 {
		return "", false, false
	}
	for _, c := range Taxonomy {
		for _, s := range c.Statuses {
			if s == status {
				return c.Code, c.Retryable, true
			}
		}
	}
	if status < 500 {
		return "client_error", false, true
	}
	return "server_error", true, true
}

// taxonomyJSON is the table the runtimes embed: status -> [code,
// retryable], plus every code's retryability.
func taxonomyJSON() (string, error) {
	statuses := map[string][]any{}
	codes := map[string]bool{}
	for _, c := range Taxonomy {
		codes[c.Code] = c.Retryable
		for _, s := range c.Statuses {
			statuses[strconv.Itoa(s)] = []any{c.Code, c.Retryable}
		}
	}
	b, err := canonical.Marshal(map[string]any{"statuses": statuses, "retryable": codes})
	return string(b), err
}

// TaxonomyCodes lists the codes, sorted (for the runtimes' constants).
func TaxonomyCodes() []string {
	var out []string
	for _, c := range Taxonomy {
		out = append(out, c.Code)
	}
	sort.Strings(out)
	return out
}
