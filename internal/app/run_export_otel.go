package app

import (
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/helperexec"
	"github.com/dome-registry/dome/pkg/otelenv"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newRunExportOtelCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "export-otel",
		Description: help("run_export-otel"),
		Usage:       "export a run's trace to an OpenTelemetry collector over OTLP/HTTP (through the dome-otel helper): spans per run, wave, task attempt, gate and promotion, derived from its ledger",
		ArgsUsage:   "RUN",
		Flags: withGlobal(stackOpsFlag(),
			&cli.StringFlag{Name: "endpoint", Usage: "the OTLP/HTTP traces `URL` (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else $OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one run: dome run export-otel RUN")
			}
			l, err := existingRun(env, c, c.Args().First())
			if err != nil {
				return err
			}
			endpoint := c.String("endpoint")
			if endpoint == "" {
				if endpoint, err = otelenv.FromEnv(env.Getenv); err != nil {
					return &errkind.InputError{Source: otelenv.EnvEndpoint, Problem: err.Error()}
				}
			} else if endpoint, err = otelenv.TracesURL(endpoint, ""); err != nil {
				return &errkind.InputError{Source: "--endpoint", Problem: err.Error()}
			}
			if endpoint == "" {
				return &errkind.InputError{Source: "--endpoint", Problem: "no OTLP endpoint", Hint: "give --endpoint http://HOST:4318/v1/traces, or set OTEL_EXPORTER_OTLP_ENDPOINT"}
			}
			helper, err := findHelper(env, helperexec.OTel)
			if err != nil {
				return err
			}
			args := exportOtelArgs(l, endpoint)
			switch {
			case globalBool(c, flagJSON):
				args = append(args, "--json")
			case globalBool(c, flagQuiet):
				args = append(args, "--quiet")
			}
			return runHelper(c.Context, helper, args, env.Stdout, env.Stderr)
		},
	}
}

// exportOtelArgs is the dome-otel command line that derives a run's trace
// from its ledger and exports it (the spans carry dome's version).
func exportOtelArgs(l stack.Layout, endpoint string) []string {
	return []string{"export", "--run-dir", l.Root, "--run", l.RunID, "--endpoint", endpoint, "--service-version", domeVersion()}
}
