// Package domeotel is the dome-otel helper program: it derives a run's
// OpenTelemetry trace from its ledger (pkg/otelexport) and posts it to an
// OTLP/HTTP traces endpoint. It is a program of its own so that dome does
// not link the OpenTelemetry SDK (and gRPC and protobuf with it), whose
// package initialisation every dome command would pay; `dome run
// export-otel` and `dome run start` validate their input and run it
// (pkg/helperexec finds it). Its command line is an interface between dome
// and its helper, stable within a release:
//
//	dome-otel export --run-dir DIR --run ID --endpoint URL [--service-version V] [--json | --quiet]
//	dome-otel --version
//
// It prints the result as dome run export-otel documents it; exit 0 when
// the collector took the spans, 1 when the ledger cannot be read or the
// export failed, 2 for bad usage. OTEL_EXPORTER_OTLP_HEADERS (and the
// other variables the OTLP exporter reads) come from its environment.
package domeotel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/dome-registry/dome/pkg/helperexec"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/otelenv"
	"github.com/dome-registry/dome/pkg/otelexport"
)

// Name is the program's name.
const Name = "dome-otel"

// Version is set at link time (-X); else the module version from the
// build information.
var Version string

// ExportTimeout bounds one export.
const ExportTimeout = 30 * time.Second

func version() string { return helperexec.ProgramVersion(Version) }

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

type exportError struct {
	err  error
	hint string
}

func (e exportError) Error() string { return e.err.Error() }

// Main runs dome-otel with args (args[0] is the program name) and returns
// its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", Name, err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "usage: %s export --run-dir DIR --run ID --endpoint URL [--service-version V] [--json | --quiet]\n", Name)
		return 2
	}
	var ee exportError
	if errors.As(err, &ee) && ee.hint != "" {
		fmt.Fprintf(stderr, "hint: %s\n", ee.hint)
	}
	return 1
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 2 && (args[1] == "--version" || args[1] == "-version") {
		_, err := fmt.Fprintf(stdout, "%s %s\n", Name, version())
		return err
	}
	if len(args) < 2 || args[1] != "export" {
		return usageError{"name the subcommand: export"}
	}
	fs := flag.NewFlagSet(Name+" export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runDir := fs.String("run-dir", "", "the run's folder (its events/ hold the ledger)")
	runID := fs.String("run", "", "the run id")
	endpoint := fs.String("endpoint", "", "the OTLP/HTTP traces URL")
	serviceVersion := fs.String("service-version", "", "service.version of the spans (dome's version)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	quiet := fs.Bool("quiet", false, "print nothing on success")
	if err := fs.Parse(args[2:]); err != nil {
		return usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case *runDir == "" || *runID == "" || *endpoint == "":
		return usageError{"--run-dir, --run and --endpoint are required"}
	}
	if err := ledger.CheckRunID(*runID); err != nil {
		return usageError{"--run: " + err.Error()}
	}
	url, err := otelenv.TracesURL(*endpoint, "")
	if err != nil {
		return usageError{"--endpoint: " + err.Error()}
	}
	sv := *serviceVersion
	if sv == "" {
		sv = version()
	}
	evs, err := ledger.Read(*runDir, *runID)
	if err != nil {
		return exportError{err: err}
	}
	tr, err := otelexport.Spans(*runID, sv, evs)
	if err != nil {
		return exportError{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, ExportTimeout)
	defer cancel()
	if err := otelexport.Export(ctx, url, tr); err != nil {
		return exportError{err: err, hint: "is the collector listening for OTLP/HTTP (protobuf) at " + url + "?"}
	}
	switch {
	case *asJSON:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"run_id": *runID, "trace_id": tr.TraceID.String(), "spans": len(tr.Spans), "endpoint": url}); err != nil {
			return err
		}
		_, err = stdout.Write(buf.Bytes())
		return err
	case *quiet:
		return nil
	}
	_, err = fmt.Fprintf(stdout, "run %s: trace %s, %d spans exported to %s\n", *runID, tr.TraceID, len(tr.Spans), url)
	return err
}
