package otelexport

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
)

// TracesURL is the OTLP/HTTP traces endpoint of a configuration, as the
// OpenTelemetry environment variables say it: the traces endpoint as it is
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), else the base endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT) with /v1/traces appended. "" when neither
// is set.
func TracesURL(tracesEndpoint, endpoint string) (string, error) {
	u := tracesEndpoint
	if u == "" && endpoint != "" {
		u = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
	}
	if u == "" {
		return "", nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("OTLP endpoint %q: want http(s)://HOST:PORT[/path]", u)
	}
	return u, nil
}

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
