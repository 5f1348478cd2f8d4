package release

import (
	"context"
	"fmt"
	"sort"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/contracttest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
)

// ReproduceFunc proves, for a tool at its pinned commit, that generation
// reproduces and contract tests pass, and returns the client artifact hashes
// keyed "<lang>/<profile>".
type ReproduceFunc func(ctx context.Context, t *registry.ToolResolution, filtered map[string]Filtered) (map[string]string, error)

// Reproducer returns the check a release (and release verification) runs at
// the tool's commit: every client of every profile and language target of the
// tool's generators.lock.json is generated, and the tool's contract tests pass
// for each profile. A tool without generators.lock.json has no clients to
// record. onReport, when set, sees every contract-test report (the CLI warns
// about skipped checks there).
func Reproducer(reg *registry.Registry, domeVersion string, tc contracttest.Options, onReport func(*contracttest.Report)) ReproduceFunc {
	return func(ctx context.Context, t *registry.ToolResolution, filtered map[string]Filtered) (map[string]string, error) {
		g := &codegen.Generator{Reg: reg, DomeVersion: domeVersion}
		langs, err := g.LockLanguages(t)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		if len(langs) == 0 {
			return out, nil
		}
		cases, err := contracttest.LoadCases(reg, t)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(filtered))
		for id := range filtered {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var failures []string
		for _, id := range ids {
			jobs := make([]codegen.Job, 0, len(langs))
			for _, l := range langs {
				jobs = append(jobs, codegen.Job{Tool: t, Profile: filtered[id].Profile, Language: l})
			}
			clients, err := g.GenerateAll(ctx, jobs, 0, nil)
			if err != nil {
				return nil, err
			}
			for _, c := range clients {
				out[c.Language+"/"+id] = c.Manifest.ClientArtifactHash
			}
			if len(cases) == 0 {
				continue
			}
			rep, err := contracttest.Run(ctx, tc, t.ToolID, id, filtered[id].Result, cases, clients)
			if err != nil {
				return nil, err
			}
			if onReport != nil {
				onReport(rep)
			}
			failures = append(failures, ReportProblems(rep)...)
		}
		if len(failures) > 0 {
			return nil, &errkind.CheckError{
				Problem: fmt.Sprintf("contract tests of %s at %s failed:", t.ToolID, t.Commit.Short()),
				Details: failures,
				Hint:    "run dome contract-test " + t.ToolID + "@" + t.Commit.String() + " --profile <profile>",
			}
		}
		return out, nil
	}
}

// ReportProblems lists a contract-test report's failures, one line each.
func ReportProblems(rep *contracttest.Report) []string {
	var out []string
	for _, c := range rep.Cases {
		if c.Status != contracttest.Fail {
			continue // an excluded case says why, which is not a failure
		}
		for _, p := range c.Problems {
			out = append(out, fmt.Sprintf("case %s (%s): %s", c.Name, c.File, p))
		}
	}
	for _, c := range rep.Checks {
		if c.Status == contracttest.Fail {
			for _, p := range c.Problems {
				out = append(out, fmt.Sprintf("%s %s: %s", c.Language, c.Name, p))
			}
		}
	}
	return out
}
