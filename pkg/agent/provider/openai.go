package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openaiProvider sends Chat Completions through the OpenAI Go SDK.
type openaiProvider struct {
	rt      *Runtime
	service openai.ChatCompletionService
}

func newOpenAI(rt *Runtime, opts Options) (Provider, error) {
	cfg := func(msg string) error { return &Error{Code: CodeConfig, Provider: rt.ID, Message: msg} }
	if rt.SDK == nil || rt.Auth == nil || rt.BaseURL == "" {
		return nil, cfg("an openai runtime needs sdk, baseUrl and auth.apiKeyEnv")
	}
	linked := opts.SDKVersion
	if linked == "" {
		linked = LinkedSDKVersion()
	}
	if linked != "" && linked != rt.SDK.Version {
		return nil, cfg(fmt.Sprintf("the runtime pins %s %s but this dome links %s; pin %s or use a dome built with that SDK", rt.SDK.Module, rt.SDK.Version, linked, linked))
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
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// The service is made from explicit options only: the SDK's
	// NewClient would also read OPENAI_BASE_URL, OPENAI_ORG_ID and friends
	// from the environment, which a pinned runtime must not depend on.
	svc := openai.NewChatCompletionService(
		option.WithBaseURL(strings.TrimSuffix(base, "/")+"/"),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(rt.MaxRetries),
		option.WithRequestTimeout(rt.Timeout()),
	)
	return &openaiProvider{rt: rt, service: svc}, nil
}

func (p *openaiProvider) Kind() string { return "openai" }

func (p *openaiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	if err := p.rt.CheckModel(req.Model); err != nil {
		return Response{}, err
	}
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
	cctx, cancel := context.WithTimeout(ctx, p.rt.Timeout()*time.Duration(p.rt.MaxRetries+1))
	defer cancel()
	limit := int64(p.rt.ResponseLimit())
	res, err := p.service.New(cctx, params, option.WithMiddleware(limitBody(limit)))
	if err != nil {
		return Response{}, p.classify(ctx, cctx, err)
	}
	if len(res.Choices) == 0 {
		return Response{}, &Error{Code: CodeBadResponse, Provider: p.rt.ID, Message: "the response has no choices"}
	}
	msg := res.Choices[0].Message
	if msg.Refusal != "" && msg.Content == "" {
		return Response{}, &Error{Code: CodeBadResponse, Provider: p.rt.ID, Message: "the model refused: " + bounded(msg.Refusal, 300)}
	}
	return Response{Text: msg.Content, Model: res.Model,
		Usage: Usage{PromptTokens: int(res.Usage.PromptTokens), CompletionTokens: int(res.Usage.CompletionTokens)}}, nil
}

func (p *openaiProvider) classify(ctx, cctx context.Context, err error) error {
	var apiErr *openai.Error
	switch {
	case ctx.Err() != nil:
		return &Error{Code: CodeCancelled, Provider: p.rt.ID, Message: "cancelled: " + ctx.Err().Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
		return &Error{Code: CodeTimeout, Provider: p.rt.ID, Message: fmt.Sprintf("no answer within %s (%d retries)", p.rt.Timeout(), p.rt.MaxRetries), Err: err}
	case errors.As(err, &apiErr):
		return &Error{Code: CodeHTTP, Provider: p.rt.ID, Status: apiErr.StatusCode,
			Message: fmt.Sprintf("HTTP %d from %s after %d retries: %s", apiErr.StatusCode, p.rt.ID, p.rt.MaxRetries, bounded(apiErr.Message, 300)), Err: err}
	case errors.Is(err, errBodyTooLarge):
		return &Error{Code: CodeOutputLimit, Provider: p.rt.ID, Message: fmt.Sprintf("the response is larger than %d bytes", p.rt.ResponseLimit()), Err: err}
	case isDecodeError(err):
		return &Error{Code: CodeBadResponse, Provider: p.rt.ID, Message: "the answer is not a chat completion: " + bounded(err.Error(), 300), Err: err}
	}
	return &Error{Code: CodeFailed, Provider: p.rt.ID, Message: bounded(err.Error(), 300), Err: err}
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
