package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/agentlock"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

func newAgentCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "agent profiles of the registry (list, show, select) and an agent's MCP server lock (validate, discover, resolve)",
		Subcommands: []*cli.Command{
			newAgentValidateCommand(env),
			newAgentDiscoverCommand(env),
			newAgentResolveCommand(env),
			newAgentListCommand(env),
			newAgentShowCommand(env),
			newAgentSelectCommand(env),
		},
		Description: help("agent"),
	}
}

// registryIndexPaths are the MCP index locations in a registry repository,
// tried in order (the registry sits in registry/ or at the root, as
// registry tools do).
func registryIndexPaths() []string { return []string{"registry/mcp/index.json", "mcp/index.json"} }

// agentInputs are the flags every agent command shares.
type agentInputs struct {
	Agents   string // agents.md
	Index    string // a local index file
	IndexSet bool   // --index given explicitly
	IndexRef string // read the index from the registry at this ref
}

func agentInputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agents", Value: "agents.md", Usage: "the agent's `FILE` (YAML frontmatter + Markdown)"},
		&cli.StringFlag{Name: "index", Value: "mcp.index.json", Usage: "the MCP server index `FILE`"},
		&cli.StringFlag{Name: "index-ref", Usage: "read registry/mcp/index.json from the --repo registry at `REF` (pinned to its commit) instead of --index"},
	}
}

func readAgentInputs(c *cli.Context) (agentInputs, error) {
	in := agentInputs{Agents: c.String("agents"), Index: c.String("index"), IndexSet: c.IsSet("index"), IndexRef: c.String("index-ref")}
	if in.IndexSet && in.IndexRef != "" {
		return in, usagef("give either --index FILE or --index-ref REF, not both")
	}
	return in, nil
}

// loadAgent reads and parses agents.md.
func loadAgent(env *Env, in agentInputs) (*agentlock.Agent, error) {
	data, err := readlimit.ReadFile(absPath(env, in.Agents), readlimit.Profile)
	if err != nil {
		return nil, &errkind.InputError{Source: in.Agents, Problem: readProblem(err), Err: err, Hint: "run in the agent's folder or pass --agents FILE"}
	}
	return agentlock.ParseAgents(in.Agents, data)
}

func readProblem(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadAgentIndex reads the index from the file or, with --index-ref, from
// the registry at a pinned commit. ok is false when the default index file
// is absent and missingOK is set.
func loadAgentIndex(ctx context.Context, env *Env, c *cli.Context, in agentInputs, missingOK bool) (idx *agentlock.Index, origin agentlock.Origin, name string, ok bool, err error) {
	if in.IndexRef != "" {
		idx, origin, name, err = loadRegistryIndex(ctx, env, c, in.IndexRef)
		return idx, origin, name, err == nil, err
	}
	data, err := readlimit.ReadFile(absPath(env, in.Index), readlimit.Document)
	if err != nil {
		if missingOK && !in.IndexSet && errors.Is(err, fs.ErrNotExist) {
			return nil, origin, in.Index, false, nil
		}
		return nil, origin, in.Index, false, &errkind.InputError{Source: in.Index, Problem: readProblem(err), Err: err,
			Hint: "pass --index FILE, or --index-ref REF to read registry/mcp/index.json from the registry"}
	}
	idx, err = agentlock.ParseIndex(in.Index, data)
	if err != nil {
		return nil, origin, in.Index, false, err
	}
	return idx, agentlock.Origin{Digest: idx.Digest}, in.Index, true, nil
}

func loadRegistryIndex(ctx context.Context, env *Env, c *cli.Context, ref string) (*agentlock.Index, agentlock.Origin, string, error) {
	if _, err := registry.ParseRef("--index-ref", "mcp@"+ref); err != nil {
		return nil, agentlock.Origin{}, "", err
	}
	reg, err := openRegistry(ctx, env, c)
	if err != nil {
		return nil, agentlock.Origin{}, "", err
	}
	p, err := reg.PinRev(ctx, "", ref, registry.PinOptions{Source: "--index-ref", Display: "index@" + ref})
	if err != nil {
		return nil, agentlock.Origin{}, "", err
	}
	repo := reg.Repo()
	for _, path := range registryIndexPaths() {
		e, err := repo.EntryAt(p.Tree, path)
		if errors.Is(err, gitstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, agentlock.Origin{}, "", fmt.Errorf("read %s at %s: %w", path, p.Commit.Short(), err)
		}
		if !e.Mode.IsRegular() {
			return nil, agentlock.Origin{}, "", &errkind.InputError{Source: path + "@" + p.Commit.Short(), Problem: "not a file", Hint: "registry/mcp/index.json must be a regular file"}
		}
		data, err := repo.ReadBlob(e.Hash)
		if err != nil {
			return nil, agentlock.Origin{}, "", fmt.Errorf("read %s at %s: %w", path, p.Commit.Short(), err)
		}
		name := path + "@" + p.Commit.Short()
		idx, err := agentlock.ParseIndex(name, data)
		if err != nil {
			return nil, agentlock.Origin{}, "", err
		}
		return idx, agentlock.Origin{Path: path, Commit: p.Commit.String(), Digest: idx.Digest}, name, nil
	}
	return nil, agentlock.Origin{}, "", &errkind.InputError{Source: "--index-ref", Problem: fmt.Sprintf("no MCP index at %s (%s): neither %s nor %s exists", ref, p.Commit.Short(), registryIndexPaths()[0], registryIndexPaths()[1]),
		Hint: "commit the index as registry/mcp/index.json, or use a local --index FILE"}
}

// agentDir is the folder of agents.md, where the lock is written by default.
func agentDir(env *Env, in agentInputs) string { return filepath.Dir(absPath(env, in.Agents)) }
