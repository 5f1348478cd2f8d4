// Command dome-otel is dome's OpenTelemetry helper: dome run export-otel
// and dome run start run it to send a run's trace over OTLP/HTTP. Install
// it beside dome (the release archive ships it; or go install
// github.com/dome-registry/dome/cmd/dome-otel@VERSION).
package main

import (
	"context"
	"os"

	"github.com/dome-registry/dome/internal/domeotel"
)

func main() { os.Exit(domeotel.Main(context.Background(), os.Args, os.Stdout, os.Stderr)) }
