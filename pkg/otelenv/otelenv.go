// Package otelenv reads the OpenTelemetry exporter configuration dome
// honours (the OTEL_EXPORTER_OTLP_* environment variables of the
// OpenTelemetry specification) without linking the OpenTelemetry SDK: dome
// decides here whether and where a trace goes, and the dome-otel helper
// (pkg/otelexport) builds and sends it. The caller passes the values; the
// package reads no environment itself.
package otelenv

import (
	"fmt"
	"net/url"
	"strings"
)

// Environment variables, as the OpenTelemetry specification names them.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
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

// FromEnv is TracesURL of the two variables read through getenv.
func FromEnv(getenv func(string) string) (string, error) {
	return TracesURL(getenv(EnvTracesEndpoint), getenv(EnvEndpoint))
}
