package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dome-registry/dome/pkg/aicontract"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

type contractResolveOptions struct {
	Request   aicontract.Request
	InputFile string
	Now       string
	Log       string
	JSON      bool
	Quiet     bool
}

func newContractResolveCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "resolve",
		Usage: "compile the contract text for a command in a project",
		Flags: withGlobal(append(contractSourceFlags(),
			&cli.StringFlag{Name: "project", Usage: "the project `ID` (policy/contracts/projects/ID.json)"},
			&cli.StringFlag{Name: "command", Usage: "the command `ID` (commands.json)"},
			&cli.StringFlag{Name: "input", Usage: "the user's request `TEXT`, e.g. \"Button with variants\""},
			&cli.StringFlag{Name: "input-file", Usage: "read the user's request from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "now", Usage: "meta.generatedAt as an RFC 3339 `TIME` (default: SOURCE_DATE_EPOCH, else the clock)"},
			&cli.StringFlag{Name: "log", Usage: "append the log line to `FILE` instead of stderr"},
		)...),
		Action: func(c *cli.Context) error {
			opts := contractResolveOptions{
				Request:   aicontract.Request{ProjectID: c.String("project"), CommandID: c.String("command"), UserInput: c.String("input")},
				InputFile: c.String("input-file"), Now: c.String("now"), Log: c.String("log"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			}
			switch {
			case opts.Request.ProjectID == "":
				return usagef("--project ID is required")
			case opts.Request.CommandID == "":
				return usagef("--command ID is required")
			case c.IsSet("input") && opts.InputFile != "":
				return usagef("give either --input TEXT or --input-file FILE, not both")
			case !c.IsSet("input") && opts.InputFile == "":
				return usagef("--input TEXT (or --input-file FILE) is required")
			}
			src, ref, err := contractSource(c.Context, env, c)
			if err != nil {
				return err
			}
			return runContractResolve(c.Context, env, src, ref, opts)
		},
		Description: help("contract_resolve"),
	}
}

func runContractResolve(_ context.Context, env *Env, src aicontract.Source, ref *aicontract.CatalogRef, opts contractResolveOptions) error {
	if opts.InputFile != "" {
		var data []byte
		var err error
		// The request text is at most aicontract.MaxInputChars characters;
		// read a little more than their bytes so Resolve says how many there
		// were, and no more: a longer input is refused, never cut.
		if opts.InputFile == "-" {
			data, err = readlimit.ReadAll(env.Stdin, readlimit.Profile)
		} else {
			data, err = readlimit.ReadFile(absPath(env, opts.InputFile), readlimit.Profile)
		}
		if _, ok := readlimit.IsTooLarge(err); ok {
			return &errkind.InputError{Source: "--input-file", Problem: "more than the limit of " + readlimit.Size(readlimit.Profile), Hint: fmt.Sprintf("the request is at most %d characters", aicontract.MaxInputChars)}
		}
		if err != nil {
			return &errkind.InputError{Source: "--input-file", Problem: readProblem(err), Err: err}
		}
		opts.Request.UserInput = string(data)
	}
	now, err := generatedAt(env, opts.Now)
	if err != nil {
		return err
	}
	cat, err := aicontract.LoadCatalog(src)
	if err != nil {
		return err
	}
	res, err := aicontract.Resolve(cat, src, opts.Request, aicontract.Options{GeneratedAt: now, Catalog: ref})
	if err != nil {
		return err
	}
	if err := writeContractLog(env, opts, res.Log(opts.Request)); err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	}
	if res.Blocked != nil {
		code := ExitCheck
		if res.Blocked.Reason == aicontract.MissingProject || res.Blocked.Reason == aicontract.UnknownCommand {
			code = ExitUsage
		}
		fmt.Fprintf(env.Stderr, "dome: contract blocked: %s: %s\n", res.Blocked.Reason, res.Blocked.Message)
		if res.Blocked.Details != nil {
			for _, x := range res.Blocked.Details.Conflicts {
				fmt.Fprintf(env.Stderr, "  %s x %s: %s\n", x.A, x.B, x.Why)
			}
		}
		return silentError{code}
	}
	if !opts.JSON {
		_, err = fmt.Fprint(env.Stdout, res.Contract.ContractText)
	}
	return err
}

// generatedAt is --now (RFC 3339), else SOURCE_DATE_EPOCH, else the clock,
// in UTC to the second.
func generatedAt(env *Env, flag string) (time.Time, error) {
	if flag != "" {
		t, err := time.Parse(time.RFC3339, flag)
		if err != nil {
			return time.Time{}, &errkind.InputError{Source: "--now", Problem: err.Error(), Hint: "write an RFC 3339 time, e.g. 2026-01-02T03:04:05Z"}
		}
		return t.UTC().Truncate(time.Second), nil
	}
	if s := env.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, &errkind.InputError{Source: "SOURCE_DATE_EPOCH", Problem: "not a number of seconds: " + s, Hint: "set it to a Unix time, e.g. $(git log -1 --format=%ct)"}
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return env.Now().UTC().Truncate(time.Second), nil
}

// writeContractLog writes one canonical JSON line to --log FILE (appended
// with one write) or to stderr (unless --quiet).
func writeContractLog(env *Env, opts contractResolveOptions, e aicontract.LogEntry) error {
	line, err := canonical.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if opts.Log == "" {
		if opts.Quiet {
			return nil
		}
		_, err := env.Stderr.Write(line)
		return err
	}
	// Appended in place, never replaced: a FIFO or /dev/stderr works, a
	// missing folder is created and said so, like every output file's.
	p := absPath(env, opts.Log)
	if _, err := os.Stat(filepath.Dir(p)); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &errkind.InputError{Source: "--log", Problem: readProblem(err), Err: err}
		}
		fmt.Fprintf(env.Stderr, "dome: created folder %s for --log\n", relTo(env.WorkDir, filepath.Dir(p)))
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return &errkind.InputError{Source: "--log", Problem: readProblem(err), Err: err}
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", opts.Log, err)
	}
	return f.Close()
}
