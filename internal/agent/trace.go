package agent

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/tracing"
)

// The runtime's spans, after the OpenTelemetry GenAI conventions: one
// invoke_agent span per run segment (a run, a resumed decision, a queued
// run a worker took), one span per round under it, one chat span per
// provider call under the round (the gate adds execute_tool spans, the MCP
// client its calls). Ids, models, token counts and outcomes only: prompts
// and completions go on a span only with Params.TraceContent, redacted by
// the run's guardrails first.

// Attribute keys of t3agent's own.
const (
	attrRunID         = attribute.Key("t3agent.run.id")
	attrSegment       = attribute.Key("t3agent.run.segment")
	attrOutcome       = attribute.Key("t3agent.run.outcome")
	attrTermination   = attribute.Key("t3agent.run.termination")
	attrRounds        = attribute.Key("t3agent.run.rounds")
	attrToolCalls     = attribute.Key("t3agent.run.tool_calls")
	attrRound         = attribute.Key("t3agent.round")
	attrCallerSource  = attribute.Key("t3agent.caller.source")
	attrCallerOp      = attribute.Key("t3agent.caller.operation")
	attrConfiguration = attribute.Key("t3agent.configuration")
	attrFallbackIndex = attribute.Key("t3agent.fallback.index")
	attrAttempts      = attribute.Key("t3agent.llm.attempts")
)

// spans makes the runtime's spans; the zero value makes no-op spans.
type spans struct {
	tr      trace.Tracer
	content bool
}

func newSpans(tp trace.TracerProvider, content bool) spans {
	return spans{tr: tracing.Tracer(tp), content: content}
}

// segment starts the invoke_agent span of one run segment. id is the
// run's id when known; a new run's is set at the end.
func (s spans) segment(ctx context.Context, kind, id string, cfg *agentconfig.Resolved, caller Caller) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, attrSegment.String(kind)}
	name := "invoke_agent"
	if cfg != nil {
		attrs = append(attrs, semconv.GenAIAgentName(cfg.Configuration.Identifier))
		name += " " + cfg.Configuration.Identifier
	}
	if id != "" {
		attrs = append(attrs, attrRunID.String(id))
	}
	if caller.Source != "" {
		attrs = append(attrs, attrCallerSource.String(caller.Source), attrCallerOp.String(caller.Operation))
	}
	if c, ok := tracing.Conversation(ctx); ok {
		attrs = append(attrs, semconv.GenAIConversationID(strconv.FormatInt(c, 10)))
	}
	return s.tr.Start(ctx, name, trace.WithAttributes(attrs...))
}

// named gives a segment span its configuration once the segment knows it
// (a resumed or queued run reads it from the store).
func (s spans) named(ctx context.Context, identifier string) {
	span := trace.SpanFromContext(ctx)
	span.SetName("invoke_agent " + identifier)
	span.SetAttributes(semconv.GenAIAgentName(identifier))
}

// end ends a segment span with how the segment ended.
func (s spans) end(span trace.Span, res Result, err error) {
	if err != nil {
		tracing.Fail(span, "refused", err.Error())
		span.End()
		return
	}
	if res.RunID != "" {
		span.SetAttributes(attrRunID.String(res.RunID))
	}
	span.SetAttributes(attrOutcome.String(string(res.Outcome)), attrTermination.String(string(res.Termination)),
		attrRounds.Int(res.Rounds), attrToolCalls.Int(res.ToolCalls),
		semconv.GenAIUsageInputTokens(res.Usage.InputTokens), semconv.GenAIUsageOutputTokens(res.Usage.OutputTokens))
	switch res.Outcome {
	case OutcomeCompleted, OutcomeAwaitingApproval, OutcomeAwaitingInput, OutcomeCancelled:
	default:
		tracing.Fail(span, string(res.Outcome), res.Error)
	}
	span.End()
}

// beginRound ends the span of the run's previous round and starts the
// next one's; endRound ends the last.
func (r *run) beginRound(ctx context.Context, round int) context.Context {
	r.endRound()
	ctx, r.roundSpan = r.rt.spans.tr.Start(ctx, "round "+strconv.Itoa(round), trace.WithAttributes(attrRound.Int(round)))
	return ctx
}

func (r *run) endRound() {
	if r.roundSpan != nil {
		r.roundSpan.End()
		r.roundSpan = nil
	}
}

// providerName is the gen_ai.provider.name of an adapter.
func providerName(a agentconfig.Adapter) string {
	switch a {
	case agentconfig.AdapterAnthropic:
		return "anthropic"
	case agentconfig.AdapterGemini:
		return "gcp.gemini"
	}
	return "openai"
}

// chat starts the span of one provider call of a chain entry.
func (s spans) chat(ctx context.Context, e chainEntry, req llm.Request) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(providerName(e.Provider.Adapter)),
		semconv.GenAIRequestModel(req.Model),
		attrConfiguration.String(e.Configuration.Identifier),
		attrFallbackIndex.Int(e.index),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if u, err := url.Parse(e.Provider.Endpoint); err == nil && u.Host != "" {
		attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	} else if host, port, err := net.SplitHostPort(e.Provider.Endpoint); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host), attribute.String("server.port", port))
	}
	return s.tr.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// chatDone ends a provider call's span with its answer.
func (s spans) chatDone(ctx context.Context, span trace.Span, r *run, provider string, req llm.Request, resp llm.Response, err error) {
	defer span.End()
	if s.content && span.IsRecording() {
		span.SetAttributes(semconv.GenAIInputMessagesKey.String(r.traceMessages(ctx, req.Messages)))
	}
	if err != nil {
		le := llm.AsError(provider, err)
		span.SetAttributes(attrAttempts.Int(le.Attempts))
		tracing.Fail(span, string(le.Class), providerError(le))
		return
	}
	span.SetAttributes(
		semconv.GenAIResponseModel(resp.Model),
		semconv.GenAIUsageInputTokens(resp.Usage.InputTokens),
		semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens),
		semconv.GenAIResponseFinishReasons(string(resp.FinishReason)),
		attrAttempts.Int(max(resp.Attempts, 1)),
	)
	if s.content && span.IsRecording() {
		out := []llm.Message{{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}}
		span.SetAttributes(semconv.GenAIOutputMessagesKey.String(r.traceMessages(ctx, out)))
	}
}

// traceMessages renders messages for gen_ai.input.messages and
// gen_ai.output.messages, every text through the run's redaction first;
// tool call arguments are left out.
func (r *run) traceMessages(ctx context.Context, msgs []llm.Message) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content,omitempty"`
		ID      string `json:"id,omitempty"`
		Name    string `json:"name,omitempty"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		stage := guardrail.StageInput
		switch m.Role {
		case llm.RoleAssistant:
			stage = guardrail.StageOutput
		case llm.RoleTool:
			stage = guardrail.StageToolResult
		case llm.RoleSystem:
			stage = guardrail.StageSystemPrompt
		}
		msg := message{Role: string(m.Role)}
		if m.Content != "" {
			msg.Parts = append(msg.Parts, part{Type: "text", Content: r.redacted(ctx, stage, m.Content)})
		}
		for _, c := range m.ToolCalls {
			msg.Parts = append(msg.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name})
		}
		out = append(out, msg)
	}
	b, _ := json.Marshal(out)
	return string(b)
}
