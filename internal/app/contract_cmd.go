package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/aicontract"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

// contractCatalogPath is where a repository keeps the contract catalog.
const contractCatalogPath = "policy/contracts"

func newContractCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "contract",
		Usage: "compile a command, a project's rules and its stack into a contract text for an AI assistant",
		Subcommands: []*cli.Command{
			newContractResolveCommand(env),
			newContractListCommand(env),
		},
		Description: help("contract"),
	}
}

func contractSourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "catalog", Value: contractCatalogPath, Usage: "read the catalog from `DIR`"},
		&cli.StringFlag{Name: "ref", Usage: "read policy/contracts/ from the --repo repository at `REF` (pinned to its commit) instead of --catalog"},
	}
}

// contractSource opens the catalog: --ref (a git tree at a pinned commit)
// or --catalog (a directory).
func contractSource(ctx context.Context, env *Env, c *cli.Context) (aicontract.Source, *aicontract.CatalogRef, error) {
	ref := c.String("ref")
	if ref != "" && c.IsSet("catalog") {
		return nil, nil, usagef("give either --catalog DIR or --ref REF, not both")
	}
	if ref == "" {
		dir := absPath(env, c.String("catalog"))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, nil, &errkind.InputError{Source: "--catalog", Problem: fmt.Sprintf("no catalog directory %s", c.String("catalog")),
				Hint: "run from a repository with policy/contracts/, pass --catalog DIR, or --ref REF to read it from git"}
		}
		return dirSource{dir: dir, shown: filepath.ToSlash(relTo(env.WorkDir, dir))}, nil, nil
	}
	if _, err := registry.ParseRef("--ref", "contracts@"+ref); err != nil {
		return nil, nil, err
	}
	reg, err := openRegistry(ctx, env, c)
	if err != nil {
		return nil, nil, err
	}
	p, err := reg.PinRev(ctx, "", ref, registry.PinOptions{Source: "--ref", Display: "contracts@" + ref})
	if err != nil {
		return nil, nil, err
	}
	e, err := reg.Repo().EntryAt(p.Tree, contractCatalogPath)
	if err != nil || !e.Mode.IsDir() {
		return nil, nil, &errkind.InputError{Source: "--ref", Problem: fmt.Sprintf("no %s/ at %s (%s)", contractCatalogPath, ref, p.Commit.Short()), Hint: "commit the catalog, or use --catalog DIR"}
	}
	return treeSource{repo: reg.Repo(), tree: p.Tree, short: p.Commit.Short()},
		&aicontract.CatalogRef{Path: contractCatalogPath, Ref: ref, Commit: p.Commit.String()}, nil
}

// dirSource reads the catalog from a directory.
type dirSource struct{ dir, shown string }

func (s dirSource) ReadFile(name string) ([]byte, error) {
	return readlimit.ReadFile(filepath.Join(s.dir, filepath.FromSlash(name)), readlimit.Profile)
}

func (s dirSource) List(dir string) ([]string, error) {
	es, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range es {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s dirSource) Name(name string) string { return path.Join(s.shown, name) }

// treeSource reads the catalog from policy/contracts/ in a git tree.
type treeSource struct {
	repo  *gitstore.Repo
	tree  gitstore.Hash
	short string
}

func (s treeSource) entry(name string) (gitstore.TreeEntry, error) {
	e, err := s.repo.EntryAt(s.tree, path.Join(contractCatalogPath, name))
	if errors.Is(err, gitstore.ErrNotFound) {
		return e, fmt.Errorf("%s: %w", s.Name(name), fs.ErrNotExist)
	}
	return e, err
}

func (s treeSource) ReadFile(name string) ([]byte, error) {
	e, err := s.entry(name)
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsRegular() {
		return nil, fmt.Errorf("%s: not a file: %w", s.Name(name), fs.ErrNotExist)
	}
	return s.repo.ReadBlob(e.Hash)
}

func (s treeSource) List(dir string) ([]string, error) {
	e, err := s.entry(dir)
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsDir() {
		return nil, fmt.Errorf("%s: not a directory: %w", s.Name(dir), fs.ErrNotExist)
	}
	es, err := s.repo.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, x := range es {
		if x.Mode.IsRegular() {
			names = append(names, x.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s treeSource) Name(name string) string {
	return path.Join(contractCatalogPath, name) + "@" + s.short
}

// joinIDs writes ids comma-separated, or "-" when there are none.
func joinIDs(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}
