package front

import (
	"errors"
	"runtime/debug"
	"strconv"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// patchGCPercent is the collector's pace while a series is applied: the
// series makes garbage at the pace of its patches' files, and a smaller
// heap is what the front applies series for (git am runs in about 6 MB;
// 25 keeps the heap within a quarter of what is live).
const patchGCPercent = 25

// patchCacheBytes bounds the cache of delta bases: a series reads most
// base files once.
const patchCacheBytes = 256 << 10

// patchApply is dome patch apply, which the front runs so that a long
// series is applied in a process of a few megabytes (the full command
// set's code alone touches some 19 MB). It hands the command line to the
// full command set, before printing or storing anything, when the series
// needs what only that has: the --commit branch checked out in a worktree
// (the worktree moves with it), or mail in a charset other than UTF-8 and
// ASCII (pkg/patch/charsets).
func patchApply(env Env, cl commandLine, full Full) int {
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(patchGCPercent)
	}
	repo, err := readcmd.OpenLocal(env.WorkDir, cl.repo)
	if err != nil {
		return report(env, err)
	}
	repo.LimitCache(patchCacheBytes)
	opts := patchcmd.ApplyOptions{Patches: cl.args, Base: cl.flags["base"], ThreeWay: hasFlag(cl.flags, "three-way"),
		WriteConflicts: hasFlag(cl.flags, "write-conflicts"), Strip: -1, MaxSize: patch.DefaultMaxBytes,
		Commit: cl.flags["commit"], Message: cl.flags["m"], JSON: cl.json}
	opts.Fuzz, _ = strconv.Atoi(cl.flags["fuzz"])
	if p, ok := cl.flags["p"]; ok {
		opts.Strip, _ = strconv.Atoi(p)
	}
	if m, ok := cl.flags["max-size"]; ok {
		opts.MaxSize, _ = strconv.ParseInt(m, 10, 64)
	}
	if ref := patchcmd.CommitRef(opts.Commit); ref != "" && gitstore.CheckRefName(ref) == nil {
		if wts, err := repo.CheckedOut(ref); err != nil || len(wts) > 0 {
			repo.Close()
			return full(env.Args)
		}
	}
	s, err := patchcmd.Scan(&env.Env, opts)
	if errors.Is(err, patch.ErrNoCharsets) {
		repo.Close()
		return full(env.Args)
	}
	if err != nil {
		repo.Close()
		return report(env, err)
	}
	defer repo.Close()
	return report(env, s.Apply(repo, patchcmd.MoveUnchecked))
}
