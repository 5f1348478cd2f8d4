package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type actionLockOptions struct {
	Requests []string
	Out      string
	Check    bool
	JSON     bool
	Quiet    bool
}

func newActionLockCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "lock",
		Usage:     "pin actions to exact verified versions in actions.lock",
		ArgsUsage: "[NAME@RANGE...]",
		Flags: withGlobal(
			actionStoreFlag(), trustedFlag(),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: action.LockFileName, Usage: "lock `FILE`"},
			&cli.BoolFlag{Name: "check", Usage: "check the lock file instead of writing it (for CI)"},
		),
		Action: func(c *cli.Context) error {
			opts := actionLockOptions{Requests: c.Args().Slice(), Out: c.String("out"), Check: c.Bool("check"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}
			keys, _, err := loadTrustedKeys(env, c.String("trusted"))
			if err != nil {
				return err
			}
			store, err := actionStoreFromFlags(c, env)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionLock(c.Context, env, store, keys, opts)
		},
		Description: help("action_lock"),
	}
}

// readLockFile reads the lock at path; (nil, nil, nil) when it does not exist.
func readLockFile(env *Env, path string) (*action.Lock, []byte, error) {
	data, err := readlimit.ReadFile(inputPath(env, path), readlimit.Profile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, &errkind.InputError{Source: path, Problem: "cannot read the lock: " + pathErr(err)}
	}
	l, err := action.ParseLock(data)
	if err != nil {
		return nil, nil, &errkind.InputError{Source: path, Problem: err.Error(), Hint: "fix the file or remove it and run dome action lock NAME@RANGE..."}
	}
	return l, data, nil
}

func runActionLock(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, opts actionLockOptions) error {
	reqs := make([]action.LockRequest, 0, len(opts.Requests))
	seen := map[string]bool{}
	for _, r := range opts.Requests {
		req, err := action.ParseLockRequest(r)
		if err != nil {
			return &errkind.InputError{Source: r, Problem: err.Error(), Hint: "write NAME@RANGE, e.g. files.move@^1.0.0 (ranges: latest, 1.2.3, ^1.2.3, ~1.2.3, 1.x, >=1.0.0 <2.0.0)"}
		}
		if seen[req.Name] {
			return &errkind.InputError{Source: r, Problem: fmt.Sprintf("%s is requested twice; a lock pins one version per action", req.Name)}
		}
		seen[req.Name] = true
		reqs = append(reqs, req)
	}
	old, oldBytes, err := readLockFile(env, opts.Out)
	if err != nil {
		return err
	}
	if opts.Check {
		return checkActionLock(ctx, env, store, keys, opts, reqs, old, oldBytes)
	}
	if len(reqs) == 0 {
		if old == nil {
			return usagef("action lock needs NAME@RANGE arguments (there is no %s to refresh)", opts.Out)
		}
		for _, e := range old.Actions {
			r, _ := action.ParseRange(e.Range) // ParseLock checked it
			reqs = append(reqs, action.LockRequest{Name: e.Name, Range: r})
		}
	}
	lock := &action.Lock{LockVersion: action.LockVersion}
	if old != nil {
		for _, e := range old.Actions {
			if !seen[e.Name] || len(opts.Requests) == 0 {
				lock.Actions = append(lock.Actions, e)
			}
		}
	}
	byName := map[string]int{}
	for i, e := range lock.Actions {
		byName[e.Name] = i
	}
	for _, req := range reqs {
		e, rec, err := action.ResolveEntry(ctx, store, req, keys)
		if err != nil {
			if errors.Is(err, action.ErrNoMatch) {
				return &errkind.InputError{Source: opts.Out, Problem: err.Error(), Err: err, Hint: "widen the range or publish a matching version"}
			}
			return actionStoreError(opts.Out, err)
		}
		if rec.Deprecation != nil {
			fmt.Fprintf(env.Stderr, "note: %s@%s resolves to %s, which is deprecated (no other version is in range): %s\n", e.Name, e.Range, e.Version, rec.Deprecation.Reason)
		}
		if i, ok := byName[e.Name]; ok {
			lock.Actions[i] = e
		} else {
			byName[e.Name] = len(lock.Actions)
			lock.Actions = append(lock.Actions, e)
		}
	}
	data := lock.Marshal()
	changed := !bytes.Equal(data, oldBytes)
	if changed {
		if err := writeOutputFile(env, "--out", inputPath(env, opts.Out), data); err != nil {
			return err
		}
	}
	if opts.JSON {
		_, err := env.Stdout.Write(data)
		return err
	}
	if opts.Quiet {
		return nil
	}
	final, _ := action.ParseLock(data) // sorted
	w := table(env.Stdout)
	fmt.Fprintln(w, "NAME\tRANGE\tVERSION\tHASH\tKID\tREVISION")
	for _, e := range final.Actions {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Range, e.Version, e.Hash[:19], e.KID, orDash(short(e.Revision)))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(env.Stderr, "wrote %s\n", opts.Out)
	} else {
		fmt.Fprintf(env.Stderr, "%s is up to date\n", opts.Out)
	}
	return nil
}

// actionLockCheck is dome action lock --check --json.
type actionLockCheck struct {
	OK       bool     `json:"ok"`
	File     string   `json:"file"`
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
}

func checkActionLock(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, opts actionLockOptions, reqs []action.LockRequest, old *action.Lock, oldBytes []byte) error {
	if old == nil {
		return &errkind.InputError{Source: opts.Out, Problem: "no lock file to check", Hint: "create it with dome action lock NAME@RANGE..."}
	}
	res := actionLockCheck{File: opts.Out, Problems: []string{}, Notes: []string{}}
	if !bytes.Equal(old.Marshal(), oldBytes) {
		res.Problems = append(res.Problems, fmt.Sprintf("%s is not in dome's byte form (sorted entries, two-space indent); run dome action lock to rewrite it", opts.Out))
	}
	for _, req := range reqs {
		e, ok := old.Entry(req.Name)
		switch {
		case !ok:
			res.Problems = append(res.Problems, fmt.Sprintf("%s is requested (%s) but not locked", req.Name, req.Range))
		case e.Range != req.Range.String():
			res.Problems = append(res.Problems, fmt.Sprintf("%s is locked for range %s, requested %s", req.Name, e.Range, req.Range))
		}
	}
	findings, err := action.CheckLock(ctx, store, old, keys)
	if err != nil {
		return err
	}
	for _, f := range findings {
		if f.Problem {
			res.Problems = append(res.Problems, f.Name+": "+f.Detail)
		} else {
			res.Notes = append(res.Notes, f.Detail)
		}
	}
	res.OK = len(res.Problems) == 0
	if opts.JSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else {
		for _, n := range res.Notes {
			fmt.Fprintf(env.Stderr, "note: %s\n", n)
		}
		if res.OK && !opts.Quiet {
			fmt.Fprintf(env.Stdout, "%s ok: %d actions pinned, published with the locked hashes and verified\n", opts.Out, len(old.Actions))
		}
	}
	if !res.OK {
		return &errkind.CheckError{Problem: fmt.Sprintf("%s does not hold: %d problems", opts.Out, len(res.Problems)), Details: res.Problems, Hint: "run dome action lock to re-resolve, or investigate a changed registry with dome action audit"}
	}
	return nil
}
