package codegen

import (
	"context"
	"runtime"
	"sort"
	"sync"

	"github.com/dome-registry/dome/pkg/registry"
)

// Job is one client to generate.
type Job struct {
	Tool     *registry.ToolResolution
	Profile  *registry.ProfileResolution
	Language string
}

// Key names the job like Client.Key.
func (j Job) Key() string { return j.Language + "/" + j.Tool.ToolID + "/" + j.Profile.ProfileID }

// Skipped is a tool a batch leaves out, and why.
type Skipped struct {
	ToolID string `json:"tool_id"`
	Reason string `json:"reason"`
}

// PlanAll lists every tool x profile x language of the registry at pin p
// (languages limited to langs when not empty), sorted by language, tool and
// profile. Tools without a generators.lock.json are skipped and reported.
func (g *Generator) PlanAll(p registry.Pin, langs []string) ([]Job, []Skipped, error) {
	ids, err := g.Reg.ToolIDs(p)
	if err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, l := range langs {
		want[l] = true
	}
	var jobs []Job
	var skipped []Skipped
	for _, id := range ids {
		t, err := g.Reg.ToolAt(registry.Ref{ID: id, Rev: p.Requested}, p)
		if err != nil {
			return nil, nil, err
		}
		tl, err := g.LockLanguages(t)
		if err != nil {
			return nil, nil, err
		}
		if tl == nil {
			skipped = append(skipped, Skipped{ToolID: id, Reason: "no " + registry.GeneratorsLockFile})
			continue
		}
		pids, err := g.Reg.ProfileIDs(id, p)
		if err != nil {
			return nil, nil, err
		}
		if len(pids) == 0 {
			skipped = append(skipped, Skipped{ToolID: id, Reason: "no profiles"})
			continue
		}
		for _, pid := range pids {
			pr, err := g.Reg.ProfileAt(id, pid, p)
			if err != nil {
				return nil, nil, err
			}
			for _, l := range tl {
				if len(want) == 0 || want[l] {
					jobs = append(jobs, Job{Tool: t, Profile: pr, Language: l})
				}
			}
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Key() < jobs[j].Key() })
	return jobs, skipped, nil
}

// Progress is told about each finished job (from one goroutine at a time).
type Progress func(done, total int, key string)

// GenerateAll runs jobs on workers goroutines (0: one per CPU). Results
// come back in job order; the first error (in job order) is returned after
// every job has finished. oapi-codegen calls are serialized inside; specs
// are loaded and filtered once per tool and profile.
func (g *Generator) GenerateAll(ctx context.Context, jobs []Job, workers int, progress Progress) ([]*Client, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]*Client, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				out[i], errs[i] = g.Generate(ctx, j.Tool, j.Profile, j.Language)
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(jobs), j.Key())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
