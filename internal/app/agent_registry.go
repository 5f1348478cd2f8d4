package app

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

// agentCatalog is the agent registry at one pinned commit.
type agentCatalog struct {
	Reg     *registry.Registry
	Pin     registry.Pin
	Ref     string // as requested
	Catalog *agent.Catalog
}

// loadAgentCatalog pins rev and loads the agent profiles, model runtimes and
// abilities there (from git objects, never the worktree). With budgets it
// also checks every agent's core abilities against its token budget, which
// builds the tokenizer (about 80 ms).
func loadAgentCatalog(ctx context.Context, env *Env, c *cli.Context, source, rev string, budgets bool) (*agentCatalog, error) {
	reg, err := openRegistry(ctx, env, c)
	if err != nil {
		return nil, err
	}
	return agentCatalogAt(ctx, reg, source, rev, budgets)
}

func agentCatalogAt(ctx context.Context, reg *registry.Registry, source, rev string, budgets bool) (*agentCatalog, error) {
	if _, err := registry.ParseRef(source, "agents@"+rev); err != nil {
		return nil, err
	}
	p, err := reg.PinRev(ctx, "", rev, registry.PinOptions{Source: source, Display: rev})
	if err != nil {
		return nil, err
	}
	files, err := reg.ReadAgentFiles(p)
	if err != nil {
		return nil, err
	}
	if len(files.Agents) == 0 {
		dir := filepath.ToSlash(filepath.Join(files.Root, registry.AgentsDir))
		return nil, &errkind.InputError{Source: source, Problem: "no agent profiles at " + rev + " (" + p.Commit.Short() + "): " + dir + "/ holds none",
			Hint: "add " + dir + "/standard.agent.json (every agent registry needs the standard agent) and commit it"}
	}
	conv := func(fs []registry.RawFile) []agent.File {
		out := make([]agent.File, len(fs))
		for i, f := range fs {
			out[i] = agent.File{Path: f.Path + "@" + p.Commit.Short(), Data: f.Data}
		}
		return out
	}
	opts := agent.LoadOptions{}
	if budgets {
		opts.Tokenizer = agent.NewTokenizer()
	}
	cat, err := agent.LoadCatalog(p.Commit.String(), conv(files.Agents), conv(files.Runtimes), conv(files.Abilities), opts)
	if err != nil {
		return nil, err
	}
	return &agentCatalog{Reg: reg, Pin: p, Ref: rev, Catalog: cat}, nil
}

// splitAgentRef reads AGENT or AGENT@REF (REF defaults to def).
func splitAgentRef(source, arg, def string) (id, rev string, err error) {
	id, rev, found := strings.Cut(arg, "@")
	if !found {
		rev = def
	}
	if id == "" || rev == "" {
		return "", "", &errkind.InputError{Source: source, Problem: "name an agent as AGENT or AGENT@REF: " + arg, Hint: "e.g. planner or planner@main"}
	}
	if _, err := registry.ParseRef(source, id+"@"+rev); err != nil {
		return "", "", err
	}
	return id, rev, nil
}

// agentRunsDir is where agent runs live: --ops, else <repo>/ops/runs (the
// main worktree's, also from a linked one), as for stacks.
func agentRunsDir(env *Env, c *cli.Context, repo *gitstore.Repo) string {
	if dir := c.String("ops"); dir != "" {
		return absPath(env, dir)
	}
	root := repo.Path()
	if main := repo.MainWorktree(); main != "" {
		root = main
	}
	return filepath.Join(root, "ops", "runs")
}
