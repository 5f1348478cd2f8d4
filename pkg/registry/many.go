package registry

import (
	"context"
	"runtime"
	"sort"
	"sync"
)

// Request is one lookup of ResolveMany: "tool@ref" and an optional "profile@ref".
type Request struct {
	Tool    string
	Profile string
}

// Result answers one Request; Err is set when it failed.
type Result struct {
	Tool    *ToolResolution
	Profile *ProfileResolution
	Err     error
}

type job struct {
	i          int
	tref, pref Ref
	tpin, ppin Pin
	order      uint64
}

// ResolveMany resolves many requests against one repository. It pins every
// request and finds its commit's tools/ tree first, then reads the trees in
// pack order: a pack stores a delta's base before the delta, so reading in
// that order resolves each big tree from one cached neighbour instead of a
// long delta chain. Results come back in request order.
func (r *Registry) ResolveMany(ctx context.Context, reqs []Request, opts PinOptions) []Result {
	if len(reqs) > 1 {
		r.repo.KeepDeltaChains()
	}
	out := make([]Result, len(reqs))
	var jobs []job
	r.beginBatch()
	for i, q := range reqs {
		j := job{i: i}
		var err error
		if j.tref, err = ParseRef("tool", q.Tool); err != nil {
			out[i].Err = err
			continue
		}
		if q.Profile != "" {
			if j.pref, err = ParseRef("--profile", q.Profile); err != nil {
				out[i].Err = err
				continue
			}
		}
		topts := opts
		topts.Source = "tool"
		if j.tpin, err = r.PinRev(ctx, j.tref.ID, j.tref.Rev, topts); err != nil {
			out[i].Err = err
			continue
		}
		if q.Profile != "" {
			popts := opts
			popts.Source, popts.Display = "--profile", j.pref.String()
			if j.ppin, err = r.PinRev(ctx, j.tref.ID, j.pref.Rev, popts); err != nil {
				out[i].Err = err
				continue
			}
		}
		j.order = ^uint64(0)
		if l, err := r.layoutAt(j.tpin); err == nil {
			j.order = r.repo.ReadOrder(l.toolsTree)
		}
		jobs = append(jobs, j)
	}
	if err := r.endBatch(); err != nil {
		// Another process remembered one of these tags elsewhere
		// meanwhile: every request read through a release tag fails.
		kept := jobs[:0]
		for _, j := range jobs {
			if j.tpin.Kind == KindRelease || j.ppin.Kind == KindRelease {
				out[j.i].Err = err
				continue
			}
			kept = append(kept, j)
		}
		jobs = kept
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].order < jobs[b].order })
	// Contiguous runs of the pack order per worker keep each worker's delta
	// chains local; results land in their request's slot, so order is kept.
	workers := min(runtime.GOMAXPROCS(0), 8, max(1, len(jobs)/64))
	var wg sync.WaitGroup
	chunk := (len(jobs) + workers - 1) / max(workers, 1)
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(jobs))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(part []job) {
			defer wg.Done()
			r.resolveJobs(part, out)
		}(jobs[lo:hi])
	}
	wg.Wait()
	return out
}

func (r *Registry) resolveJobs(jobs []job, out []Result) {
	for _, j := range jobs {
		t, err := r.ToolAt(j.tref, j.tpin)
		if err != nil {
			out[j.i].Err = err
			continue
		}
		out[j.i].Tool = t
		if j.pref.ID != "" {
			p, err := r.ProfileAt(j.tref.ID, j.pref.ID, j.ppin)
			if err != nil {
				out[j.i] = Result{Err: err}
				continue
			}
			out[j.i].Profile = p
		}
	}
}
