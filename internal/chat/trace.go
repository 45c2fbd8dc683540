package chat

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tracing"
)

// startTurn starts the span of one claimed turn; the agent run under it
// carries the conversation's id too.
func (s *Service) startTurn(ctx context.Context, c store.Conversation) (context.Context, trace.Span) {
	ctx = tracing.WithConversation(ctx, c.ID)
	return s.tracer.Start(ctx, "chat turn", trace.WithAttributes(
		semconv.GenAIConversationID(strconv.FormatInt(c.ID, 10)),
		attribute.String("t3agent.chat.decision", string(c.Decision)),
	))
}

func endTurn(span trace.Span, err error) {
	if err != nil {
		tracing.Fail(span, "internal", "the turn could not be written")
	}
	span.End()
}
