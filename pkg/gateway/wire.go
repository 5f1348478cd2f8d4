package gateway

import "encoding/json"

// Skill tools and the methods of their operations, as grants name them.
const (
	ToolRepoRead      = "repo-read"
	ToolPatchProposal = "patch-proposal"

	MethodReadFile       = ToolRepoRead + "/read_file"
	MethodListTree       = ToolRepoRead + "/list_tree"
	MethodGrep           = ToolRepoRead + "/grep"
	MethodGetBaseRef     = ToolRepoRead + "/get_base_ref"
	MethodGetDiffStats   = ToolRepoRead + "/get_diff_stats"
	MethodSubmitPatch    = ToolPatchProposal + "/submit_patch"
	MethodSubmitMetadata = ToolPatchProposal + "/submit_metadata"
)

// Error codes of the skills' taxonomy.
const (
	CodeInvalidArgument     = "INVALID_ARGUMENT"
	CodeUnauthenticated     = "UNAUTHENTICATED"
	CodePermissionDenied    = "PERMISSION_DENIED"
	CodeNotFound            = "NOT_FOUND"
	CodeConflict            = "CONFLICT"
	CodeIdempotencyConflict = "IDEMPOTENCY_CONFLICT"
	CodePayloadTooLarge     = "PAYLOAD_TOO_LARGE"
	CodeBudgetExhausted     = "BUDGET_EXHAUSTED"
	CodeUnavailable         = "UNAVAILABLE"
	CodeInternal            = "INTERNAL"
)

// ErrorBody is every error answer: {"error": {...}}.
type ErrorBody struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo is the taxonomy's error object. Details.reason carries a
// grant's reason code (EXPIRED, PATH_DENIED, ...) or the gateway's own
// (CALL_FLOOD, SESSION_CLOSED).
type ErrorInfo struct {
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Retryable bool              `json:"retryable"`
	Details   map[string]string `json:"details,omitempty"`
}

// ReadFileRequest is read_file's body.
type ReadFileRequest struct {
	Path     string `json:"path"`
	Offset   *int64 `json:"offset,omitempty"`
	MaxBytes *int64 `json:"max_bytes,omitempty"`
}

// FileContent is read_file's answer.
type FileContent struct {
	Path      string `json:"path"`
	Blob      string `json:"blob"`
	Size      int64  `json:"size"`
	Encoding  string `json:"encoding"` // utf-8 or base64
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

// ListTreeRequest is list_tree's body.
type ListTreeRequest struct {
	Path       *string `json:"path,omitempty"`
	Recursive  bool    `json:"recursive,omitempty"`
	MaxEntries *int    `json:"max_entries,omitempty"`
}

// TreeEntry is one entry of a listing.
type TreeEntry struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // blob, tree, symlink, submodule
	Mode   string `json:"mode"`
	Object string `json:"object"`
	Size   *int64 `json:"size,omitempty"`
}

// TreeListing is list_tree's answer.
type TreeListing struct {
	Path      string      `json:"path"`
	Entries   []TreeEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// GrepRequest is grep's body.
type GrepRequest struct {
	Pattern    string   `json:"pattern"`
	Paths      []string `json:"paths,omitempty"`
	IgnoreCase bool     `json:"ignore_case,omitempty"`
	MaxMatches *int     `json:"max_matches,omitempty"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepResult is grep's answer.
type GrepResult struct {
	Matches   []GrepMatch `json:"matches"`
	Truncated bool        `json:"truncated"`
}

// BaseRef is get_base_ref's answer.
type BaseRef struct {
	RunID        string `json:"run_id"`
	BaseRef      string `json:"base_ref"`
	BaseTreeHash string `json:"base_tree_hash"`
}

// DiffStatsRequest is get_diff_stats' body.
type DiffStatsRequest struct {
	ToRef string `json:"to_ref"`
}

// FileStat is one file of a diff's stats.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// DiffStats is get_diff_stats' answer.
type DiffStats struct {
	BaseRef string     `json:"base_ref"`
	ToRef   string     `json:"to_ref"`
	Files   []FileStat `json:"files"`
	Added   int        `json:"added"`
	Removed int        `json:"removed"`
}

// SubmitPatchRequest is submit_patch's body.
type SubmitPatchRequest struct {
	IdempotencyKey  string          `json:"idempotency_key"`
	NodeExecutionID string          `json:"node_execution_id"`
	Proposal        json.RawMessage `json:"proposal"`
}

// ProposalMeta is what submit_metadata attaches.
type ProposalMeta struct {
	IntentTags []string `json:"intent_tags,omitempty"`
	Notes      string   `json:"notes,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
}

// SubmitMetadataRequest is submit_metadata's body.
type SubmitMetadataRequest struct {
	IdempotencyKey  string       `json:"idempotency_key"`
	NodeExecutionID string       `json:"node_execution_id"`
	ProposalID      string       `json:"proposal_id"`
	Meta            ProposalMeta `json:"meta"`
}

// Submission statuses of a SubmitResult.
const (
	StatusSubmitted    = "submitted"
	StatusDeduplicated = "deduplicated"
	StatusRejected     = "rejected"
)

// SubmitResult is the answer of both writes.
type SubmitResult struct {
	ProposalID string `json:"proposal_id"`
	Status     string `json:"status"`
	DiffDigest string `json:"diff_digest,omitempty"`
	ReasonCode string `json:"reason_code,omitempty"`
	Replayed   bool   `json:"replayed"`
}
