package provider

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/helperexec"
)

// OpenAIKeyEnv is the environment variable through which the openai kind
// hands the API key to dome-openai (never its command line, which other
// users of the machine can read).
const OpenAIKeyEnv = "DOME_OPENAI_API_KEY"

// helperGrace is the time dome-openai gets, beyond the runtime's own
// limit on its requests and retries, to start and answer.
const helperGrace = 2 * time.Second

// newOpenAI is the openai kind: the dome-openai helper (the OpenAI Go SDK,
// pkg/agent/provider/openaisdk) run per request through the exec
// machinery, with the runtime's settings on its command line and the key
// in its environment. The helper checks the runtime's SDK pin against the
// SDK it links.
func newOpenAI(rt *Runtime, opts Options) (Provider, error) {
	cfg := func(msg string) error { return &Error{Code: CodeConfig, Provider: rt.ID, Message: msg} }
	if rt.SDK == nil || rt.Auth == nil || rt.BaseURL == "" {
		return nil, cfg("an openai runtime needs sdk, baseUrl and auth.apiKeyEnv")
	}
	getenv := opts.Getenv
	if getenv == nil {
		return nil, cfg("no environment to read " + rt.Auth.APIKeyEnv + " from")
	}
	key := getenv(rt.Auth.APIKeyEnv)
	if key == "" {
		return nil, cfg(fmt.Sprintf("the API key variable %s is not set", rt.Auth.APIKeyEnv))
	}
	base := rt.BaseURL
	if opts.BaseURL != "" {
		base = opts.BaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, cfg(fmt.Sprintf("base URL %q: want http:// or https://", base))
	}
	helper := opts.Helper
	if helper == "" {
		var err error
		if helper, err = helperexec.Find(helperexec.OpenAI, getenv, opts.InstallHint); err != nil {
			msg := err.Error()
			if h := errkind.HintOf(err); h != "" {
				msg += "; " + h
			}
			return nil, &Error{Code: CodeConfig, Provider: rt.ID, Message: msg, Err: err}
		}
	}
	argv := []string{helper, "complete", "--id", rt.ID, "--base-url", base,
		"--timeout", strconv.Itoa(rt.TimeoutSeconds), "--max-retries", strconv.Itoa(rt.MaxRetries),
		"--max-response-bytes", strconv.Itoa(rt.ResponseLimit()), "--sdk-pin", rt.SDK.Version}
	env := opts.Env
	if env == nil {
		env = os.Environ() // what an exec command inherits
	}
	env = append(withoutVar(env, OpenAIKeyEnv), OpenAIKeyEnv+"="+key)
	return &execProvider{rt: rt, argv: argv, env: env, kind: "openai",
		// The helper's own limit covers every attempt; it gets a little
		// more to start and report.
		timeout: rt.Timeout()*time.Duration(rt.MaxRetries+1) + helperGrace,
		// The text comes back JSON-escaped: up to 6 bytes a byte.
		limit: 6*rt.ResponseLimit() + 64<<10,
	}, nil
}

// withoutVar returns env without the entries of name.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
