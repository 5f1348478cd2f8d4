package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/workflow"
	"github.com/urfave/cli/v2"
)

func newRunCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "work queues of TaskSpec nodes run in waves of sandboxed workers: validate, graph, plan, start, status, replay, cancel, export-otel",
		Subcommands: []*cli.Command{
			newRunValidateCommand(env),
			newRunGraphCommand(env),
			newRunPlanCommand(env),
			newRunStartCommand(env),
			newRunStatusCommand(env),
			newRunReplayCommand(env),
			newRunCancelCommand(env),
			newRunExportOtelCommand(env),
		},
	}
}

// ResolverPath is where a repository keeps its capability resolver.
const resolverPath = "policy/resolver_spec.json"

func runPolicyFlag() cli.Flag {
	return &cli.StringFlag{Name: "policy", Usage: "run policy `FILE` (default: <repo>/policy/run_policy.json, else the built-in policy)"}
}

func runResolverFlag() cli.Flag {
	return &cli.StringFlag{Name: "resolver", Usage: "capability resolver `FILE` the tasks' capabilities are checked against (default: <repo>/policy/resolver_spec.json when present)"}
}

func maxConcurrencyFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-concurrency", Usage: "run at most `N` attempts at once (only lowers the policy's limit)"}
}

// runInputs is a checked queue with the policy and resolver it was checked
// against.
type runInputs struct {
	Source, Path   string
	Queue          *runspec.Queue
	Graph          *workflow.Graph // the queue's graph scored under Policy
	Policy         *runspec.Policy
	PolicySource   string
	Sched          workflow.Policy
	ResolverSource string // "" when no resolver was found
}

// loadRunInputs reads QUEUE, the run policy and the resolver. The
// repository is optional: outside one, the built-in policy applies and
// capabilities are checked only against an explicit --resolver.
func loadRunInputs(env *Env, c *cli.Context) (*runInputs, error) {
	if c.NArg() != 1 {
		return nil, usagef("name one work queue file: dome run %s QUEUE", c.Command.Name)
	}
	arg := c.Args().First()
	in := &runInputs{Source: arg, Path: absPath(env, arg)}
	if arg == "-" {
		in.Source, in.Path = "stdin", ""
	}
	data, err := readInputFile(env, arg, runspec.MaxQueueBytes)
	if err != nil {
		return nil, err
	}
	q, _, err := runspec.ParseQueue(in.Source, data)
	if err != nil {
		return nil, err
	}
	in.Queue = q
	if err := checkRunFolder(in.Path, q); err != nil {
		return nil, err
	}
	root := repoRoot(env, c)
	if in.Policy, in.PolicySource, err = loadRunPolicy(env, c.String("policy"), root); err != nil {
		return nil, err
	}
	known, src, err := loadResolverCapabilities(env, c.String("resolver"), root)
	if err != nil {
		return nil, err
	}
	if src != "" {
		if err := q.CheckCapabilities(in.Source, known); err != nil {
			return nil, err
		}
		in.ResolverSource = src
	}
	g, sched, err := runspec.Schedule(in.Source, q, in.Policy, runspec.Overrides{MaxConcurrency: c.Int("max-concurrency")})
	if err != nil {
		return nil, err
	}
	in.Graph, in.Sched = g, sched
	return in, nil
}

// checkRunFolder refuses a queue under ops/runs/<run>/ whose run_id names
// another run.
func checkRunFolder(path string, q *runspec.Queue) error {
	if path == "" || q.RunID == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) != "runs" || filepath.Base(filepath.Dir(filepath.Dir(dir))) != "ops" {
		return nil
	}
	if name := filepath.Base(dir); name != q.RunID {
		return &errkind.InputError{Source: path, Field: "/run_id", Problem: fmt.Sprintf("%q, but the queue is in the folder of run %q", q.RunID, name),
			Hint: "make run_id the run folder's name, or leave it out"}
	}
	return nil
}

// repoRoot is the worktree of --repo (or of the working directory), or ""
// outside a repository.
func repoRoot(env *Env, c *cli.Context) string {
	target := repoTarget(c, env)
	if target != "" && gitstore.IsURL(target) {
		return ""
	}
	path := env.WorkDir
	if target != "" {
		path = absPath(env, target)
	}
	repo, err := gitstore.Open(path)
	if err != nil {
		return ""
	}
	defer repo.Close()
	return repo.Path()
}

// loadRunPolicy reads --policy, else <repo>/policy/run_policy.json, else
// the built-in policy.
func loadRunPolicy(env *Env, flag, root string) (*runspec.Policy, string, error) {
	path, source := "", ""
	switch {
	case flag != "":
		path, source = absPath(env, flag), flag
	case root != "":
		path, source = filepath.Join(root, filepath.FromSlash(runspec.PolicyPath)), runspec.PolicyPath
	default:
		return runspec.DefaultPolicy(), "built-in", nil
	}
	data, err := readlimit.ReadFile(path, readlimit.Profile)
	if err != nil {
		if flag == "" && errors.Is(err, os.ErrNotExist) {
			return runspec.DefaultPolicy(), "built-in", nil
		}
		return nil, "", &errkind.InputError{Source: source, Problem: "cannot read the run policy: " + pathErr(err)}
	}
	p, err := runspec.ParsePolicy(source, data)
	if err != nil {
		return nil, "", err
	}
	return p, source, nil
}

// loadResolverCapabilities returns the capability names of --resolver, else
// of <repo>/policy/resolver_spec.json when present (source "" when none).
// Only the names are read: what they resolve to is the grants' business.
func loadResolverCapabilities(env *Env, flag, root string) ([]string, string, error) {
	path, source := "", ""
	switch {
	case flag != "":
		path, source = absPath(env, flag), flag
	case root != "":
		path, source = filepath.Join(root, filepath.FromSlash(resolverPath)), resolverPath
	default:
		return nil, "", nil
	}
	data, err := readlimit.ReadFile(path, readlimit.Profile)
	if err != nil {
		if flag == "" && errors.Is(err, os.ErrNotExist) {
			return nil, "", nil
		}
		return nil, "", &errkind.InputError{Source: source, Problem: "cannot read the capability resolver (policy/resolver_spec.json): " + pathErr(err)}
	}
	return resolverCapabilities(source, data)
}

// resolverCapabilities reads the capability names of a resolver spec.
func resolverCapabilities(source string, data []byte) ([]string, string, error) {
	if err := schemaval.CheckJSON(source, data); err != nil {
		return nil, "", err
	}
	var spec struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(data, &spec); err != nil || spec.Capabilities == nil {
		return nil, "", &errkind.InputError{Source: source, Field: "/capabilities", Problem: "want an object of capabilities", Hint: "see docs/formats.md"}
	}
	names := make([]string, 0, len(spec.Capabilities))
	for k := range spec.Capabilities {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, source, nil
}

// waveIDs lists the node ids of each topological wave.
func waveIDs(g *workflow.Graph) [][]string {
	var out [][]string
	for _, l := range g.Levels() {
		ids := make([]string, len(l))
		for k, i := range l {
			ids[k] = g.Node(i).ID
		}
		out = append(out, ids)
	}
	return out
}

func joinOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}
