package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/agent/reporead"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/skill"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// skillTool is the skill contract whose operations agents' tool steps call.
const skillTool = "repo-read"

// runTools is the tool side of a run: the executor, what was issued, and
// what to close.
type runTools struct {
	Exec   *agent.Executor
	Grants []agent.GrantRecord
	close  func()
}

func (t *runTools) Close() {
	if t != nil && t.close != nil {
		t.close()
	}
}

// agentTools builds the tools of a run of agent id: the repo-read skill's
// operations at the run's commit, called through grants. Every agent the
// run may reach that declares a tools block gets a grant derived like a
// wave worker's (policy ∩ resolver(capabilities) ∩ its A2A runtime card,
// role worker), issued for this process with a key that lives as long as
// it does, and verified on every call against the run's grant store
// (<run>/grants/, where dome grant revoke --store reaches it). A run whose
// agents declare no tools gets none.
func agentTools(ctx context.Context, cat *agentCatalog, id, runID, runDir string, now func() time.Time) (*runTools, error) {
	var holders []string
	for _, a := range reachableAgents(cat.Catalog, id) {
		if p, _ := cat.Catalog.Agents.Get(a); p.Tools != nil {
			holders = append(holders, a)
		}
	}
	if len(holders) == 0 {
		return &runTools{}, nil
	}
	reg, pin := cat.Reg, cat.Pin
	commit := pin.Commit.String()
	schemas, err := skillSchemas(reg, pin)
	if err != nil {
		return nil, err
	}
	tools, err := reporead.Tools(reporead.Options{Repo: reg.Repo(), Commit: pin.Commit, RunID: runID, Tool: skillTool, Schemas: schemas})
	if err != nil {
		return nil, err
	}
	key, err := signing.GenerateKey("dome-workflow", rand.Reader)
	if err != nil {
		return nil, err
	}
	trusted, err := signing.NewTrustedKeys(key.Public())
	if err != nil {
		return nil, err
	}
	store, err := grantfile.Open(filepath.Join(runDir, "grants"))
	if err != nil {
		return nil, fmt.Errorf("the run's grant store: %w", err)
	}
	tokens := map[string][]byte{}
	var records []agent.GrantRecord
	for _, a := range holders {
		p, _ := cat.Catalog.Agents.Get(a)
		d, err := derive(ctx, reg, deriveOptions{Ref: commit, Card: p.Tools.Card,
			Need: grant.Need{NodeID: a, Capabilities: p.Tools.Capabilities, Role: grant.RoleWorker}})
		if err != nil {
			store.Close()
			return nil, agentGrantError(err, a, cat.Catalog.Agents.Source(a))
		}
		tok, g, err := grant.Issue(d, grant.Binding{RunID: runID, WaveID: agent.GrantWave, WorkerID: agent.WorkerIDOf(a), Issuer: "dome-workflow",
			IssuedAt: now(), BaseRef: commit}, key, rand.Reader)
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("agent %s: issue its grant: %w", a, grantError(err))
		}
		tokens[a] = tok
		rec := agent.GrantRecord{Agent: a, ProfileID: g.Payload.ProfileID, JTI: g.Payload.JTI, Digest: g.Digest, Card: p.Tools.Card,
			ExpiresAt: g.Payload.ExpiresAt, Methods: []string{}}
		for _, m := range g.Payload.AllowedMethods {
			rec.Methods = append(rec.Methods, m.Method)
		}
		slices.Sort(rec.Methods)
		records = append(records, rec)
	}
	v, err := grant.NewVerifier(trusted, grant.Options{Store: store, Meter: grant.NewMeter(), CacheSize: 64})
	if err != nil {
		store.Close()
		return nil, err
	}
	x, err := agent.NewExecutor(agent.NewGrantAuthorizer(v, grant.AudienceWorker, runID, now, tokens), tools...)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &runTools{Exec: x, Grants: records, close: func() { store.Close() }}, nil
}

// agentGrantError says which field of the agent's profile a refused
// derivation comes from (tools.card, tools.capabilities), with the grant's
// reason code; bad input is exit 2, anything else exit 1.
func agentGrantError(err error, id, source string) error {
	ge, ok := grant.AsError(err)
	if !ok || ge.Source != "derive" {
		return fmt.Errorf("agent %s: its tool grant: %w", id, grantError(err))
	}
	field := "/tools"
	switch {
	case strings.HasPrefix(ge.Field, "capabilit"):
		field = "/tools/capabilities"
	case strings.HasPrefix(ge.Field, "card"):
		field = "/tools/card"
	}
	msg := ge.Msg
	if ge.Err != nil {
		msg += ": " + ge.Err.Error()
	}
	problem := fmt.Sprintf("agent %s: its tool grant is refused: %s (%s)", id, strings.TrimPrefix(msg, ": "), ge.Code)
	hint := ge.Hint
	if hint == "" {
		hint = "an agent's tools block is held to the policy, the resolver and its A2A runtime card, like a wave worker: ask only for what the card offers"
	}
	if ge.Code.Input() {
		return &errkind.InputError{Source: source, Field: field, Problem: problem, Hint: hint, Err: err}
	}
	return &errkind.CheckError{Problem: source + ": " + field + ": " + problem, Hint: hint}
}

// skillSchemas compiles the input schema of each operation reporead serves
// from the skill contract at the pin.
func skillSchemas(reg *registry.Registry, pin registry.Pin) (map[string]*schemaval.Schema, error) {
	t, err := reg.ToolAt(registry.Ref{ID: skillTool, Rev: pin.Commit.String()}, pin)
	if err != nil {
		return nil, &errkind.InputError{Source: skillTool + "@" + pin.Commit.Short(), Problem: "agents' tool steps call the repo-read skill contract, which the registry does not have: " + err.Error(),
			Hint: "add registry/tools/repo-read (dome ships one), or remove the tools block"}
	}
	files := reg.Files(t)
	doc, err := specfilter.Load(files, t.Tool.Spec, specfilter.LoadOptions{Describe: files.Describe})
	if err != nil {
		return nil, err
	}
	out := map[string]*schemaval.Schema{}
	for _, op := range reporead.Operations() {
		b, err := skill.RequestSchema(doc, op)
		if err != nil {
			return nil, &errkind.InputError{Source: files.Describe(t.Tool.Spec), Problem: err.Error()}
		}
		s, err := schemaval.Compile(skillTool+"/"+op+" request", b)
		if err != nil {
			return nil, &errkind.InputError{Source: files.Describe(t.Tool.Spec), Problem: fmt.Sprintf("the request schema of %s cannot be enforced: %v", op, err)}
		}
		out[op] = s
	}
	return out, nil
}
