// Package provider is the one interface an agent's prompts go through, with
// its two kinds: exec, any command that reads one JSON request
// (dome.agent_request/v1) on stdin and writes one JSON response on stdout,
// run with a time limit, bounded output and its process group killed on
// timeout; and openai, Chat Completions through the OpenAI Go SDK
// (github.com/openai/openai-go/v3) against any OpenAI-compatible base URL.
// The openai kind runs the dome-openai helper program (found by
// pkg/helperexec) through the same exec machinery, so that dome itself
// does not link the SDK (pkg/agent/provider/openaisdk, which only the
// helper links): the runtime's settings go on its command line, the API key
// in its environment (DOME_OPENAI_API_KEY), and the helper checks the
// runtime's SDK pin against the SDK it links. Both kinds are configured
// from a model runtime (registry/agents/runtimes/<id>.runtime.json,
// "dome.agent_runtime/v1"): the model allowlist, timeouts and retries, the
// deterministic defaults (temperature 0 and a seed unless set) and, for
// openai, the pinned SDK version, the base URL and the name of the
// environment variable holding the API key. A provider that times out,
// answers HTTP errors or answers what is not a response fails with an
// *Error carrying a stable code. The package reads no environment itself:
// the caller passes a lookup function (and, for openai, the environment
// the helper runs in, by default the process's).
package provider
