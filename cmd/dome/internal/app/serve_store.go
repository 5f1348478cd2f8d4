package app

import (
	"context"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// openServeStore opens the store dome serve reads: a PostgreSQL URL (--store,
// else DATABASE_URL when --store is not given), else the git store of
// openActionStore (git:PATH[#BRANCH], default --repo or the working
// directory). It returns the store and a description safe to log (no
// password).
func openServeStore(ctx context.Context, env *Env, c *cli.Context, url string) (action.Store, string, error) {
	src := "--store"
	if url == "" {
		if u := env.Getenv(actionpg.EnvDatabaseURL); u != "" {
			url, src = u, actionpg.EnvDatabaseURL
		}
	}
	if actionpg.IsURL(url) {
		s, err := actionpg.Open(ctx, url)
		if err != nil {
			return nil, "", &errkind.InputError{Source: src, Problem: err.Error(), Hint: "check the database URL and that the server is up"}
		}
		return s, "postgres " + actionpg.Redact(url), nil
	}
	s, err := openActionStore(ctx, env, url, globalString(c, flagRepo))
	if err != nil {
		return nil, "", err
	}
	desc := "store"
	if g, ok := s.(*actiongit.Store); ok {
		desc = "git " + g.Repo().Path() + " " + g.Branch()
	}
	return s, desc, nil
}
