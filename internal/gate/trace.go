package gate

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/tracing"
)

// Span attributes of a tool call: the GenAI execute_tool span, with the
// gate's decision and how the call ended. Never the arguments or the
// result.
const (
	attrDecision = attribute.Key("t3agent.gate.decision")
	attrReason   = attribute.Key("t3agent.gate.reason")
	attrOutcome  = attribute.Key("t3agent.tool.outcome")
	attrRunID    = attribute.Key("t3agent.run.id")
)

// startCall starts the span of one Invoke.
func (g *Gate) startCall(ctx context.Context, p InvokeParams) (context.Context, trace.Span) {
	name := displayName(p.Name)
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name), semconv.GenAIToolType("function"),
	}
	if p.Call.CallID != "" {
		attrs = append(attrs, semconv.GenAIToolCallID(p.Call.CallID))
	}
	if p.Call.RunID != "" {
		attrs = append(attrs, attrRunID.String(p.Call.RunID))
	}
	return g.tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(attrs...))
}

// traceDecision puts the gate's decision on the call's span.
func traceDecision(ctx context.Context, d Decision) {
	span := trace.SpanFromContext(ctx)
	switch {
	case d.Allowed && d.ObservedOnly:
		span.SetAttributes(attrDecision.String("observed"), attrReason.String(string(ReasonTrustZone)))
	case d.Allowed:
		span.SetAttributes(attrDecision.String("allowed"))
	default:
		span.SetAttributes(attrDecision.String("denied"), attrReason.String(string(d.Reason)))
	}
}

// endCall ends the span with the call's outcome.
func endCall(span trace.Span, outcome Outcome, res tool.Result) {
	span.SetAttributes(attrOutcome.String(string(outcome)))
	switch outcome {
	case OutcomeOK:
	case OutcomeToolError:
		// The tool answered; the model reads the error. Not a failure of
		// the call itself, but marked so it can be found.
		span.SetAttributes(semconv.ErrorTypeKey.String(string(outcome)))
	default:
		tracing.Fail(span, string(outcome), res.Content)
	}
	span.End()
}
