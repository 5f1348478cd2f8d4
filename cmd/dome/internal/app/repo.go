package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

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
	target := globalString(c, flagRepo)
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
	path := target
	if path == "" {
		path = env.WorkDir
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	repo, err := gitstore.Open(path)
	if err != nil {
		if errors.Is(err, gitstore.ErrNotRepository) {
			src := "--repo"
			if target == "" {
				src = "working directory"
			}
			return nil, &errkind.InputError{Source: src, Problem: "not a git repository: " + path, Err: err, Hint: "run dome inside a registry repository or pass --repo PATH|URL"}
		}
		return nil, &errkind.InputError{Source: "--repo", Problem: err.Error(), Err: err}
	}
	return repo, nil
}

// openRegistry opens the registry of --repo.
func openRegistry(ctx context.Context, env *Env, c *cli.Context) (*registry.Registry, error) {
	repo, err := openRepo(ctx, env, c)
	if err != nil {
		return nil, err
	}
	reg := registry.New(repo)
	if m := knownTags(env); m != nil {
		reg.SetTagMemory(m)
	}
	return reg, nil
}

// knownTagsPath is the file of the release tags dome has read:
// $DOME_KNOWN_TAGS, else $XDG_STATE_HOME/dome/known-tags, else
// ~/.local/state/dome/known-tags; "" without a home folder.
func knownTagsPath(env *Env) string {
	if p := env.Getenv("DOME_KNOWN_TAGS"); p != "" {
		return absPath(env, p)
	}
	if d := env.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dome", "known-tags")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "dome", "known-tags")
	}
	return ""
}

// knownTags opens the memory of release tags; a failure to write it is a
// warning (once), never a reason not to read the registry.
func knownTags(env *Env) *knowntags.Store {
	p := knownTagsPath(env)
	if p == "" {
		return nil
	}
	s := knowntags.Open(p)
	warned := false
	s.OnWriteError = func(err error) {
		if !warned {
			warned = true
			fmt.Fprintf(env.Stderr, "dome: warning: %v (set DOME_KNOWN_TAGS to a writable file)\n", err)
		}
	}
	return s
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
func absPath(env *Env, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(env.WorkDir, p)
}
