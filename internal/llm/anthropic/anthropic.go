// Package anthropic adapts Anthropic's messages API to llm.Provider over
// the official anthropic-sdk-go.
//
// The mapping: system messages become the separate system prompt; an
// assistant turn's tool calls become tool_use blocks; consecutive tool
// messages become tool_result blocks merged into one user turn (the API
// requires every result of a turn in the next user message), and a user
// message right after them joins that turn too, since roles must
// alternate. max_tokens is mandatory on this wire, so a request without
// one is sent with Params.DefaultMaxTokens.
//
// A Provider is safe for concurrent use and holds no per-call state.
package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	an "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/internal/wire"
)

// DefaultBaseURL is Anthropic's endpoint.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultMaxTokens is sent when a request sets no limit.
const DefaultMaxTokens = 4096

// Params configures New.
type Params struct {
	// Name identifies the provider in telemetry and errors; "" means "anthropic".
	Name string
	// BaseURL is the endpoint root, without /v1; "" means DefaultBaseURL.
	BaseURL string
	// APIKey is sent the way the SDK sends it (Authorization: Bearer).
	APIKey string
	// Headers are added to every request (anthropic-beta, …).
	Headers map[string]string
	// DefaultMaxTokens is used when a request sets none; 0 means
	// DefaultMaxTokens.
	DefaultMaxTokens int
	// HTTPClient is used as given (its transport wrapped to read response
	// headers); nil means llm.NewHTTPClient with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one attempt when HTTPClient is nil.
	Timeout time.Duration
}

// Provider is an llm.Streamer over Anthropic's messages API.
type Provider struct {
	name      string
	key       string
	maxTokens int
	http      *http.Client
	svc       an.MessageService
	models    an.ModelService
}

// New builds a Provider. The SDK's own retries and its reading of
// ANTHROPIC_* variables are disabled.
func New(p Params) (*Provider, error) {
	name := p.Name
	if name == "" {
		name = "anthropic"
	}
	base := p.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	maxTokens := p.DefaultMaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	hc := wire.Client(p.HTTPClient, p.Timeout)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithAPIKey(p.APIKey),
	}
	for k, v := range p.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	client := an.NewClient(opts...)
	return &Provider{name: name, key: p.APIKey, maxTokens: maxTokens, http: hc, svc: client.Messages, models: client.Models}, nil
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return p.name }

// ListModels implements llm.ModelLister.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	ctx, tap := wire.WithTap(ctx)
	var out []llm.ModelInfo
	pager := p.models.ListAutoPaging(ctx, an.ModelListParams{})
	for pager.Next() {
		m := pager.Current()
		out = append(out, llm.ModelInfo{
			ID: m.ID, DisplayName: m.DisplayName, ContextLength: int(m.MaxInputTokens), MaxOutputTokens: int(m.MaxTokens),
		})
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
	params, opts := p.params(req)
	m, err := p.svc.New(ctx, params, opts...)
	if err != nil {
		return llm.Response{}, p.fail(ctx, tap, err)
	}
	return p.response(m, req), nil
}

// ChatStream implements llm.Streamer.
func (p *Provider) ChatStream(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	ctx, tap := wire.WithTap(ctx)
	params, opts := p.params(req)
	stream := p.svc.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var m an.Message
	for stream.Next() {
		ev := stream.Current()
		if err := m.Accumulate(ev); err != nil {
			return llm.Response{}, &llm.Error{Provider: p.name, Class: llm.FailUnknown, Message: wire.Redact(err.Error(), p.key), Attempts: 1}
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" && onDelta != nil {
			onDelta(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return llm.Response{}, p.fail(ctx, tap, err)
	}
	return p.response(&m, req), nil
}

func (p *Provider) response(m *an.Message, req llm.Request) llm.Response {
	resp := llm.Response{
		Model:    m.Model,
		Attempts: 1,
		Provider: p.name,
		Usage: llm.Usage{
			// Cached prompt tokens are reported apart; all of them were input.
			InputTokens:  int(m.Usage.InputTokens + m.Usage.CacheCreationInputTokens + m.Usage.CacheReadInputTokens),
			OutputTokens: int(m.Usage.OutputTokens),
		},
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := strings.TrimSpace(string(b.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{
				ID: wire.CallID(b.ID, len(resp.ToolCalls)), Name: b.Name, Arguments: args,
			})
		}
	}
	resp.Content = text.String()
	resp.FinishReason = Finish(string(m.StopReason), len(resp.ToolCalls) > 0)
	return resp
}

func (p *Provider) params(req llm.Request) (an.MessageNewParams, []option.RequestOption) {
	system, msgs := Messages(req.Messages)
	params := an.MessageNewParams{
		Model:     an.Model(req.Model),
		MaxTokens: int64(p.maxTokens),
		Messages:  msgs,
		System:    system,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if len(req.Tools) > 0 {
		params.Tools = Tools(req.Tools)
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// Current SDK params have no temperature field; the API still takes it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return params, opts
}

func (p *Provider) fail(ctx context.Context, tap *wire.Tap, err error) *llm.Error {
	f := wire.Failure{Provider: p.name, Err: err, Tap: tap, Secrets: []string{p.key}}
	var apiErr *an.Error
	if errors.As(err, &apiErr) {
		// apiErr.Error() quotes the URL and raw body; use the parsed message.
		f.Status, f.Message, f.Err = apiErr.StatusCode, apiErr.Message, nil
	}
	return wire.Classify(ctx, f)
}

// Messages splits a transcript into the system prompt and the turns.
func Messages(msgs []llm.Message) ([]an.TextBlockParam, []an.MessageParam) {
	type turn struct {
		user   bool
		blocks []an.ContentBlockParamUnion
	}
	var system []an.TextBlockParam
	var turns []turn
	// add appends blocks to the last turn when it has the same role.
	add := func(user bool, blocks ...an.ContentBlockParamUnion) {
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				system = append(system, an.TextBlockParam{Text: m.Content})
			}
		case llm.RoleUser:
			add(true, an.NewTextBlock(m.Content))
		case llm.RoleTool:
			add(true, an.NewToolResultBlock(m.ToolCallID, m.Content, false))
		case llm.RoleAssistant:
			var blocks []an.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, an.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, an.NewToolUseBlock(tc.ID, wire.ObjectArgs(tc.Arguments), tc.Name))
			}
			if len(blocks) > 0 { // the API rejects empty text blocks
				add(false, blocks...)
			}
		}
	}
	out := make([]an.MessageParam, 0, len(turns))
	for _, t := range turns {
		if t.user {
			out = append(out, an.NewUserMessage(t.blocks...))
		} else {
			out = append(out, an.NewAssistantMessage(t.blocks...))
		}
	}
	return system, out
}

// Tools maps tool definitions to custom tools with an input schema.
func Tools(tools []llm.ToolDef) []an.ToolUnionParam {
	out := make([]an.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		schema := wire.Schema(t.Parameters)
		in := an.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "type" && k != "properties" && k != "required" {
				if in.ExtraFields == nil {
					in.ExtraFields = map[string]any{}
				}
				in.ExtraFields[k] = v
			}
		}
		tp := an.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tp.Description = an.String(t.Description)
		}
		out = append(out, an.ToolUnionParam{OfTool: &tp})
	}
	return out
}

// Finish maps a stop reason.
func Finish(reason string, hasCalls bool) llm.FinishReason {
	switch reason {
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	case "end_turn", "stop_sequence", "":
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	}
	return llm.FinishOther
}
