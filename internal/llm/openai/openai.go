// Package openai adapts OpenAI's chat completions, and every endpoint that
// speaks them (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Mistral,
// Groq, Azure OpenAI), to llm.Provider over the official openai-go SDK.
//
// Endpoints differ only in Params: BaseURL, the header the key travels in
// (Azure: "api-key"), extra headers and query parameters (Azure:
// api-version), and which field carries the token limit.
//
// A Provider is safe for concurrent use and holds no per-call state.
package openai

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/internal/wire"
)

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Token-limit fields: OpenAI's current models want max_completion_tokens;
// most compatible servers only know max_tokens.
const (
	MaxCompletionTokens = "max_completion_tokens"
	MaxTokens           = "max_tokens"
)

// Params configures New.
type Params struct {
	// Name identifies the provider in telemetry and errors; "" means "openai".
	Name string
	// BaseURL is the endpoint up to and including the API version
	// ("http://localhost:11434/v1"); "" means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …", or in APIKeyHeader when
	// set. Empty sends no credentials (local servers).
	APIKey string
	// APIKeyHeader names a header that carries the key bare instead
	// (Azure OpenAI: "api-key").
	APIKeyHeader string
	// Headers are added to every request (OpenRouter's HTTP-Referer, …).
	Headers map[string]string
	// Query parameters are added to every request (Azure: api-version).
	Query map[string]string
	// TokenField is MaxTokens or MaxCompletionTokens; "" picks
	// MaxCompletionTokens for OpenAI itself and MaxTokens elsewhere.
	TokenField string
	// NoStreamUsage leaves out stream_options.include_usage, for servers
	// that reject it; streamed answers then carry no usage.
	NoStreamUsage bool
	// HTTPClient is used as given (its transport wrapped to read response
	// headers); nil means llm.NewHTTPClient with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one attempt when HTTPClient is nil.
	Timeout time.Duration
}

// Provider is an llm.Streamer over one OpenAI-compatible endpoint.
type Provider struct {
	name       string
	key        string
	tokenField string
	noUsage    bool
	http       *http.Client
	svc        oa.ChatCompletionService
	models     oa.ModelService
}

// New builds a Provider. The SDK's own retries are disabled: llm.Retry
// does retrying, so attempt counts are exact.
func New(p Params) (*Provider, error) {
	name := p.Name
	if name == "" {
		name = "openai"
	}
	base := p.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	tokenField := p.TokenField
	switch tokenField {
	case "":
		tokenField = MaxTokens
		if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
			tokenField = MaxCompletionTokens
		}
	case MaxTokens, MaxCompletionTokens:
	default:
		return nil, &llm.Error{Provider: name, Class: llm.FailConfiguration, Message: "unknown token field " + tokenField}
	}
	hc := wire.Client(p.HTTPClient, p.Timeout)
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	switch {
	case p.APIKey != "" && p.APIKeyHeader != "":
		opts = append(opts, option.WithHeader(p.APIKeyHeader, p.APIKey))
	case p.APIKey != "":
		opts = append(opts, option.WithAPIKey(p.APIKey))
	}
	for k, v := range p.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	for k, v := range p.Query {
		opts = append(opts, option.WithQuery(k, v))
	}
	// NewChatCompletionService, unlike NewClient, reads no OPENAI_*
	// environment: a configured provider must not pick up ambient keys.
	return &Provider{
		name: name, key: p.APIKey, tokenField: tokenField, noUsage: p.NoStreamUsage,
		http: hc, svc: oa.NewChatCompletionService(opts...), models: oa.NewModelService(opts...),
	}, nil
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return p.name }

// ListModels implements llm.ModelLister: ids only, as the wire gives.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	ctx, tap := wire.WithTap(ctx)
	var out []llm.ModelInfo
	pager := p.models.ListAutoPaging(ctx)
	for pager.Next() {
		out = append(out, llm.ModelInfo{ID: pager.Current().ID})
	}
	if err := pager.Err(); err != nil {
		return nil, p.fail(ctx, tap, err)
	}
	return out, nil
}

// Close releases idle connections.
func (p *Provider) Close() { wire.CloseIdle(p.http) }

// Chat implements llm.Provider.
func (p *Provider) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	ctx, tap := wire.WithTap(ctx)
	c, err := p.svc.New(ctx, p.params(req))
	if err != nil {
		return llm.Response{}, p.fail(ctx, tap, err)
	}
	if len(c.Choices) == 0 {
		return llm.Response{}, &llm.Error{Provider: p.name, Class: llm.FailUnknown, Message: "answer has no choices", Attempts: 1}
	}
	ch := c.Choices[0]
	resp := llm.Response{
		Content:  ch.Message.Content,
		Model:    orDefault(c.Model, req.Model),
		Usage:    llm.Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens)},
		Attempts: 1,
		Provider: p.name,
	}
	for i, tc := range ch.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{
			ID: wire.CallID(tc.ID, i), Name: tc.Function.Name, Arguments: tc.Function.Arguments,
		})
	}
	finish := ch.FinishReason
	if resp.Content == "" && ch.Message.Refusal != "" {
		resp.Content, finish = ch.Message.Refusal, "content_filter"
	}
	resp.FinishReason = Finish(finish, len(resp.ToolCalls) > 0)
	return resp, nil
}

// ChatStream implements llm.Streamer.
func (p *Provider) ChatStream(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	ctx, tap := wire.WithTap(ctx)
	params := p.params(req)
	if !p.noUsage {
		params.StreamOptions = oa.ChatCompletionStreamOptionsParam{IncludeUsage: oa.Bool(true)}
	}
	stream := p.svc.NewStreaming(ctx, params)
	defer stream.Close()
	var (
		text    strings.Builder
		refusal strings.Builder
		finish  string
		model   string
		usage   llm.Usage
		calls   = map[int64]*llm.ToolCall{}
		order   []int64
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			usage = llm.Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				if onDelta != nil {
					onDelta(d)
				}
			}
			refusal.WriteString(ch.Delta.Refusal)
			for _, tc := range ch.Delta.ToolCalls {
				c, ok := calls[tc.Index]
				if !ok {
					c = &llm.ToolCall{}
					calls[tc.Index] = c
					order = append(order, tc.Index)
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if c.Name == "" {
					c.Name = tc.Function.Name
				}
				c.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return llm.Response{}, p.fail(ctx, tap, err)
	}
	slices.Sort(order)
	resp := llm.Response{Content: text.String(), Model: orDefault(model, req.Model), Usage: usage, Attempts: 1, Provider: p.name}
	for i, idx := range order {
		c := *calls[idx]
		c.ID = wire.CallID(c.ID, i)
		resp.ToolCalls = append(resp.ToolCalls, c)
	}
	if resp.Content == "" && refusal.Len() > 0 {
		resp.Content, finish = refusal.String(), "content_filter"
	}
	resp.FinishReason = Finish(finish, len(resp.ToolCalls) > 0)
	return resp, nil
}

func (p *Provider) params(req llm.Request) oa.ChatCompletionNewParams {
	params := oa.ChatCompletionNewParams{
		Model:    shared.ChatModel(req.Model),
		Messages: Messages(req.Messages),
	}
	if len(req.Tools) > 0 {
		params.Tools = Tools(req.Tools)
	}
	if req.Temperature != nil {
		params.Temperature = oa.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.tokenField == MaxCompletionTokens {
			params.MaxCompletionTokens = oa.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = oa.Int(int64(req.MaxTokens))
		}
	}
	return params
}

func (p *Provider) fail(ctx context.Context, tap *wire.Tap, err error) *llm.Error {
	f := wire.Failure{Provider: p.name, Err: err, Tap: tap, Secrets: []string{p.key}}
	var apiErr *oa.Error
	if errors.As(err, &apiErr) {
		f.Status, f.Message, f.Err = apiErr.StatusCode, apiErr.Message, nil
	}
	return wire.Classify(ctx, f)
}

// Messages maps a transcript to the chat-completions wire. Tool-call
// arguments go verbatim, empty ones as "{}".
func Messages(msgs []llm.Message) []oa.ChatCompletionMessageParamUnion {
	out := make([]oa.ChatCompletionMessageParamUnion, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			out = append(out, oa.SystemMessage(m.Content))
		case llm.RoleUser:
			out = append(out, oa.UserMessage(m.Content))
		case llm.RoleTool:
			out = append(out, oa.ToolMessage(m.Content, m.ToolCallID))
		case llm.RoleAssistant:
			a := oa.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = oa.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: tc.Name, Arguments: wire.ArgsText(tc.Arguments),
						},
					},
				})
			}
			out = append(out, oa.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// Tools maps tool definitions; parameters are normalised so that empty
// properties go out as {} and never as [].
func Tools(tools []llm.ToolDef) []oa.ChatCompletionToolUnionParam {
	out := make([]oa.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(wire.RawSchema(t.Parameters))}
		if t.Description != "" {
			fn.Description = oa.String(t.Description)
		}
		out = append(out, oa.ChatCompletionFunctionTool(fn))
	}
	return out
}

// Finish maps a wire finish reason. Some compatible servers say "stop"
// while returning tool calls; the calls win.
func Finish(reason string, hasCalls bool) llm.FinishReason {
	switch reason {
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "stop", "":
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	}
	return llm.FinishOther
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
