package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Client calls a gateway's skills: over the Unix socket a sandbox binds
// in (NewUnixClient), or any http.Client. dome worker submit uses it; the
// workers users write use the clients dome gen makes from the skill
// contracts.
type Client struct {
	hc    *http.Client
	base  string
	grant []byte
}

// MaxAnswerBytes bounds an answer the client reads.
const MaxAnswerBytes = 8 << 20

// NewUnixClient returns a client of the gateway listening on socket,
// presenting grant on every call.
func NewUnixClient(socket string, grant []byte) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second,
	}
	return &Client{hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, base: "http://gateway.invalid", grant: grant}
}

// NewClient returns a client of the gateway at base (http://host:port)
// through hc.
func NewClient(hc *http.Client, base string, grant []byte) *Client {
	return &Client{hc: hc, base: base, grant: grant}
}

// CallError is an error answer of the gateway.
type CallError struct {
	Operation string
	Status    int
	Info      ErrorInfo
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("%s: %d %s: %s", e.Operation, e.Status, e.Info.Code, e.Info.Message)
	if r := e.Info.Details["reason"]; r != "" {
		s += " (" + r + ")"
	}
	return s
}

// Call posts req to the operation (its path, e.g. "read_file") and decodes
// the answer into out; an error answer is a *CallError.
func (c *Client) Call(ctx context.Context, op string, req, out any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+op, bytes.NewReader(b))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+string(c.grant))
	resp, err := c.hc.Do(r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(body) > MaxAnswerBytes {
		return fmt.Errorf("%s: the answer is over %d bytes", op, MaxAnswerBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		if json.Unmarshal(body, &eb) != nil || eb.Error.Code == "" {
			return &CallError{Operation: op, Status: resp.StatusCode, Info: ErrorInfo{Code: CodeInternal, Message: string(bytes.TrimSpace(body))}}
		}
		return &CallError{Operation: op, Status: resp.StatusCode, Info: eb.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: the answer does not decode: %w", op, err)
	}
	return nil
}

// GetBaseRef calls get_base_ref.
func (c *Client) GetBaseRef(ctx context.Context) (BaseRef, error) {
	var out BaseRef
	return out, c.Call(ctx, "get_base_ref", struct{}{}, &out)
}

// ListTree calls list_tree.
func (c *Client) ListTree(ctx context.Context, req ListTreeRequest) (TreeListing, error) {
	var out TreeListing
	return out, c.Call(ctx, "list_tree", req, &out)
}

// ReadFile calls read_file.
func (c *Client) ReadFile(ctx context.Context, req ReadFileRequest) (FileContent, error) {
	var out FileContent
	return out, c.Call(ctx, "read_file", req, &out)
}

// SubmitPatch calls submit_patch.
func (c *Client) SubmitPatch(ctx context.Context, req SubmitPatchRequest) (SubmitResult, error) {
	var out SubmitResult
	return out, c.Call(ctx, "submit_patch", req, &out)
}
