// Package provider is the one interface an agent's prompts go through, with
// its two implementations: exec, any command that reads one JSON request
// (dome.agent_request/v1) on stdin and writes one JSON response on stdout,
// run with a time limit, bounded output and its process group killed on
// timeout; and openai, the OpenAI Go SDK (github.com/openai/openai-go/v3,
// Chat Completions) against any OpenAI-compatible base URL. Both are
// configured from a model runtime (registry/agents/runtimes/<id>.runtime.json,
// "dome.agent_runtime/v1"): the model allowlist, timeouts and retries, the
// deterministic defaults (temperature 0 and a seed unless set) and, for
// openai, the pinned SDK version (checked against the one dome links), the
// base URL and the name of the environment variable holding the API key.
// A provider that times out, answers HTTP errors or answers what is not a
// response fails with an *Error carrying a stable code. The package reads
// no environment itself: the caller passes a lookup function.
package provider
