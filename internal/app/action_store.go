package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/urfave/cli/v2"
)

// Where the action registry lives: --store URL (or $DOME_ACTION_STORE):
//
//	git:PATH[#BRANCH]   the git store in the repository at PATH (default: --repo,
//	                    else the repository containing the working directory) on
//	                    BRANCH (default actions, i.e. refs/heads/actions)
//	#BRANCH             the same with the default repository
//	postgres://...      the PostgreSQL store (also postgresql:// and the
//	                    postgresql+psycopg://)
//	postgres            the PostgreSQL store at $DATABASE_URL
const actionStoreHint = "give --store git:PATH[#BRANCH] (a local repository; default: --repo or the working directory, branch actions) or --store postgres://USER@HOST/DB"

// actionStoreFlag is the --store flag of the action commands.
func actionStoreFlag() cli.Flag {
	return &cli.StringFlag{Name: "store", EnvVars: []string{"DOME_ACTION_STORE"}, Usage: "action store `URL`: git:PATH[#BRANCH] (default: --repo, branch actions) or postgres://..."}
}

// trustedFlag is the --trusted flag of the action commands.
func trustedFlag() cli.Flag {
	return &cli.StringFlag{Name: "trusted", Usage: "trusted keys `FILE` (else $TRUSTED_KEYS_PATH, else $TRUSTED_KEYS_JSON)"}
}

// actionStoreSpec is a parsed --store value.
type actionStoreSpec struct {
	Kind   string // "git" or "postgres"
	Path   string // git: repository path ("" = --repo / working directory)
	Branch string // git: branch ("" = actiongit.DefaultBranch)
	URL    string // postgres: the connection URL
}

// parseActionStoreURL parses a --store value.
func parseActionStoreURL(u string) (actionStoreSpec, error) {
	switch {
	case u == "":
		return actionStoreSpec{Kind: "git"}, nil
	case actionpg.IsURL(u):
		return actionStoreSpec{Kind: "postgres", URL: u}, nil
	case u == "postgres" || u == "postgres:" || u == "postgresql":
		return actionStoreSpec{Kind: "postgres"}, nil // $DATABASE_URL
	case strings.HasPrefix(u, "git:"), strings.HasPrefix(u, "#"):
		rest := strings.TrimPrefix(u, "git:")
		path, branch, _ := strings.Cut(rest, "#")
		if strings.Contains(path, "://") {
			return actionStoreSpec{}, &errkind.InputError{Source: "--store " + u, Problem: "the git action store needs a local repository path, not a URL", Hint: "clone the registry and give git:PATH"}
		}
		if branch != "" {
			if _, err := actiongit.NormalizeBranch(branch); err != nil {
				return actionStoreSpec{}, &errkind.InputError{Source: "--store " + u, Problem: err.Error(), Hint: actionStoreHint}
			}
		}
		return actionStoreSpec{Kind: "git", Path: path, Branch: branch}, nil
	}
	return actionStoreSpec{}, &errkind.InputError{Source: "--store " + u, Problem: "unknown store URL scheme", Hint: actionStoreHint}
}

// openActionStore opens the action store named by storeURL (see above).
// repoFlag is --repo, the default repository of a git store. The git store
// commits at createdAt's time (SOURCE_DATE_EPOCH pins it).
func openActionStore(ctx context.Context, env *Env, storeURL, repoFlag string) (action.Store, error) {
	return openActionStoreFor(ctx, env, storeURL, repoFlag, false)
}

// openActionStoreFor is openActionStore; with create, a git:PATH that does
// not exist yet becomes a new bare repository (dome action publish).
func openActionStoreFor(ctx context.Context, env *Env, storeURL, repoFlag string, create bool) (action.Store, error) {
	spec, err := parseActionStoreURL(storeURL)
	if err != nil {
		return nil, err
	}
	switch spec.Kind {
	case "postgres":
		return openPostgresActionStore(ctx, env, spec)
	}
	return openGitActionStore(ctx, env, spec, repoFlag, create)
}

// openPostgresActionStore connects to the PostgreSQL store (--store URL, or
// $DATABASE_URL for --store postgres) and applies its migrations. A
// DATABASE_URL alone never selects it: dome creates tables where it is
// pointed, so it must be pointed on purpose.
func openPostgresActionStore(ctx context.Context, env *Env, spec actionStoreSpec) (*actionpg.Store, error) {
	url, source := spec.URL, "--store"
	if url == "" {
		url, source = env.Getenv(actionpg.EnvDatabaseURL), "$"+actionpg.EnvDatabaseURL
		if url == "" {
			return nil, &errkind.InputError{Source: "--store postgres", Problem: "$DATABASE_URL is not set", Hint: "set DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB, or give --store postgres://..."}
		}
		if !actionpg.IsURL(url) && !strings.Contains(url, "=") {
			return nil, &errkind.InputError{Source: source, Problem: "not a PostgreSQL URL: " + actionpg.Redact(url), Hint: "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB"}
		}
	}
	s, err := actionpg.Open(ctx, url)
	if err != nil {
		if errors.Is(err, actionpg.ErrBadURL) {
			return nil, &errkind.InputError{Source: source, Problem: err.Error(), Err: err, Hint: "postgres://USER:PASSWORD@HOST:5432/DB"}
		}
		return nil, fmt.Errorf("PostgreSQL action store: %w", err)
	}
	return s, nil
}

func openGitActionStore(_ context.Context, env *Env, spec actionStoreSpec, repoFlag string, create bool) (*actiongit.Store, error) {
	if _, err := createdAt(env, ""); err != nil { // a bad SOURCE_DATE_EPOCH fails now, not at commit time
		return nil, err
	}
	path, source := spec.Path, "--store git:"+spec.Path
	if path == "" {
		path, source = repoFlag, "--repo"
		if path == "" {
			path, source = env.WorkDir, "working directory"
		}
		if gitstore.IsURL(path) {
			return nil, &errkind.InputError{Source: source, Problem: "the git action store needs a local repository, not " + path, Hint: actionStoreHint}
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	if _, err := os.Stat(path); create && spec.Path != "" && errors.Is(err, os.ErrNotExist) {
		r, err := gitstore.Init(path)
		if err != nil {
			return nil, &errkind.InputError{Source: source, Problem: err.Error(), Hint: actionStoreHint}
		}
		r.Close()
		fmt.Fprintf(env.Stderr, "initialized an empty bare repository for the action store at %s\n", spec.Path)
	}
	s, err := actiongit.Open(path, actiongit.Options{
		Branch: spec.Branch,
		Now: func() time.Time {
			t, _ := createdAt(env, "")
			return t
		},
	})
	if err != nil {
		if errors.Is(err, gitstore.ErrNotRepository) {
			return nil, &errkind.InputError{Source: source, Problem: "not a git repository: " + path, Err: err, Hint: "create one with git init --bare PATH, or " + actionStoreHint}
		}
		return nil, &errkind.InputError{Source: source, Problem: err.Error(), Err: err, Hint: actionStoreHint}
	}
	return s, nil
}

// actionStoreFromFlags opens the store of a command's --store and --repo.
func actionStoreFromFlags(c *cli.Context, env *Env) (action.Store, error) {
	return openActionStore(c.Context, env, c.String("store"), repoTarget(c, env))
}

// describeStore names a store in human output: "git refs/heads/actions at abc1234".
func describeStore(s action.Store) string {
	if g, ok := s.(*actiongit.Store); ok {
		head, err := g.Head()
		if err != nil || head.IsZero() {
			return fmt.Sprintf("git %s (empty)", g.Branch())
		}
		return fmt.Sprintf("git %s at %s", g.Branch(), head.Short())
	}
	if p, ok := s.(*actionpg.Store); ok {
		return p.String()
	}
	return "store"
}

// actionStoreError maps a store error to dome's exit codes: not found and
// invalid input are input errors (exit 2), a conflict or a failed signature a
// failed check (exit 1).
func actionStoreError(source string, err error) error {
	switch {
	case errors.Is(err, action.ErrActionNotFound), errors.Is(err, action.ErrVersionNotFound):
		code := action.ErrActionNotFound.Error()
		if errors.Is(err, action.ErrVersionNotFound) {
			code = action.ErrVersionNotFound.Error()
		}
		return &errkind.InputError{Source: source, Problem: strings.TrimSuffix(err.Error(), ": "+code) + " (" + code + ")", Err: err, Hint: "list what is published with dome action list"}
	case errors.Is(err, action.ErrInvalid), errors.Is(err, actiongit.ErrCheckedOut):
		return &errkind.InputError{Source: source, Problem: err.Error(), Err: err}
	case errors.Is(err, action.ErrImmutableConflict):
		return &errkind.CheckError{Problem: source + ": " + err.Error(), Details: []string{"code: " + action.ErrImmutableConflict.Error()}, Hint: "a published (name, version) never changes: publish the new content under a new version"}
	case errors.Is(err, action.ErrUnknownKeyID), errors.Is(err, action.ErrBadSignature):
		code := action.ErrBadSignature.Error()
		if errors.Is(err, action.ErrUnknownKeyID) {
			code = action.ErrUnknownKeyID.Error()
		}
		return &errkind.CheckError{Problem: source + ": " + err.Error(), Details: []string{"code: " + code}}
	}
	return fmt.Errorf("%s: %w", source, err)
}
