package app

import (
	"context"
	"fmt"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/otelexport"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newRunExportOtelCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "export-otel",
		Description: help("run_export-otel"),
		Usage:       "export a run's trace to an OpenTelemetry collector over OTLP/HTTP: spans per run, wave, task attempt, gate and promotion, derived from its ledger",
		ArgsUsage:   "RUN",
		Flags: withGlobal(stackOpsFlag(),
			&cli.StringFlag{Name: "endpoint", Usage: "the OTLP/HTTP traces `URL` (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else $OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one run: dome run export-otel RUN")
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			l, err := runLayout(env, c, repo, c.Args().First())
			if err != nil {
				return err
			}
			if !fileExists(l.EventsDir()) {
				return &errkind.InputError{Source: "RUN", Field: l.RunID, Problem: "no such run: " + l.Root + " has no events", Hint: "list runs with dome run status"}
			}
			endpoint := c.String("endpoint")
			if endpoint == "" {
				if endpoint, err = otelexport.TracesURL(env.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), env.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); err != nil {
					return &errkind.InputError{Source: "OTEL_EXPORTER_OTLP_ENDPOINT", Problem: err.Error()}
				}
			} else if endpoint, err = otelexport.TracesURL(endpoint, ""); err != nil {
				return &errkind.InputError{Source: "--endpoint", Problem: err.Error()}
			}
			if endpoint == "" {
				return &errkind.InputError{Source: "--endpoint", Problem: "no OTLP endpoint", Hint: "give --endpoint http://HOST:4318/v1/traces, or set OTEL_EXPORTER_OTLP_ENDPOINT"}
			}
			tr, err := exportOtel(c.Context, l, endpoint)
			if err != nil {
				return &errkind.CheckError{Problem: err.Error(), Hint: "is the collector listening for OTLP/HTTP (protobuf) at " + endpoint + "?"}
			}
			if globalBool(c, flagJSON) {
				return writeJSON(env.Stdout, map[string]any{"run_id": l.RunID, "trace_id": tr.TraceID.String(), "spans": len(tr.Spans), "endpoint": endpoint})
			}
			if !globalBool(c, flagQuiet) {
				fmt.Fprintf(env.Stdout, "run %s: trace %s, %d spans exported to %s\n", l.RunID, tr.TraceID, len(tr.Spans), endpoint)
			}
			return nil
		},
	}
}

// exportOtel derives a run's trace from its ledger and exports it.
func exportOtel(ctx context.Context, l stack.Layout, endpoint string) (*otelexport.Trace, error) {
	evs, err := ledger.Read(l.Root, l.RunID)
	if err != nil {
		return nil, err
	}
	tr, err := otelexport.Spans(l.RunID, domeVersion(), evs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return tr, otelexport.Export(ctx, endpoint, tr)
}
