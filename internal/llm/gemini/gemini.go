// Package gemini adapts Google's Gemini API to llm.Provider over the
// official google.golang.org/genai SDK.
//
// The mapping: system messages become the system instruction; the
// assistant is the "model" role; tool calls are functionCall parts, with
// arguments parsed into an object; tool messages are functionResponse
// parts ({"output": content}) named after the call they answer, and
// consecutive ones share one user turn, as the API requires. Gemini often
// gives calls no id, so they get call_<index>; a call's thought signature
// travels in ToolCall.Signature and is sent back with it.
//
// A Provider is safe for concurrent use and holds no per-call state.
package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/internal/wire"
)

// Params configures New.
type Params struct {
	// Name identifies the provider in telemetry and errors; "" means "gemini".
	Name string
	// BaseURL overrides the endpoint root ("" means Google's).
	BaseURL string
	// APIVersion overrides the API version ("" means the SDK's, v1beta).
	APIVersion string
	// APIKey is required; it is sent in the x-goog-api-key header.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
	// HTTPClient is used as given (its transport wrapped to read response
	// headers); nil means llm.NewHTTPClient with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one attempt when HTTPClient is nil.
	Timeout time.Duration
}

// Provider is an llm.Streamer over the Gemini API.
type Provider struct {
	name   string
	key    string
	http   *http.Client
	models *genai.Models
}

// New builds a Provider. The SDK's retries and automatic continuation
// stay off, so one Chat is one HTTP request.
func New(ctx context.Context, p Params) (*Provider, error) {
	name := p.Name
	if name == "" {
		name = "gemini"
	}
	if p.APIKey == "" {
		// Without one the SDK would fall back to GOOGLE_API_KEY.
		return nil, &llm.Error{Provider: name, Class: llm.FailConfiguration, Message: "an API key is required"}
	}
	hc := wire.Client(p.HTTPClient, p.Timeout)
	opts := genai.HTTPOptions{BaseURL: p.BaseURL, APIVersion: p.APIVersion}
	if len(p.Headers) > 0 {
		opts.Headers = http.Header{}
		for k, v := range p.Headers {
			opts.Headers.Set(k, v)
		}
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: p.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc, HTTPOptions: opts,
	})
	if err != nil {
		return nil, &llm.Error{Provider: name, Class: llm.FailConfiguration, Message: wire.Redact(err.Error(), p.APIKey)}
	}
	return &Provider{name: name, key: p.APIKey, http: hc, models: client.Models}, nil
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return p.name }

// ListModels implements llm.ModelLister.
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	ctx, tap := wire.WithTap(ctx)
	var out []llm.ModelInfo
	for m, err := range p.models.All(ctx) {
		if err != nil {
			return nil, p.fail(ctx, tap, err)
		}
		out = append(out, llm.ModelInfo{
			ID: strings.TrimPrefix(m.Name, "models/"), DisplayName: m.DisplayName,
			ContextLength: int(m.InputTokenLimit), MaxOutputTokens: int(m.OutputTokenLimit),
		})
	}
	return out, nil
}

// Close releases idle connections.
func (p *Provider) Close() { wire.CloseIdle(p.http) }

// Chat implements llm.Provider.
func (p *Provider) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	ctx, tap := wire.WithTap(ctx)
	contents, cfg := Request(req)
	r, err := p.models.GenerateContent(ctx, req.Model, contents, cfg)
	if err != nil {
		return llm.Response{}, p.fail(ctx, tap, err)
	}
	var acc accumulator
	acc.add(r, nil)
	return acc.response(p.name, req), nil
}

// ChatStream implements llm.Streamer.
func (p *Provider) ChatStream(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	ctx, tap := wire.WithTap(ctx)
	contents, cfg := Request(req)
	var acc accumulator
	for r, err := range p.models.GenerateContentStream(ctx, req.Model, contents, cfg) {
		if err != nil {
			return llm.Response{}, p.fail(ctx, tap, err)
		}
		acc.add(r, onDelta)
	}
	return acc.response(p.name, req), nil
}

// accumulator folds one answer or a stream of chunks into a Response.
type accumulator struct {
	text   strings.Builder
	calls  []llm.ToolCall
	finish genai.FinishReason
	block  string
	model  string
	usage  llm.Usage
}

func (a *accumulator) add(r *genai.GenerateContentResponse, onDelta func(string)) {
	if r == nil {
		return
	}
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil {
		a.usage = llm.Usage{
			InputTokens:  int(u.PromptTokenCount + u.ToolUsePromptTokenCount),
			OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
		}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.block = string(pf.BlockReason)
	}
	if len(r.Candidates) == 0 {
		return
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Content == nil {
		return
	}
	for _, part := range c.Content.Parts {
		switch {
		case part.FunctionCall != nil:
			args := "{}"
			if len(part.FunctionCall.Args) > 0 {
				if b, err := json.Marshal(part.FunctionCall.Args); err == nil {
					args = string(b)
				}
			}
			tc := llm.ToolCall{ID: wire.CallID(part.FunctionCall.ID, len(a.calls)), Name: part.FunctionCall.Name, Arguments: args}
			if len(part.ThoughtSignature) > 0 {
				tc.Signature = base64.StdEncoding.EncodeToString(part.ThoughtSignature)
			}
			a.calls = append(a.calls, tc)
		case part.Text != "" && !part.Thought:
			a.text.WriteString(part.Text)
			if onDelta != nil {
				onDelta(part.Text)
			}
		}
	}
}

func (a *accumulator) response(name string, req llm.Request) llm.Response {
	resp := llm.Response{
		Content: a.text.String(), ToolCalls: a.calls, Usage: a.usage,
		Model: a.model, Attempts: 1, Provider: name,
		FinishReason: Finish(a.finish, len(a.calls) > 0),
	}
	if a.block != "" {
		resp.FinishReason = llm.FinishContentFilter
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	return resp
}

func (p *Provider) fail(ctx context.Context, tap *wire.Tap, err error) *llm.Error {
	f := wire.Failure{Provider: p.name, Err: err, Tap: tap, Secrets: []string{p.key}}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		f.Status, f.Message, f.Err = apiErr.Code, apiErr.Message, nil
	}
	e := wire.Classify(ctx, f)
	if e.Class == llm.FailRateLimit && e.RetryAfter == 0 {
		e.RetryAfter = retryInfo(apiErr.Details)
	}
	return e
}

// retryInfo reads google.rpc.RetryInfo's retryDelay ("12s"), which Gemini
// sends on 429 in place of a Retry-After header.
func retryInfo(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if dur, err := time.ParseDuration(s); err == nil && dur > 0 {
				return dur
			}
		}
	}
	return 0
}

// Request maps a request to contents and a generation config.
func Request(req llm.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	off := false
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: &off}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		cfg.Temperature = &t
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, &genai.FunctionDeclaration{
				Name: t.Name, Description: t.Description, ParametersJsonSchema: wire.Schema(t.Parameters),
			})
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	names := map[string]string{} // call id → function name, for responses
	var contents []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if m.Content == "" {
				continue
			}
			if cfg.SystemInstruction == nil {
				cfg.SystemInstruction = &genai.Content{}
			}
			cfg.SystemInstruction.Parts = append(cfg.SystemInstruction.Parts, &genai.Part{Text: m.Content})
		case llm.RoleUser:
			add(genai.RoleUser, &genai.Part{Text: m.Content})
		case llm.RoleAssistant:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: wire.ObjectArgs(tc.Arguments)}}
				if sig, err := base64.StdEncoding.DecodeString(tc.Signature); err == nil && len(sig) > 0 {
					part.ThoughtSignature = sig
				}
				parts = append(parts, part)
			}
			if len(parts) > 0 {
				add(genai.RoleModel, parts...)
			}
		case llm.RoleTool:
			add(genai.RoleUser, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: m.ToolCallID, Name: names[m.ToolCallID], Response: map[string]any{"output": m.Content},
			}})
		}
	}
	return contents, cfg
}

// Finish maps a finish reason. Gemini says STOP when it calls functions.
func Finish(reason genai.FinishReason, hasCalls bool) llm.FinishReason {
	switch reason {
	case genai.FinishReasonStop, genai.FinishReasonUnspecified, "":
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case genai.FinishReasonMaxTokens:
		return llm.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent:
		return llm.FinishContentFilter
	}
	if hasCalls {
		return llm.FinishToolCalls
	}
	return llm.FinishOther
}
