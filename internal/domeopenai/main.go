// Package domeopenai is the dome-openai helper program: the openai kind of
// dome's agent providers, a program of its own so that dome does not link
// the OpenAI Go SDK, whose package initialisation every dome command would
// pay. dome runs it per prompt (pkg/agent/provider) with the exec
// providers' protocol: one request (dome.agent_request/v1) on stdin, one
// response ({"text", "model", "usage"}) on stdout. Its command line is an
// interface between dome and its helper, stable within a release:
//
//	dome-openai complete --id RUNTIME --base-url URL --timeout SECONDS --max-retries N
//	                     --max-response-bytes N [--sdk-pin VERSION]
//	dome-openai --sdk-version
//	dome-openai --version
//
// The API key comes from DOME_OPENAI_API_KEY in its environment, never its
// command line. A failure the provider classifies is answered on stdout as
// {"error": {"code", "message", "status"}} with exit status 1 (the codes
// of pkg/agent/provider), bad usage is exit 2.
package domeopenai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/agent/provider/openaisdk"
	"github.com/dome-registry/dome/pkg/helperexec"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// Name is the program's name.
const Name = "dome-openai"

// MaxRequestBytes bounds the request read from stdin.
const MaxRequestBytes = 16 << 20

// Version is set at link time (-X); else the module version from the
// build information.
var Version string

func version() string { return helperexec.ProgramVersion(Version) }

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Main runs dome-openai with args (args[0] is the program name), reading
// the key through getenv, and returns its exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	err := run(ctx, args, stdin, stdout, getenv)
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %v\n", Name, err)
		fmt.Fprintf(stderr, "usage: %s complete --id RUNTIME --base-url URL --timeout SECONDS --max-retries N --max-response-bytes N [--sdk-pin VERSION] < request.json\n", Name)
		return 2
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		pe = &provider.Error{Code: provider.CodeFailed, Message: err.Error()}
	}
	fmt.Fprintf(stderr, "%s: %s (%s)\n", Name, pe.Message, pe.Code)
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"code": pe.Code, "message": pe.Message, "status": pe.Status}})
	stdout.Write(append(out, '\n'))
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 2 {
		switch args[1] {
		case "--version", "-version":
			_, err := fmt.Fprintf(stdout, "%s %s (%s %s)\n", Name, version(), provider.OpenAIModule, openaisdk.LinkedVersion())
			return err
		case "--sdk-version", "-sdk-version":
			_, err := fmt.Fprintln(stdout, openaisdk.LinkedVersion())
			return err
		}
	}
	if len(args) < 2 || args[1] != "complete" {
		return usageError{"name the subcommand: complete"}
	}
	fs := flag.NewFlagSet(Name+" complete", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	id := fs.String("id", "", "the runtime id")
	base := fs.String("base-url", "", "the OpenAI-compatible base URL")
	timeout := fs.Int("timeout", 0, "seconds per request")
	retries := fs.Int("max-retries", 0, "retries after the first attempt")
	limit := fs.Int("max-response-bytes", provider.DefaultMaxResponseBytes, "the largest response body read")
	pin := fs.String("sdk-pin", "", "the SDK version the runtime pins")
	if err := fs.Parse(args[2:]); err != nil {
		return usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case *id == "" || *base == "" || *timeout <= 0:
		return usageError{"--id, --base-url and a positive --timeout are required"}
	case *retries < 0 || *limit <= 0:
		return usageError{"--max-retries must not be negative, --max-response-bytes must be positive"}
	}
	client, err := openaisdk.New(openaisdk.Settings{ID: *id, BaseURL: *base, APIKey: getenv(provider.OpenAIKeyEnv),
		Timeout: time.Duration(*timeout) * time.Second, MaxRetries: *retries, MaxResponseBytes: *limit, SDKPin: *pin}, openaisdk.LinkedVersion())
	if err != nil {
		return err
	}
	data, err := readlimit.ReadAll(stdin, MaxRequestBytes)
	if err != nil {
		return usageError{"read the request: " + err.Error()}
	}
	var req provider.Request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return usageError{fmt.Sprintf("the request on stdin is not one %s object: %v", provider.RequestSchema, err)}
	}
	if req.SchemaVersion != provider.RequestSchema {
		return usageError{fmt.Sprintf("the request's schemaVersion is %q, want %q", req.SchemaVersion, provider.RequestSchema)}
	}
	resp, err := client.Complete(ctx, req)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}
