package jobwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/spawn"
)

// Kind is the payload type a job message is signed as.
const Kind = "dome.dispatch.job/v1"

// MaxMessageBytes bounds a job message (the grant and the SpawnSpec are
// most of it).
const MaxMessageBytes = 1 << 20

// Reason codes of a refused job message or dispatch call. A SpawnSpec that
// fails validation is refused with pkg/spawn's code (SPAWN_*).
const (
	CodeMalformed          = "MALFORMED"           // not a job message: size, JSON, members, values
	CodeBadSignature       = "BAD_SIGNATURE"       // the signature does not verify
	CodeUnknownKeyID       = "UNKNOWN_KEY_ID"      // signed by a key the daemon does not trust (another coordinator, or a session before a restart)
	CodeGrantInvalid       = "GRANT_INVALID"       // the grant does not read back or is not signed by the same coordinator
	CodeExpired            = "EXPIRED"             // the grant expired: the attempt can no longer run (a redelivery after its worker died)
	CodeReplayed           = "REPLAYED"            // the attempt was already claimed or ran: a repeated message
	CodeWrongRun           = "WRONG_RUN"           // the message is for another run than the gateway serves
	CodeSuperseded         = "SUPERSEDED"          // a redelivery: the attempt's first worker stopped answering and the attempt ended as a timeout
	CodeAttemptNotRunning  = "ATTEMPT_NOT_RUNNING" // the coordinator holds no such running attempt (it ended, or was lost with a coordinator)
	CodeGatewayUnreachable = "GATEWAY_UNREACHABLE" // the daemon could not reach the coordinator's gateway
	CodeBadToken           = "BAD_DISPATCH_TOKEN"  // a dispatch call without the attempt's dispatch token
	CodePrepareFailed      = "PREPARE_FAILED"      // the daemon could not set the attempt up (scratch tree, socket, sandbox)
)

// Limits are the sandbox limits of an attempt.
type Limits struct {
	WallMS      int64 `json:"wall_ms"`
	Processes   int   `json:"processes,omitempty"`
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	OpenFiles   int   `json:"open_files,omitempty"`
	FileBytes   int64 `json:"file_bytes,omitempty"`
	OutputBytes int64 `json:"output_bytes,omitempty"`
	TmpBytes    int64 `json:"tmp_bytes,omitempty"`
}

// OutputLimits bound what a daemon sends back of an attempt's outputs
// folder (the coordinator applies them again).
type OutputLimits struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	Depth int   `json:"depth"`
}

// Job is one attempt, as the coordinator publishes it.
type Job struct {
	SchemaVersion   string            `json:"schema_version"` // Kind
	RunID           string            `json:"run_id"`
	WaveID          string            `json:"wave_id"`
	NodeID          string            `json:"node_id"`
	NodeExecutionID string            `json:"node_execution_id"`
	TaskID          string            `json:"task_id"`
	WorkerID        string            `json:"worker_id"`
	Attempt         int               `json:"attempt"`
	BaseRef         string            `json:"base_ref"`
	Argv            []string          `json:"argv"`
	Env             map[string]string `json:"env"`
	Limits          Limits            `json:"limits"`
	Outputs         OutputLimits      `json:"outputs"`
	Grant           string            `json:"grant"`
	SpawnSpec       json.RawMessage   `json:"spawn_spec"`
	// DispatchToken is a secret of the attempt that the daemon presents
	// with the grant on the dispatch endpoints; the worker process never
	// sees it, so it cannot claim or report for itself.
	DispatchToken string `json:"dispatch_token"`
	IssuedAt      string `json:"issued_at"`  // when the coordinator published it
	ExpiresAt     string `json:"expires_at"` // the grant's expiry: the job is void after it
}

// Message is a job and the coordinator's signature over its canonical
// bytes.
type Message struct {
	Job       json.RawMessage   `json:"job"`
	Signature signing.Signature `json:"signature"`
}

// Sign seals j with key: the message's bytes.
func Sign(j Job, key signing.PrivateKey) ([]byte, error) {
	j.SchemaVersion = Kind
	b, err := canonical.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("job message: %w", err)
	}
	sig, err := signing.Sign(key, Kind, b)
	if err != nil {
		return nil, fmt.Errorf("job message: %w", err)
	}
	return canonical.Marshal(Message{Job: b, Signature: sig})
}

// Refusal is a message or call refused, with its reason code.
type Refusal struct {
	Code   string
	Field  string // a JSON pointer into the job, when one field is at fault
	Detail string
}

func (r *Refusal) Error() string {
	s := r.Code
	if r.Field != "" {
		s += " at " + r.Field
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

func refuse(code, field, format string, a ...any) *Refusal {
	return &Refusal{Code: code, Field: field, Detail: fmt.Sprintf(format, a...)}
}

// AsRefusal finds a *Refusal in err's chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// Opened is a job message that passed every check.
type Opened struct {
	Job    Job
	Spec   spawn.Spec
	Grant  *grant.Grant
	Digest string // sha256 of the message's bytes
	KID    string // the key that signed it
}

// Checker opens job messages. Trusted are the coordinator keys; the zero
// Validator is ready.
type Checker struct {
	Trusted   *signing.TrustedKeys
	Validator *spawn.Validator
	// RunID is the run the daemon serves ("": any): a job signed for
	// another run is refused (WRONG_RUN) before its contents are read.
	RunID    string
	verifier *grant.Verifier
}

// NewChecker returns a checker trusting keys.
func NewChecker(keys *signing.TrustedKeys) (*Checker, error) {
	v, err := grant.NewVerifier(keys, grant.Options{})
	if err != nil {
		return nil, err
	}
	return &Checker{Trusted: keys, Validator: &spawn.Validator{}, verifier: v}, nil
}

// allowedEnv reports whether a worker environment name is one a
// coordinator sets (dome's DOME_* and the interpreter settings it adds).
func allowedEnv(k string) bool {
	switch k {
	case "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH":
		return true
	}
	if !strings.HasPrefix(k, "DOME_") || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Open checks a message at now: the order is size and structure, the
// signature, the SpawnSpec, the grant and its binding, the expiry.
func (c *Checker) Open(data []byte, now time.Time) (*Opened, error) {
	if len(data) > MaxMessageBytes {
		return nil, refuse(CodeMalformed, "", "%d bytes: a job message is at most %d", len(data), MaxMessageBytes)
	}
	if _, err := canonical.Transform(data); err != nil {
		return nil, refuse(CodeMalformed, "", "%v", err)
	}
	var m Message
	if err := decodeStrict(data, &m); err != nil {
		return nil, refuse(CodeMalformed, "", `want {"job": {...}, "signature": {"alg", "kid", "sig"}}: %v`, err)
	}
	if len(m.Job) == 0 {
		return nil, refuse(CodeMalformed, "/job", "missing")
	}
	canon, err := canonical.Transform(m.Job)
	if err != nil {
		return nil, refuse(CodeMalformed, "/job", "%v", err)
	}
	if _, err := c.Trusted.Key(m.Signature.KID); err != nil {
		return nil, refuse(CodeUnknownKeyID, "/signature/kid", "%q is not a coordinator key this daemon trusts (trusted: %s)", m.Signature.KID, strings.Join(c.Trusted.KIDs(), ", "))
	}
	if err := c.Trusted.Verify(Kind, canon, m.Signature); err != nil {
		return nil, refuse(CodeBadSignature, "/signature", "%v", err)
	}
	var j Job
	if err := decodeStrict(canon, &j); err != nil {
		return nil, refuse(CodeMalformed, "/job", "%v", err)
	}
	if c.RunID != "" && j.RunID != c.RunID {
		return nil, refuse(CodeWrongRun, "/job/run_id", "the job is for run %q, this daemon serves run %s", clipID(j.RunID), c.RunID)
	}
	if err := j.check(); err != nil {
		return nil, err
	}
	spec, err := c.Validator.Parse("job "+j.TaskID+" spawn_spec", j.SpawnSpec)
	if err != nil {
		var se *spawn.Error
		if errors.As(err, &se) {
			return nil, &Refusal{Code: se.Code, Field: "/spawn_spec" + se.Field, Detail: err.Error()}
		}
		return nil, refuse(spawn.CodeMalformed, "/spawn_spec", "%v", err)
	}
	f := spec.Fields()
	if f.RunID != j.RunID || f.WaveID != j.WaveID || f.NodeID != j.NodeID || f.NodeExecutionID != j.NodeExecutionID {
		return nil, refuse(spawn.CodeGrantMismatch, "/spawn_spec", "the SpawnSpec names run %s wave %s node %s execution %s, the job %s %s %s %s",
			f.RunID, f.WaveID, f.NodeID, f.NodeExecutionID, j.RunID, j.WaveID, j.NodeID, j.NodeExecutionID)
	}
	g, err := c.verifier.CheckSignature([]byte(j.Grant))
	if err != nil {
		return nil, refuse(CodeGrantInvalid, "/grant", "%v", err)
	}
	if g.Header.KID != m.Signature.KID {
		return nil, refuse(CodeGrantInvalid, "/grant", "the grant is signed by %s, the message by %s", g.Header.KID, m.Signature.KID)
	}
	if err := spec.CheckGrant(g); err != nil {
		var se *spawn.Error
		if errors.As(err, &se) {
			return nil, &Refusal{Code: se.Code, Field: "/spawn_spec" + se.Field, Detail: err.Error()}
		}
		return nil, refuse(spawn.CodeGrantMismatch, "/grant", "%v", err)
	}
	if p := g.Payload; p.WorkerID != "" && p.WorkerID != j.WorkerID || p.NodeExecutionID != j.NodeExecutionID {
		return nil, refuse(spawn.CodeGrantMismatch, "/grant", "the grant is bound to worker %s execution %s, the job is %s %s", p.WorkerID, p.NodeExecutionID, j.WorkerID, j.NodeExecutionID)
	}
	if exp := g.ExpiresAt(); !now.Before(exp) {
		return nil, refuse(CodeExpired, "/grant", "the grant expired at %s (%s ago): the attempt can no longer run", g.Payload.ExpiresAt, now.Sub(exp).Round(time.Second))
	}
	if j.ExpiresAt != g.Payload.ExpiresAt {
		return nil, refuse(CodeMalformed, "/expires_at", "%s, the grant's is %s", j.ExpiresAt, g.Payload.ExpiresAt)
	}
	return &Opened{Job: j, Spec: spec, Grant: g, Digest: canonical.Digest(data), KID: m.Signature.KID}, nil
}

// check checks a job's own members.
func (j *Job) check() *Refusal {
	if j.SchemaVersion != Kind {
		return refuse(CodeMalformed, "/schema_version", "%q, want %s", j.SchemaVersion, Kind)
	}
	for _, f := range []struct{ name, v string }{{"run_id", j.RunID}, {"wave_id", j.WaveID}, {"node_id", j.NodeID},
		{"node_execution_id", j.NodeExecutionID}, {"task_id", j.TaskID}, {"worker_id", j.WorkerID}} {
		if err := grant.CheckID(f.v); err != nil {
			return refuse(CodeMalformed, "/"+f.name, "%v", err)
		}
	}
	if !isFullSHA(j.BaseRef) {
		return refuse(CodeMalformed, "/base_ref", "%q: want a full commit SHA", j.BaseRef)
	}
	if j.Attempt < 1 {
		return refuse(CodeMalformed, "/attempt", "%d: want 1 or more", j.Attempt)
	}
	if len(j.Argv) == 0 || len(j.Argv) > 256 {
		return refuse(CodeMalformed, "/argv", "want 1 to 256 arguments")
	}
	for i, a := range j.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return refuse(CodeMalformed, fmt.Sprintf("/argv/%d", i), "a NUL byte")
		}
	}
	for k, v := range j.Env {
		if !allowedEnv(k) {
			return refuse(CodeMalformed, "/env/"+k, "a coordinator sets only DOME_*, PATH and PYTHON* in a worker's environment")
		}
		if strings.IndexByte(v, 0) >= 0 {
			return refuse(CodeMalformed, "/env/"+k, "a NUL byte")
		}
	}
	if j.Limits.WallMS <= 0 {
		return refuse(CodeMalformed, "/limits/wall_ms", "%d: want a wall-time limit", j.Limits.WallMS)
	}
	if len(j.DispatchToken) < 32 || len(j.DispatchToken) > 128 {
		return refuse(CodeMalformed, "/dispatch_token", "want 32 to 128 characters")
	}
	if _, err := time.Parse(time.RFC3339Nano, j.IssuedAt); err != nil {
		return refuse(CodeMalformed, "/issued_at", "%v", err)
	}
	return nil
}

func isFullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decodeStrict decodes JSON refusing unknown members and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// DecodeStrict is decodeStrict for the bodies of the dispatch endpoints.
func DecodeStrict(data []byte, v any) error { return decodeStrict(data, v) }

// clipID bounds an id quoted from a refused message.
func clipID(s string) string {
	if len(s) > 128 {
		return s[:128]
	}
	return s
}
