package app

import (
	"bytes"
	"os"

	"github.com/dome-registry/dome/pkg/trace"
	"github.com/urfave/cli/v2"
)

func newTraceMatrixCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "matrix",
		Description: help("trace_matrix"),
		Usage:       "the requirement -> checks -> last result table (Markdown, or --json) with implemented, partial and planned counts per source document",
		Flags: withGlobal(traceCatalogFlag(), traceResultsFlag(),
			&cli.StringFlag{Name: "out", Usage: "write the matrix to `FILE` instead of stdout"},
		),
		Action: func(c *cli.Context) error {
			in, err := loadTrace(env, c)
			if err != nil {
				return err
			}
			return runTraceMatrix(env, in, c.String("out"), globalBool(c, flagJSON))
		},
	}
}

func runTraceMatrix(env *Env, in *traceInputs, out string, asJSON bool) error {
	// A matrix of checks that do not exist would show results of nothing:
	// refuse the catalogue as trace check does.
	if _, err := trace.Verify(in.Catalog, trace.Inputs{Repo: os.DirFS(in.Root), Index: in.Index}); err != nil {
		return err
	}
	m := trace.BuildMatrix(in.Catalog, in.Index, in.Results)
	if asJSON {
		var buf bytes.Buffer
		if err := writeJSON(&buf, m); err != nil {
			return err
		}
		return writeOutput(env, out, buf.Bytes())
	}
	return writeOutput(env, out, m.Markdown())
}
