package orchestrate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/skill"
)

// DefaultRuntimeCard is the card of a task whose container names none.
const DefaultRuntimeCard = "dome-worker"

// GrantInputs are the pinned inputs every grant of a run is derived from:
// the policy and resolver specs, the skill contracts and the runtime cards,
// all read at the registry commit.
type GrantInputs struct {
	Commit string
	Policy *grant.Policy
	Index  *grant.Index
	Cards  map[string]*Card // by id (the runtime card's id)
	Files  []runspec.PinnedFile
}

// Card is one runtime card a run uses.
type Card struct {
	ID     string
	Path   string
	Digest string
	Parsed *a2a.Card
}

// CardOf returns the runtime card a task runs on.
func CardOf(t *runspec.Task) string {
	if c := t.Containers[0].RuntimeCard; c != "" {
		return c
	}
	return DefaultRuntimeCard
}

// LoadGrantInputs reads the grant inputs of the queue's tasks at commit.
func LoadGrantInputs(ctx context.Context, reg *registry.Registry, commit gitstore.Hash, q *runspec.Queue) (*GrantInputs, error) {
	p, err := reg.PinRev(ctx, "", commit.String(), registry.PinOptions{Source: "--registry", Display: commit.String()})
	if err != nil {
		return nil, err
	}
	in := &GrantInputs{Commit: commit.String(), Cards: map[string]*Card{}}
	var specs grant.Specs
	pb, err := reg.ReadPolicyFile(p, registry.PolicySpecPath)
	if err != nil {
		return nil, err
	}
	if in.Policy, err = specs.ParsePolicy(registry.PolicySpecPath+"@"+commit.Short(), pb); err != nil {
		return nil, err
	}
	rb, err := reg.ReadPolicyFile(p, registry.ResolverSpecPath)
	if err != nil {
		return nil, err
	}
	res, err := specs.ParseResolver(registry.ResolverSpecPath+"@"+commit.Short(), rb)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{registry.PolicySpecPath, pb}, {registry.ResolverSpecPath, rb}} {
		d, err := canonical.DigestJSON(f.data)
		if err != nil {
			return nil, err
		}
		in.Files = append(in.Files, runspec.PinnedFile{Path: f.path, Digest: d, Source: "git:" + commit.String()})
	}
	cat, err := skill.Catalog(reg, p, res)
	if err != nil {
		return nil, err
	}
	if in.Index, err = grant.NewIndex(res, cat); err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for i := range q.Tasks {
		ids[CardOf(&q.Tasks[i])] = true
	}
	for _, id := range sortedKeys(ids) {
		e, err := reg.A2AAt(registry.A2ARuntime, id, p)
		if err != nil {
			return nil, err
		}
		in.Cards[id] = &Card{ID: id, Path: e.Path, Digest: e.Digest, Parsed: e.Parsed}
	}
	return in, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Derive derives the grant profile of a task: its required capabilities
// through the policy, the resolver and its runtime card, narrowed by its
// constraints.
func (in *GrantInputs) Derive(t *runspec.Task) (*grant.Derivation, error) {
	c := in.Cards[CardOf(t)]
	if c == nil {
		return nil, fmt.Errorf("runtime card %q was not loaded", CardOf(t))
	}
	need := grant.Need{NodeID: t.NodeID, Capabilities: t.RequiredCapabilities, Role: grant.RoleWorker}
	if k := t.Constraints; k != nil {
		n := &grant.Template{}
		if len(k.ReadRoots) > 0 || len(k.WriteRoots) > 0 || len(k.DenyGlobs) > 0 {
			n.IO = &grant.IOTemplate{ReadRoots: k.ReadRoots, WriteRoots: k.WriteRoots, DenyGlobs: k.DenyGlobs}
		}
		if k.MaxCalls != nil || k.MaxWallSeconds != nil {
			n.Budgets = &grant.BudgetsTemplate{MaxCalls: k.MaxCalls, MaxWallSeconds: k.MaxWallSeconds}
		}
		need.Narrow = n
	}
	return grant.Derive(grant.Sources{Policy: in.Policy, Index: in.Index, Card: c.Parsed, CardID: "runtime/" + c.ID,
		CardRef: "runtime/" + c.ID + "@" + in.Commit, CardDigest: c.Digest}, need)
}

// DeriveAll derives every task's grant once, before anything runs: a task
// its card, the policy or the resolver cannot serve is refused with every
// such task named, and the run does not start.
func (in *GrantInputs) DeriveAll(source string, q *runspec.Queue) (map[string]*grant.Derivation, error) {
	out := map[string]*grant.Derivation{}
	var problems []string
	for i := range q.Tasks {
		t := &q.Tasks[i]
		d, err := in.Derive(t)
		if err != nil {
			problems = append(problems, fmt.Sprintf("/tasks/%d (%s): %v", i, t.NodeID, err))
			continue
		}
		out[t.NodeID] = d
	}
	if len(problems) > 0 {
		msg := problems[0]
		if len(problems) > 1 {
			msg = fmt.Sprintf("%d tasks cannot be granted what they need:\n  %s", len(problems), strings.Join(problems, "\n  "))
		}
		return nil, &errkind.InputError{Source: source, Problem: msg,
			Hint: "give each task capabilities its runtime card offers and the resolver knows (dome grant derive --card runtime/<id> -c CAP --explain shows why)"}
	}
	return out, nil
}

// TaskID names an attempt for people: "<node_id>.<attempt>", or, when that
// would pass 128 characters, a shortened node id and the node execution
// id's first hex digits.
func TaskID(nodeID string, attempt int, execID string) string {
	s := nodeID + "." + strconv.Itoa(attempt)
	if len(s) <= 128 {
		return s
	}
	h := strings.TrimPrefix(execID, "nx-")
	if len(h) > 8 {
		h = h[:8]
	}
	return nodeID[:100] + "-" + h + "." + strconv.Itoa(attempt)
}

// WorkerID is the spawn identity an attempt's grant is bound to.
func WorkerID(taskID string) string { return "worker-" + taskID }

// SpawnSeed is a SpawnSpec's determinism_seed (an integer below 2^53)
// derived from the run's seed and the attempt.
func SpawnSeed(seed, execID string) int64 {
	h := sha256.Sum256([]byte(seed + "\x00" + execID))
	return int64(binary.BigEndian.Uint64(h[:8]) & (1<<53 - 1))
}

// errStop ends the loop quietly (the run stopped).
var errStop = errors.New("stopped")

// HostEnvironment describes this machine for a run manifest (the sandbox
// part is the caller's).
func HostEnvironment(domeVersion string) runspec.Environment {
	kernel := runtime.GOOS
	if b, err := readlimit.ReadFile("/proc/sys/kernel/osrelease", 4096); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return runspec.Environment{DomeVersion: domeVersion, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: kernel}
}
