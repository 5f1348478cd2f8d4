// Package readcmd holds the commands that dome's front (bin/dome) answers
// itself, without starting the full command set: dome --version, dome
// version and dome registry cat on a local repository. The full command
// set (internal/app, bin/dome-full) runs the same code for the same
// commands, so that both programs print the same bytes and exit with the
// same code; what they share to do so lives here too: the error report,
// the exit codes, the release-tag memory and the opening of a local
// registry.
//
// Every package this one links is paid for by every dome start (Go
// initializes all linked packages before main), so it stays on the lean
// side of dome: no go-git transports, no OpenAPI, no SDKs
// (internal/archtest holds it to that).
package readcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/knowntags"
	"github.com/dome-registry/dome/pkg/registry"
)

// The global flags every dome command takes, before or after the command
// name, and the variable --repo falls back to: the full command set defines
// them, the front reads them by these names.
const (
	FlagRepo       = "repo"
	FlagJSON       = "json"
	FlagQuiet      = "quiet"
	FlagQuietShort = "q"
	EnvRepo        = "DOME_REPO"
)

// Exit codes, documented in the README.
const (
	ExitOK    = 0 // success
	ExitCheck = 1 // a check failed: drift, conflict, verification, or an internal error
	ExitUsage = 2 // bad usage or bad input
)

// ShortLived trades memory for fewer collections, as a command that exits
// soon can, unless the user tuned the collector ($GOGC).
func ShortLived(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// ExitCode maps an error to dome's exit code: nil -> 0, bad usage or an
// *errkind.InputError -> 2, anything else -> 1.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case IsUsage(err), errkind.IsInput(err):
		return ExitUsage
	}
	return ExitCheck
}

// Env is what a command takes from the process: its standard streams, its
// environment, its clock and its working directory.
type Env struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
	Now     func() time.Time // nil: the clock
	WorkDir string
}

// Clock is Now, or the clock when it is nil.
func (e *Env) Clock() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// UsageError marks bad usage: unknown flags, missing arguments (exit 2,
// and PrintError points to the help).
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a usage error.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// IsUsage reports whether err is, or wraps, a usage error.
func IsUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}

// PathErr is the reason of a file system error without the path, which
// the caller names itself.
func PathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// PrintError prints err as "dome: <what failed>: <why>", the details of a
// failed check, and a hint line: the error's own, else (usage) where help
// is.
func PrintError(w io.Writer, err error, usage bool) {
	fmt.Fprintf(w, "dome: %s\n", Bounded(err.Error()))
	var ce *errkind.CheckError
	if errors.As(err, &ce) {
		for _, d := range ce.Details {
			fmt.Fprintf(w, "  %s\n", Bounded(d))
		}
	}
	if h := errkind.HintOf(err); h != "" {
		fmt.Fprintf(w, "hint: %s\n", Bounded(h))
	} else if usage {
		fmt.Fprintf(w, "hint: run 'dome --help' or 'dome <command> --help'\n")
	}
}

// MaxMessage bounds one line of an error report. Messages that quote
// input (a schema, a value, a library's dump of both) are summarised where
// they are made; this is the backstop for every other one.
const MaxMessage = 4096

// Bounded cuts s to MaxMessage bytes at a rune boundary and says how much
// was left out.
func Bounded(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d more bytes not shown)", len(s)-cut)
}

// WriteJSON writes v as indented JSON with a final newline. Struct fields
// keep their declared order and map keys are sorted, so the shape is stable.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Table returns a tabwriter for aligned human output; call Flush when done.
func Table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// VersionFlagLine is what dome --version prints.
func VersionFlagLine() string { return "dome version " + buildinfo.String() + "\n" }

// Version prints dome version's table, or its JSON form.
func Version(w io.Writer, asJSON bool) error {
	bi := buildinfo.Read()
	if asJSON {
		return WriteJSON(w, bi)
	}
	t := Table(w)
	fmt.Fprintf(t, "version\t%s\n", bi.Version)
	if bi.Commit != "" {
		dirty := ""
		if bi.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(t, "commit\t%s%s\n", bi.Commit, dirty)
	}
	if bi.CommitTime != "" {
		fmt.Fprintf(t, "commit time\t%s\n", bi.CommitTime)
	}
	fmt.Fprintf(t, "module\t%s\n", bi.Module)
	fmt.Fprintf(t, "go\t%s %s/%s\n", bi.GoVersion, bi.OS, bi.Arch)
	return t.Flush()
}

// KnownTagsPath is the file of the release tags dome has read:
// $DOME_KNOWN_TAGS, else $XDG_STATE_HOME/dome/known-tags, else
// ~/.local/state/dome/known-tags; "" without a home folder.
func KnownTagsPath(getenv func(string) string, workDir string) string {
	if p := getenv("DOME_KNOWN_TAGS"); p != "" {
		return AbsPath(workDir, p)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dome", "known-tags")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "dome", "known-tags")
	}
	return ""
}

// KnownTags opens the memory of release tags; a failure to write it is a
// warning on stderr (once), never a reason not to read the registry.
func KnownTags(getenv func(string) string, workDir string, stderr io.Writer) *knowntags.Store {
	p := KnownTagsPath(getenv, workDir)
	if p == "" {
		return nil
	}
	s := knowntags.Open(p)
	warned := false
	s.OnWriteError = func(err error) {
		if !warned {
			warned = true
			fmt.Fprintf(stderr, "dome: warning: %v (set DOME_KNOWN_TAGS to a writable file)\n", err)
		}
	}
	return s
}

// AbsPath resolves p against the working directory.
func AbsPath(workDir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(workDir, p)
}

// OpenLocal opens the repository at the path target (--repo or $DOME_REPO;
// "": the one containing workDir). A URL is the caller's to open.
func OpenLocal(workDir, target string) (*gitstore.Repo, error) {
	path := target
	if path == "" {
		path = workDir
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
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

// Registry is the registry of repo with the release-tag memory of this
// environment.
func Registry(repo *gitstore.Repo, getenv func(string) string, workDir string, stderr io.Writer) *registry.Registry {
	reg := registry.New(repo)
	if m := KnownTags(getenv, workDir, stderr); m != nil {
		reg.SetTagMemory(m)
	}
	return reg
}

// RegistryCat prints the raw bytes of the file path of tool toolRef
// (tool@ref) of reg.
func RegistryCat(ctx context.Context, reg *registry.Registry, toolRef, path string, stdout io.Writer) error {
	ref, err := registry.ParseRef("tool", toolRef)
	if err != nil {
		return err
	}
	t, err := reg.ResolveToolMeta(ctx, ref, registry.PinOptions{Source: "tool"})
	if err != nil {
		return err
	}
	data, _, err := reg.ReadFile(t, path)
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}
