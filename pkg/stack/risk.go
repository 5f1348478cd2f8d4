package stack

import (
	"sort"

	"github.com/dome-registry/dome/pkg/patch"
)

// Facts is what the coordinator reads off a diff with its policy.
type Facts struct {
	Touched     []string // old and new paths, sorted
	Risk        Risk
	Dependency  bool     // touches dependency manifests or lockfiles
	API         bool     // touches api_paths
	Forbidden   []string // touched paths matching forbidden_paths ("path (glob)")
	Hunks       int
	LinesChange int
}

// Risk score weights: a file counts 2, a hunk 1, ten changed lines 1, a
// dependency change 30, a lockfile 10, a migration 25, a binary diff 10, an
// API path 20. The class comes from the policy's thresholds.
const (
	weightFile      = 2
	weightHunk      = 1
	linesPerPoint   = 10
	weightDeps      = 30
	weightLockfile  = 10
	weightMigration = 25
	weightBinary    = 10
	weightAPI       = 20
)

// Assess computes a diff's facts under policy; diffBytes is the length of
// the canonical diff.
func Assess(p *patch.Patch, diffBytes int64, policy *Policy) Facts {
	f := Facts{Touched: patch.FileTouches(p)}
	r := &f.Risk
	r.SurfaceArea.Files = len(p.Files)
	r.SurfaceArea.Bytes = diffBytes
	for _, fd := range p.Files {
		if fd.Binary != nil {
			r.Binary = true
		}
		r.SurfaceArea.Hunks += len(fd.Hunks)
		for _, h := range fd.Hunks {
			for _, l := range h.Lines {
				switch l.Op {
				case '+':
					r.SurfaceArea.LinesAdded++
				case '-':
					r.SurfaceArea.LinesRemoved++
				}
			}
		}
	}
	for _, path := range f.Touched {
		if _, ok := matchAny(policy.DependencyFiles.Lockfiles, path); ok {
			r.LockfilesTouched, r.DepsTouched = true, true
		}
		if _, ok := matchAny(policy.DependencyFiles.Manifests, path); ok {
			r.DepsTouched = true
		}
		if _, ok := matchAny(policy.MigrationPaths, path); ok {
			r.Migration = true
		}
		if _, ok := matchAny(policy.APIPaths, path); ok {
			f.API = true
		}
		if g, ok := matchAny(policy.ForbiddenPaths, path); ok {
			f.Forbidden = append(f.Forbidden, path+" ("+g+")")
		}
	}
	sort.Strings(f.Forbidden)
	f.Dependency = r.DepsTouched
	f.Hunks = r.SurfaceArea.Hunks
	f.LinesChange = r.SurfaceArea.LinesAdded + r.SurfaceArea.LinesRemoved
	score := weightFile*r.SurfaceArea.Files + weightHunk*r.SurfaceArea.Hunks + f.LinesChange/linesPerPoint
	if r.DepsTouched {
		score += weightDeps
	}
	if r.LockfilesTouched {
		score += weightLockfile
	}
	if r.Migration {
		score += weightMigration
	}
	if r.Binary {
		score += weightBinary
	}
	if f.API {
		score += weightAPI
	}
	r.Score = score
	r.Class = policy.RiskClass(score)
	return f
}
