package jobwire

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Headers of the dispatch endpoints (beside Authorization: Bearer <grant>).
const (
	HeaderToken  = "X-Dome-Dispatch-Token" // the job's dispatch_token
	HeaderDaemon = "X-Dome-Daemon"         // the daemon's id, for the ledger
)

// Paths of the gateway's dispatch endpoints. A worker process never reaches
// them: its daemon's proxy refuses the prefix.
const (
	PathPrefix = "/dispatch/"
	PathInfo   = "/dispatch/info"   // GET: what the gateway serves (Info); no grant
	PathClaim  = "/dispatch/claim"  // POST Claim: the daemon starts the attempt
	PathTree   = "/dispatch/tree"   // POST: the attempt's scratch tree as a tar stream
	PathResult = "/dispatch/result" // POST Result: how the attempt ended; answered once it is recorded
)

// Info is what a gateway serving a run over NATS tells a daemon.
type Info struct {
	RunID       string     `json:"run_id"`
	Stream      string     `json:"stream"`
	Consumer    string     `json:"consumer"`
	Subject     string     `json:"subject"`
	DeadLetters string     `json:"dead_letter_subject"`
	Cancel      string     `json:"cancel_subject_prefix"` // + "." + node_execution_id
	AckWaitMS   int64      `json:"ack_wait_ms"`
	Keys        []KeyEntry `json:"coordinator_keys"` // the keys that sign the run's jobs and grants
}

// KeyEntry is a coordinator's public key.
type KeyEntry struct {
	KID       string `json:"kid"`
	PublicKey string `json:"public_key"` // base64:<32 bytes>
}

// Claim is the body of /dispatch/claim.
type Claim struct {
	NodeExecutionID string `json:"node_execution_id"`
	DaemonID        string `json:"daemon_id"`
	Delivery        uint64 `json:"delivery"` // JetStream's delivery count of the message (1: the first)
}

// Claimed answers a claim.
type Claimed struct {
	Status string `json:"status"` // claimed
}

// File is one output file of an attempt.
type File struct {
	Path string `json:"path"` // slash-separated, relative to the outputs folder
	Data []byte `json:"data"` // base64 in JSON
}

// SandboxResult is how the attempt's process ended (pkg/sandbox's Result).
type SandboxResult struct {
	Reason      string `json:"reason"`
	Detail      string `json:"detail,omitempty"`
	ExitCode    int    `json:"exit_code"`
	Signal      string `json:"signal,omitempty"`
	WallNS      int64  `json:"wall_ns"`
	StdoutBytes int64  `json:"stdout_bytes"`
	StderrBytes int64  `json:"stderr_bytes"`
	Processes   int    `json:"processes,omitempty"`
}

// Result is the body of /dispatch/result.
type Result struct {
	NodeExecutionID string        `json:"node_execution_id"`
	DaemonID        string        `json:"daemon_id"`
	Kind            string        `json:"kind"` // the daemon's sandbox: bubblewrap, none
	Sandbox         SandboxResult `json:"sandbox"`
	Stdout          []byte        `json:"stdout"`
	Stderr          []byte        `json:"stderr"`
	Files           []File        `json:"files"`
	// Error is an attempt the daemon could not run at all (the scratch
	// tree, the socket, the sandbox): it fails with prepare_failed.
	Error string `json:"error,omitempty"`
}

// MaxResultBytes bounds a result body (outputs, logs and JSON overhead).
const MaxResultBytes = 64 << 20

// DeadLetter is what a daemon publishes on the run's dead-letter subject
// for a message it refused (and terminated, or left for redelivery); the
// coordinator records each in its ledger.
type DeadLetter struct {
	RunID           string `json:"run_id,omitempty"` // as the message claims it (unverified when the message was refused before its signature held)
	NodeExecutionID string `json:"node_execution_id,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	Reason          string `json:"reason"` // the reason code
	Field           string `json:"field,omitempty"`
	Detail          string `json:"detail,omitempty"`
	DaemonID        string `json:"daemon_id"`
	Delivery        uint64 `json:"delivery"`
	StreamSequence  uint64 `json:"stream_sequence"`
	MessageDigest   string `json:"message_digest"`
	Disposition     string `json:"disposition"` // terminated (never delivered again), retry (left for redelivery)
	At              string `json:"at"`
}

// Dispositions of a dead letter.
const (
	DispositionTerminated = "terminated"
	DispositionRetry      = "retry"
)

// MaxDeadLetterBytes bounds a dead-letter record.
const MaxDeadLetterBytes = 64 << 10

// Names of a run's NATS objects. Subject tokens cannot hold '.', which a
// run id may: it is written '~' (no run id holds '~').
const (
	StreamTasks = "DOME_TASKS" // WorkQueuePolicy: each job to one daemon
	StreamDead  = "DOME_DEAD"  // the daemons' dead letters, read by the coordinators
)

// Token is a run id as a subject token or a name part.
func Token(runID string) string { return strings.ReplaceAll(runID, ".", "~") }

// TaskSubject is where a run's jobs are published.
func TaskSubject(runID string) string { return "dome.tasks." + Token(runID) }

// DeadSubject is where a run's dead letters go.
func DeadSubject(runID string) string { return "dome.dead." + Token(runID) }

// CancelPrefix is the prefix of a run's cancel subjects (core NATS): the
// coordinator publishes on CancelPrefix(run) + "." + node_execution_id.
func CancelPrefix(runID string) string { return "dome.cancel." + Token(runID) }

// Consumer is the durable pull consumer a run's daemons share.
func Consumer(runID string) string { return "run-" + Token(runID) }

// DeadConsumer is the coordinator's durable consumer of a run's dead letters.
func DeadConsumer(runID string) string { return "dead-" + Token(runID) }

// Digest is the sha256 of a message's bytes, as dead letters name it.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
