package provider

import (
	"context"
	"errors"
	"fmt"
)

// RequestSchema is the schemaVersion of a Request as the exec provider
// sends it.
const RequestSchema = "dome.agent_request/v1"

// Request is one prompt: the system message (the agent's abilities, then its
// system prompt) and the user message, with the sampling parameters.
type Request struct {
	SchemaVersion string  `json:"schemaVersion"`
	RunID         string  `json:"runId,omitempty"`
	Agent         string  `json:"agent"`
	Step          string  `json:"step,omitempty"`
	Model         string  `json:"model"`
	System        string  `json:"system"`
	Prompt        string  `json:"prompt"`
	Temperature   float64 `json:"temperature"`
	Seed          int64   `json:"seed"`
	MaxTokens     int     `json:"maxTokens,omitempty"`
}

// Usage counts the tokens a provider reports.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// Response is a provider's answer.
type Response struct {
	Text  string `json:"text"`
	Model string `json:"model,omitempty"`
	Usage Usage  `json:"usage"`
}

// Provider answers prompts.
type Provider interface {
	// Kind is "exec" or "openai".
	Kind() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// Error codes.
const (
	CodeTimeout         = "PROVIDER_TIMEOUT"          // no answer within the runtime's timeout
	CodeBadResponse     = "PROVIDER_BAD_RESPONSE"     // an answer that is not a response
	CodeHTTP            = "PROVIDER_HTTP_ERROR"       // an HTTP error status (after the retries)
	CodeFailed          = "PROVIDER_FAILED"           // the command failed, or the connection did
	CodeModelNotAllowed = "MODEL_NOT_ALLOWED"         // the model is not in the runtime's allowlist
	CodeConfig          = "PROVIDER_CONFIG"           // the runtime cannot be used as configured
	CodeCancelled       = "PROVIDER_CANCELLED"        // the caller cancelled the request
	CodeOutputLimit     = "PROVIDER_OUTPUT_TOO_LARGE" // more output than maxResponseBytes
)

// Error is a provider failure with a stable code.
type Error struct {
	Code     string
	Provider string // the runtime id
	Message  string
	Status   int // HTTP status, when there was one
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("provider %s: %s (%s)", e.Provider, e.Message, e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of a provider error, or "".
func CodeOf(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
