package agent

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// ReasonNoGrant is the refusal of a tool call by an agent that holds no
// grant (its profile declares no tools block).
const ReasonNoGrant = "NO_GRANT"

// GrantWave is the wave every agent grant of a run is bound to.
const GrantWave = "agent"

// WorkerIDOf is the worker identity an agent's grant is bound to.
func WorkerIDOf(agent string) string { return "agent:" + agent }

// GrantAuthorizer holds agents' tool calls to ToolProfile grants: each agent
// with a tools block holds one grant, derived from the policy, the resolver
// and its A2A runtime card like a wave worker's and bound to the run, the
// wave GrantWave and the worker WorkerIDOf(agent). Every call is verified
// in full (signature, validity window, bindings, revocation, the method,
// the paths against the roots and deny globs, the budgets, charged to a
// meter); a refusal is a DeniedError with the grant's reason code.
type GrantAuthorizer struct {
	v        *grant.Verifier
	tokens   map[string][]byte
	audience string
	runID    string
	now      func() time.Time
}

// NewGrantAuthorizer returns an authorizer over tokens (by agent id),
// verified by v for the run at the time now gives.
func NewGrantAuthorizer(v *grant.Verifier, audience, runID string, now func() time.Time, tokens map[string][]byte) *GrantAuthorizer {
	cp := make(map[string][]byte, len(tokens))
	for k, t := range tokens {
		cp[k] = append([]byte(nil), t...)
	}
	return &GrantAuthorizer{v: v, tokens: cp, audience: audience, runID: runID, now: now}
}

// Agents returns the agents that hold a grant, sorted.
func (a *GrantAuthorizer) Agents() []string {
	out := make([]string, 0, len(a.tokens))
	for k := range a.tokens {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *GrantAuthorizer) request(agent string, call *grant.Call) grant.Request {
	return grant.Request{Audience: a.audience, RunID: a.runID, WaveID: GrantWave, WorkerID: WorkerIDOf(agent), Now: a.now(), Call: call}
}

// Authorize verifies the calling agent's grant for the call and charges it.
func (a *GrantAuthorizer) Authorize(ctx context.Context, c Call) error {
	tok, ok := a.tokens[c.Agent]
	if !ok {
		return &DeniedError{Reason: ReasonNoGrant, Message: fmt.Sprintf("agent %q holds no grant: its profile has no tools block (tools.card, tools.capabilities)", c.Agent)}
	}
	_, err := a.v.Authorize(ctx, tok, a.request(c.Agent, &grant.Call{Method: c.Method, ReadPaths: c.ReadPaths, WritePaths: c.WritePaths, Hosts: c.Hosts}))
	if err != nil {
		return &DeniedError{Reason: string(grant.CodeOf(err)), Message: err.Error()}
	}
	return nil
}

// CanRead reports whether the agent's grant lets it read path (checked
// statelessly: nothing is charged).
func (a *GrantAuthorizer) CanRead(agent, path string) bool {
	tok, ok := a.tokens[agent]
	if !ok {
		return false
	}
	_, err := a.v.Check(tok, a.request(agent, &grant.Call{ReadPaths: []string{path}}))
	return err == nil
}

// GrantRecord is an issued agent grant, as the run's events record it (the
// token itself is not kept: its signing key lives only as long as the
// process).
type GrantRecord struct {
	Agent     string   `json:"agent"`
	ProfileID string   `json:"profileId"`
	JTI       string   `json:"jti"`
	Digest    string   `json:"digest"`
	Card      string   `json:"card"`
	Methods   []string `json:"methods"`
	ExpiresAt string   `json:"expiresAt"`
}
