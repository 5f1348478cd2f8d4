package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// ValidateOptions controls ValidateHead.
type ValidateOptions struct {
	ApplyOptions          // policy, time, producer (and what reconciliation needs)
	Tier         string   // a tier of the policy
	Env          []string // the commands' whole environment
	Tools        []string // tools to record besides each command's argv[0]
	ImageDigest  string   // the container image the commands ran in, if any
	TempDir      string   // where the head is materialized (a new folder inside)
	Keep         bool     // keep the materialized head
}

// ValidateResult is what ValidateHead did.
type ValidateResult struct {
	Report     ValidationReport `json:"report"`
	Path       string           `json:"path"` // relative to the run directory
	Digest     string           `json:"artifact_digest"`
	Dir        string           `json:"dir,omitempty"` // the materialized head, when kept
	Reconciled ReconcileReport  `json:"reconciled"`
}

// ValidateHead materializes the integration head of r into a temporary
// folder, runs the commands of the policy tier there (each in its own
// process group with its time limit), and records a ValidationReport bound
// to the head, its tree, the proposals it holds (in stack order), the
// environment (tool versions and binary digests, the image digest) and the
// policy, as a stack.validation.recorded event. A failing command makes a
// report that does not pass; it is recorded all the same.
func ValidateHead(ctx context.Context, repo *gitstore.Repo, r *Run, opts ValidateOptions) (*ValidateResult, error) {
	s, err := newStacker(repo, r, opts.ApplyOptions)
	if err != nil {
		return nil, err
	}
	res := &ValidateResult{}
	p := s.opts.Policy
	tier, ok := p.Validation.Tiers[opts.Tier]
	if !ok {
		return nil, &errkind.InputError{Source: "--tier", Field: opts.Tier, Problem: "the stack policy has no such tier",
			Hint: "tiers: " + strings.Join(sortedKeys(p.Validation.Tiers), ", ")}
	}
	if res.Reconciled, err = s.reconcile(); err != nil {
		return res, err
	}
	st := &r.State
	head := s.head
	tmp, err := os.MkdirTemp(opts.TempDir, "dome-validate-"+st.RunID+"-")
	if err != nil {
		return res, fmt.Errorf("validate: %w", err)
	}
	dir := filepath.Join(tmp, "head")
	if opts.Keep {
		res.Dir = dir
	} else {
		defer os.RemoveAll(tmp)
	}
	if _, err := Materialize(repo, head, dir); err != nil {
		return res, err
	}
	specs := make([]RunSpec, len(tier.Commands))
	tools := append([]string{}, opts.Tools...)
	for i, c := range tier.Commands {
		secs := c.TimeoutSeconds
		if secs <= 0 {
			secs = tier.TimeoutSeconds
		}
		specs[i] = RunSpec{Name: c.Name, Argv: c.Argv, Timeout: time.Duration(secs) * time.Second}
		if len(c.Argv) > 0 && !strings.Contains(c.Argv[0], "/") {
			tools = append(tools, c.Argv[0])
		}
	}
	runs := RunCommands(ctx, specs, RunOptions{Dir: dir, Env: opts.Env})
	probed := ProbeEnvironment(ctx, tools, opts.Env, opts.ImageDigest)
	rep := ValidationReport{RunID: st.RunID, WaveID: st.WaveID, Tier: opts.Tier, HeadRef: head.String(), Tree: s.headTree.String(),
		ProposalIDs: st.AppliedIDs(), Passed: len(runs) > 0, Commands: []CommandResult{}, PolicyDigest: p.Digest(),
		Environment: Environment{Tools: map[string]string{}, ToolDigests: map[string]string{}, ImageDigest: probed.ImageDigest, OS: probed.OS, Arch: probed.Arch}}
	if n := len(st.Applied); n > 0 && st.Applied[n-1].CheckpointID == rep.HeadRef {
		rep.CheckpointID = rep.HeadRef
	}
	for _, x := range runs {
		rep.Passed = rep.Passed && x.Passed
		rep.Commands = append(rep.Commands, CommandResult{Name: x.Name, Argv: x.Argv, ExitCode: x.ExitCode, TimedOut: x.TimedOut,
			DurationMS: x.DurationMS, OutputDigest: x.OutputDigest, OutputTail: x.OutputTail, StdoutDigest: x.StdoutDigest,
			StderrDigest: x.StderrDigest, TimeLimitMS: x.TimeLimitMS, Error: x.Error})
	}
	for _, t := range probed.Tools {
		v := t.Version
		if t.Error != "" {
			v = "unavailable: " + t.Error
		}
		rep.Environment.Tools[t.Name] = v
		if t.Digest != "" {
			rep.Environment.ToolDigests[t.Name] = t.Digest
		}
	}
	b, _ := canonical.Marshal(map[string]any{"run_id": st.RunID, "tier": opts.Tier, "head_ref": rep.HeadRef, "sequence": st.Sequence + 1})
	rep.ReportID = "validation-" + opts.Tier + "-" + canonical.Digest(b)[len("sha256:"):][:16]
	h := NewHeader(KindValidationReport, rep.ReportID, st.RunID, st.WaveID, rep.HeadRef, s.opts.CreatedAt, s.opts.Producer)
	doc, _, err := Seal(h, rep, nil)
	if err != nil {
		return res, err
	}
	digest, rel, err := r.WriteArtifact(r.Layout.ValidationReportPath(rep.ReportID), doc)
	if err != nil {
		return res, err
	}
	if _, err := r.Record(TopicValidationRecorded, s.opts.CreatedAt, ValidationRecordedPayload{ReportID: rep.ReportID, Tier: rep.Tier,
		HeadRef: rep.HeadRef, Tree: rep.Tree, ProposalIDs: rep.ProposalIDs, Passed: rep.Passed, Path: rel, ArtifactDigest: digest}); err != nil {
		return res, err
	}
	res.Report, res.Path, res.Digest = rep, rel, digest
	return res, nil
}

// FailedCommands names the commands of rep that did not pass, sorted.
func FailedCommands(rep ValidationReport) []string {
	var out []string
	for _, c := range rep.Commands {
		switch {
		case c.TimedOut:
			out = append(out, fmt.Sprintf("%s: timed out after %d ms", c.Name, c.TimeLimitMS))
		case c.Error != "":
			out = append(out, fmt.Sprintf("%s: %s", c.Name, c.Error))
		case c.ExitCode != 0:
			out = append(out, fmt.Sprintf("%s: exit code %d", c.Name, c.ExitCode))
		}
	}
	sort.Strings(out)
	return out
}
