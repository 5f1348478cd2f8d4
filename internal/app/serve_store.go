package app

import (
	"context"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/urfave/cli/v2"
)

// openServeStore opens the store dome serve reads, as every dome action
// command does (openActionStore: git:PATH[#BRANCH], postgres://..., or
// "postgres" for $DATABASE_URL), and returns it with a description safe to
// log (no password).
func openServeStore(ctx context.Context, env *Env, c *cli.Context, url string) (action.Store, string, error) {
	s, err := openActionStore(ctx, env, url, repoTarget(c, env))
	if err != nil {
		return nil, "", err
	}
	switch st := s.(type) {
	case *actiongit.Store:
		return s, "git " + st.Repo().Path() + " " + st.Branch(), nil
	case *actionpg.Store:
		if !actionpg.IsURL(url) {
			url = env.Getenv(actionpg.EnvDatabaseURL)
		}
		return s, "postgres " + actionpg.Redact(url), nil
	}
	return s, "store", nil
}
