package app

import (
	"context"
	"strings"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// openServeStore opens the store dome serve reads: --store git:PATH or a
// PostgreSQL URL; without it DATABASE_URL, else the git repository of --repo
// (or the working directory). It returns the store and a description safe to
// log (no password).
func openServeStore(ctx context.Context, env *Env, c *cli.Context, url string) (action.Store, string, error) {
	const hint = "give --store git:PATH or --store postgres://USER:PASSWORD@HOST:PORT/DB (or set DATABASE_URL)"
	src := "--store"
	if url == "" {
		if u := env.Getenv(actionpg.EnvDatabaseURL); u != "" {
			url, src = u, actionpg.EnvDatabaseURL
		}
	}
	switch {
	case actionpg.IsURL(url):
		s, err := actionpg.Open(ctx, url)
		if err != nil {
			return nil, "", &errkind.InputError{Source: src, Problem: err.Error(), Hint: "check the database URL and that the server is up"}
		}
		return s, actionpg.Redact(url), nil
	case strings.HasPrefix(url, "git:"):
		path := absPath(env, strings.TrimPrefix(url, "git:"))
		s, err := actiongit.Open(path, actiongit.Options{})
		if err != nil {
			return nil, "", &errkind.InputError{Source: src + " " + url, Problem: err.Error(), Hint: hint}
		}
		return s, "git:" + path, nil
	case url == "":
		repo, err := openRepo(ctx, env, c)
		if err != nil {
			return nil, "", err
		}
		s, err := actiongit.New(repo, actiongit.Options{})
		if err != nil {
			repo.Close()
			return nil, "", err
		}
		return &ownedGitStore{s}, "git:" + repo.Path(), nil
	}
	return nil, "", &errkind.InputError{Source: src, Problem: "unknown store " + url, Hint: hint}
}

// ownedGitStore closes the repository it was given with the store.
type ownedGitStore struct{ *actiongit.Store }

func (s *ownedGitStore) Close() error { return s.Repo().Close() }
