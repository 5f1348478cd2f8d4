package otelexport

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
)

// Export posts the trace's spans to an OTLP/HTTP traces endpoint (the full
// URL, e.g. http://localhost:4318/v1/traces) as protobuf.
func Export(ctx context.Context, endpoint string, t *Trace) error {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		return fmt.Errorf("OTLP exporter: %w", err)
	}
	if err := exp.ExportSpans(ctx, t.Spans.Snapshots()); err != nil {
		exp.Shutdown(ctx)
		return fmt.Errorf("OTLP export to %s: %w", endpoint, err)
	}
	return exp.Shutdown(ctx)
}
