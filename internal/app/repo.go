package app

import (
	"context"
	"io"
	"path/filepath"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitremote"
	"github.com/dome-registry/dome/pkg/knowntags"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

// openRepo opens --repo (a path or a URL; default: the repository containing
// the working directory).
func openRepo(ctx context.Context, env *Env, c *cli.Context) (*gitstore.Repo, error) {
	target := repoTarget(c, env)
	if target != "" && gitstore.IsURL(target) {
		var progress io.Writer
		if env.StderrTTY && !globalBool(c, flagQuiet) {
			progress = env.Stderr
		}
		repo, err := gitremote.Open(ctx, target, gitremote.Options{CacheDir: cacheDir(env), Progress: progress})
		if err != nil {
			return nil, &errkind.InputError{Source: "--repo", Problem: err.Error(), Err: err, Hint: "check the URL, your network and credentials"}
		}
		return repo, nil
	}
	return readcmd.OpenLocal(env.WorkDir, target)
}

// openRegistry opens the registry of --repo.
func openRegistry(ctx context.Context, env *Env, c *cli.Context) (*registry.Registry, error) {
	repo, err := openRepo(ctx, env, c)
	if err != nil {
		return nil, err
	}
	return readcmd.Registry(repo, env.Getenv, env.WorkDir, env.Stderr), nil
}

// knownTags opens the memory of release tags; a failure to write it is a
// warning (once), never a reason not to read the registry.
func knownTags(env *Env) *knowntags.Store {
	return readcmd.KnownTags(env.Getenv, env.WorkDir, env.Stderr)
}

// cacheDir is $XDG_CACHE_HOME/dome, or ~/.cache/dome.
func cacheDir(env *Env) string {
	if d := env.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "dome")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "dome")
	}
	return filepath.Join(env.WorkDir, ".dome-cache")
}

// absPath resolves p against the working directory.
func absPath(env *Env, p string) string { return readcmd.AbsPath(env.WorkDir, p) }
