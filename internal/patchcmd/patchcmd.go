// Package patchcmd is `dome patch apply` and the reading of patch inputs
// the other patch commands share. Both programs run it: bin/dome (the
// front) applies a series on a local repository itself, in a process that
// touches a few megabytes, and bin/dome-full runs it for everything else.
// It links no go-git, no OpenPGP and no x/text (internal/archtest): moving
// a branch that a worktree has checked out, and mail in charsets other than
// UTF-8 and ASCII, are the full command set's (the caller says how the
// branch moves; see MoveBranch).
package patchcmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// Env is what the patch commands take from the process.
type Env = readcmd.Env

// Sourced is one patch (one message) read from one input.
type Sourced struct {
	Source string
	*patch.Patch
}

// ReadInput reads a patch file ("-" is stdin) within max bytes.
func ReadInput(env *Env, name string, max int64) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = readlimit.ReadAll(env.Stdin, max)
	} else {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.WorkDir, p)
		}
		data, err = readlimit.ReadFile(p, max)
	}
	if _, ok := readlimit.IsTooLarge(err); ok {
		return nil, &errkind.InputError{Source: name, Problem: "patch is over the limit of " + readlimit.Size(max), Hint: "split the patch or raise --max-size"}
	}
	if err != nil {
		return nil, &errkind.InputError{Source: name, Problem: "cannot read the patch: " + readcmd.PathErr(err), Err: err}
	}
	return data, nil
}

// ReadPatches reads and parses every input in order; strip -1 is the
// default -p1 that a plain diff's names may turn into -p0 (git apply's
// guess).
func ReadPatches(env *Env, names []string, strip int, max int64) ([]Sourced, error) {
	if len(names) == 0 {
		return nil, noInputs()
	}
	var out []Sourced
	for _, n := range names {
		ps, err := ReadInputPatches(env, n, strip, max)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func noInputs() error {
	return readcmd.Usagef("name at least one patch file (or - for standard input)")
}

// ReadInputPatches reads and parses one input.
func ReadInputPatches(env *Env, name string, strip int, max int64) ([]Sourced, error) {
	data, err := ReadInput(env, name, max)
	if err != nil {
		return nil, err
	}
	return ParseInput(data, name, strip, max)
}

// ParseInput parses the bytes read from input name.
func ParseInput(data []byte, name string, strip int, max int64) ([]Sourced, error) {
	src := name
	if name == "-" {
		src = "stdin"
	}
	opts := patch.ParseOptions{Source: src, Strip: strip, MaxBytes: max}
	if strip < 0 {
		opts.Strip, opts.GuessStrip = patch.DefaultStrip, true
	}
	ps, err := patch.Parse(data, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Sourced, len(ps))
	for i, p := range ps {
		out[i] = Sourced{Source: src, Patch: p}
	}
	return out, nil
}

// ResolveBase resolves rev (given by flag) to a commit and its tree.
func ResolveBase(repo *gitstore.Repo, flag, rev string) (gitstore.Hash, gitstore.Hash, error) {
	c, err := repo.ResolveCommit(rev)
	if err != nil {
		return gitstore.ZeroHash, gitstore.ZeroHash, &errkind.InputError{Source: flag, Field: rev, Problem: err.Error(), Err: err,
			Hint: "name a commit: a full or short SHA, a branch, a tag or HEAD"}
	}
	t, err := repo.CommitTree(c)
	if err != nil {
		return gitstore.ZeroHash, gitstore.ZeroHash, fmt.Errorf("read commit %s: %w", c, err)
	}
	return c, t, nil
}

// ConflictError turns a patch.ConflictError into the check error dome
// reports.
func ConflictError(src string, p *patch.Patch, ce *patch.ConflictError, hint string) error {
	var details []string
	for _, c := range ce.Conflicts {
		details = append(details, c.String())
	}
	what := src
	if p.Header.Subject != "" {
		what += " (" + p.Header.Subject + ")"
	}
	return &errkind.CheckError{Problem: fmt.Sprintf("%s does not apply: %d conflict(s)", what, len(ce.Conflicts)), Details: details, Hint: hint}
}

// Signature builds a commit identity from the patch (author) or the GIT_*
// environment, falling back to "dome" and env.Now.
func Signature(env *Env, who string, name, email, date string) (gitstore.Signature, error) {
	if v := env.Getenv("GIT_" + who + "_NAME"); name == "" && v != "" {
		name = v
	}
	if v := env.Getenv("GIT_" + who + "_EMAIL"); email == "" && v != "" {
		email = v
	}
	if name == "" {
		name = "dome"
	}
	if email == "" {
		email = "dome@localhost"
	}
	if date == "" {
		date = env.Getenv("GIT_" + who + "_DATE")
	}
	when := env.Clock()
	if date != "" {
		t, err := patch.ParseDate(date)
		if err != nil {
			return gitstore.Signature{}, &errkind.InputError{Source: "GIT_" + who + "_DATE", Field: date, Problem: err.Error(), Hint: "use RFC 3339, RFC 2822 or @<unix seconds> [+zone]"}
		}
		when = t
	}
	return gitstore.Signature{Name: name, Email: email, When: when}, nil
}

// NamePatch puts the patch file's name on an input error from the engine.
func NamePatch(err error, source string) error {
	var ie *errkind.InputError
	if errors.As(err, &ie) && ie.Source == "patch" {
		ie.Source = source
	}
	return err
}
