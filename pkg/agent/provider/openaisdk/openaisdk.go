// Package openaisdk is the openai provider kind's client: Chat Completions
// through the OpenAI Go SDK (github.com/openai/openai-go/v3) against any
// OpenAI-compatible base URL, with the runtime's timeout and retries, a
// bounded response body and every failure classified into a provider error
// code. Only the dome-openai helper program links it: dome runs that
// program for the openai kind (pkg/agent/provider), so that the SDK's
// package initialisation is not paid by every dome command. The package
// reads no environment: the caller passes the key.
package openaisdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/dome-registry/dome/pkg/agent/provider"
)

// Settings are a runtime's, as the helper is given them.
type Settings struct {
	ID               string        // the runtime id (named in messages)
	BaseURL          string        // http(s)://...
	APIKey           string        // never logged
	Timeout          time.Duration // per request
	MaxRetries       int           // after the first attempt
	MaxResponseBytes int           // the largest response body read
	SDKPin           string        // the version the runtime pins ("": not checked)
	HTTPClient       *http.Client  // nil: a plain one
}

// LinkedVersion returns the version of the OpenAI SDK this binary links:
// from its build information, else (a test binary carries none) the
// version the SDK itself announces in its User-Agent, read from a request
// that never leaves the process.
func LinkedVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == provider.OpenAIModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	var ua string
	stop := errors.New("stop")
	svc := openai.NewChatCompletionService(option.WithBaseURL("http://sdk.invalid/"), option.WithAPIKey("none"), option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			ua = req.Header.Get("User-Agent")
			return nil, stop
		}))
	svc.New(context.Background(), openai.ChatCompletionNewParams{Model: "none", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("")}})
	if v, ok := strings.CutPrefix(ua, "OpenAI/Go "); ok && v != "" {
		return "v" + v
	}
	return ""
}

// Client sends Chat Completions.
type Client struct {
	s       Settings
	service openai.ChatCompletionService
}

// New checks the settings (the SDK pin against linked, the version this
// program links; "" skips the check) and returns a client.
func New(s Settings, linked string) (*Client, error) {
	cfg := func(msg string) error {
		return &provider.Error{Code: provider.CodeConfig, Provider: s.ID, Message: msg}
	}
	if linked != "" && s.SDKPin != "" && linked != s.SDKPin {
		return nil, cfg(fmt.Sprintf("the runtime pins %s %s but dome-openai links %s; pin %s or install a dome-openai built with that SDK", provider.OpenAIModule, s.SDKPin, linked, linked))
	}
	if s.APIKey == "" {
		return nil, cfg("no API key")
	}
	if !strings.HasPrefix(s.BaseURL, "http://") && !strings.HasPrefix(s.BaseURL, "https://") {
		return nil, cfg(fmt.Sprintf("base URL %q: want http:// or https://", s.BaseURL))
	}
	if s.Timeout <= 0 || s.MaxRetries < 0 || s.MaxResponseBytes <= 0 {
		return nil, cfg(fmt.Sprintf("timeout %s, %d retries, %d response bytes: want a positive timeout and limit", s.Timeout, s.MaxRetries, s.MaxResponseBytes))
	}
	hc := s.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// The service is made from explicit options only: the SDK's
	// NewClient would also read OPENAI_BASE_URL, OPENAI_ORG_ID and friends
	// from the environment, which a pinned runtime must not depend on.
	svc := openai.NewChatCompletionService(
		option.WithBaseURL(strings.TrimSuffix(s.BaseURL, "/")+"/"),
		option.WithAPIKey(s.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(s.MaxRetries),
		option.WithRequestTimeout(s.Timeout),
	)
	return &Client{s: s, service: svc}, nil
}

// Complete sends one request; a failure is a *provider.Error.
func (p *Client) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	params := openai.ChatCompletionNewParams{
		Model: req.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(req.System),
			openai.UserMessage(req.Prompt),
		},
		Temperature: openai.Float(req.Temperature),
		Seed:        openai.Int(req.Seed),
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	// The overall time limit covers the retries too.
	cctx, cancel := context.WithTimeout(ctx, p.s.Timeout*time.Duration(p.s.MaxRetries+1))
	defer cancel()
	limit := int64(p.s.MaxResponseBytes)
	res, err := p.service.New(cctx, params, option.WithMiddleware(limitBody(limit)))
	if err != nil {
		return provider.Response{}, p.classify(ctx, cctx, err)
	}
	if len(res.Choices) == 0 {
		return provider.Response{}, &provider.Error{Code: provider.CodeBadResponse, Provider: p.s.ID, Message: "the response has no choices"}
	}
	msg := res.Choices[0].Message
	if msg.Refusal != "" && msg.Content == "" {
		return provider.Response{}, &provider.Error{Code: provider.CodeBadResponse, Provider: p.s.ID, Message: "the model refused: " + bounded(msg.Refusal, 300)}
	}
	return provider.Response{Text: msg.Content, Model: res.Model,
		Usage: provider.Usage{PromptTokens: int(res.Usage.PromptTokens), CompletionTokens: int(res.Usage.CompletionTokens)}}, nil
}

func (p *Client) classify(ctx, cctx context.Context, err error) error {
	var apiErr *openai.Error
	switch {
	case ctx.Err() != nil:
		return &provider.Error{Code: provider.CodeCancelled, Provider: p.s.ID, Message: "cancelled: " + ctx.Err().Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
		return &provider.Error{Code: provider.CodeTimeout, Provider: p.s.ID, Message: fmt.Sprintf("no answer within %s (%d retries)", p.s.Timeout, p.s.MaxRetries), Err: err}
	case errors.As(err, &apiErr):
		return &provider.Error{Code: provider.CodeHTTP, Provider: p.s.ID, Status: apiErr.StatusCode,
			Message: fmt.Sprintf("HTTP %d from %s after %d retries: %s", apiErr.StatusCode, p.s.ID, p.s.MaxRetries, bounded(apiErr.Message, 300)), Err: err}
	case errors.Is(err, errBodyTooLarge):
		return &provider.Error{Code: provider.CodeOutputLimit, Provider: p.s.ID, Message: fmt.Sprintf("the response is larger than %d bytes", p.s.MaxResponseBytes), Err: err}
	case isDecodeError(err):
		return &provider.Error{Code: provider.CodeBadResponse, Provider: p.s.ID, Message: "the answer is not a chat completion: " + bounded(err.Error(), 300), Err: err}
	}
	return &provider.Error{Code: provider.CodeFailed, Provider: p.s.ID, Message: bounded(err.Error(), 300), Err: err}
}

func isDecodeError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "invalid character") || strings.Contains(s, "unexpected end of JSON") || strings.Contains(s, "cannot unmarshal") || strings.Contains(s, "json:")
}

var errBodyTooLarge = errors.New("response body over the limit")

// limitBody caps the response body the SDK reads.
func limitBody(limit int64) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res == nil || res.Body == nil {
			return res, err
		}
		if res.ContentLength > limit {
			res.Body.Close()
			return nil, errBodyTooLarge
		}
		res.Body = &capped{r: res.Body, left: limit}
		return res, nil
	}
}

type capped struct {
	r interface {
		Read([]byte) (int, error)
		Close() error
	}
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the limit: the body may end here, or it is too large.
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
