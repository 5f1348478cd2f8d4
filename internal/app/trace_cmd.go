package app

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/trace"
	"github.com/urfave/cli/v2"
)

func newTraceCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "trace",
		Usage:       "requirement traceability: every requirement held by a check that ran and passed: check, matrix",
		Description: help("trace"),
		Subcommands: []*cli.Command{
			newTraceCheckCommand(env),
			newTraceMatrixCommand(env),
		},
	}
}

func traceCatalogFlag() cli.Flag {
	return &cli.StringFlag{Name: "catalog", Usage: "requirements catalogue `FILE` (default: <repo>/" + trace.CatalogPath + ")"}
}

func traceResultsFlag() cli.Flag {
	return &cli.StringFlag{Name: "results", Usage: "`FILE` of test results: a header line naming the commit, then the output of go test -json (make test TESTJSON=FILE writes one)"}
}

// traceInputs is a parsed catalogue, the repository's checks and, when
// asked for, the results of a test run at HEAD.
type traceInputs struct {
	Root    string
	Catalog *trace.Catalog
	Index   *trace.Index
	Results *trace.Results
}

// loadTrace reads the catalogue, indexes the repository it belongs to and
// reads --results, refusing results of another commit than HEAD.
func loadTrace(env *Env, c *cli.Context) (*traceInputs, error) {
	root := repoRoot(env, c)
	if root == "" {
		return nil, &errkind.InputError{Source: "--repo", Problem: "not inside a git repository worktree: the catalogue's checks are looked up in the repository's files",
			Hint: "work in a clone of the repository, or pass --repo DIR"}
	}
	in := &traceInputs{Root: root}
	path, source := filepath.Join(root, filepath.FromSlash(trace.CatalogPath)), trace.CatalogPath
	if f := c.String("catalog"); f != "" {
		path, source = absPath(env, f), f
	}
	data, err := readInputFile(env, path, trace.MaxCatalogBytes)
	if err != nil {
		var ie *errkind.InputError
		if errors.As(err, &ie) {
			ie.Source = source
			if c.String("catalog") == "" {
				ie.Hint = "this repository has no requirements catalogue at " + trace.CatalogPath + "; pass --catalog FILE"
			}
		}
		return nil, err
	}
	if in.Catalog, err = trace.ParseCatalog(source, data); err != nil {
		return nil, err
	}
	bc := build.Default
	if in.Index, err = trace.Scan(os.DirFS(root), in.Catalog, trace.ScanOptions{Build: &bc}); err != nil {
		return nil, &errkind.InputError{Source: root, Problem: err.Error(), Hint: "the repository root must hold the go.mod of the module whose tests the catalogue names"}
	}
	if f := c.String("results"); f != "" {
		if in.Results, err = loadResults(env, f); err != nil {
			return nil, err
		}
		head, err := headCommit(root)
		if err != nil {
			return nil, err
		}
		if err := in.Results.RequireCommit(head); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func loadResults(env *Env, arg string) (*trace.Results, error) {
	if arg == "-" {
		return trace.ParseResults("stdin", env.Stdin)
	}
	f, err := os.Open(absPath(env, arg))
	if err != nil {
		return nil, &errkind.InputError{Source: arg, Problem: "cannot read the results: " + pathErr(err), Hint: "make test TESTJSON=" + arg + " writes them"}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &errkind.InputError{Source: arg, Problem: "is a directory, not a results file"}
	}
	return trace.ParseResults(arg, f)
}

func headCommit(root string) (string, error) {
	repo, err := gitstore.Open(root)
	if err != nil {
		return "", &errkind.InputError{Source: root, Problem: err.Error()}
	}
	defer repo.Close()
	_, h, err := repo.Head()
	if err != nil {
		return "", &errkind.InputError{Source: root, Problem: "cannot tell the commit the results must be from: " + err.Error(), Hint: "commit first: results name the commit the tests ran at"}
	}
	return h.String(), nil
}
