package mcp

import (
	"context"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/tracing"
)

// attrServer names the configured MCP server of a span.
const attrServer = attribute.Key("t3agent.mcp.server")

// startCall starts the client span of one tools/call; its HTTP requests
// (spans of their own) carry its trace context to the server.
func (s *Service) startCall(ctx context.Context, t target, remote string) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String("tools/call"), semconv.GenAIToolName(remote), attrServer.String(t.id),
	}
	if u, err := url.Parse(t.url); err == nil {
		attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	}
	return s.tracer.Start(ctx, "tools/call "+remote, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endCall ends a call's span: a failure with its kind, an error result
// marked as such.
func endCall(span trace.Span, res tool.Result, err error) {
	switch {
	case err != nil:
		kind := "error"
		if e, ok := err.(*Error); ok {
			kind = string(e.Kind)
		}
		tracing.Fail(span, kind, err.Error())
	case res.IsError:
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
	}
	span.End()
}
