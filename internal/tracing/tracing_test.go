package tracing_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/tracing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// prompt and answer are text that must never reach a span by default;
// the prompt holds a credential that must not reach one ever.
const (
	prompt = "Look up the pumps note. My password=hunter2hunter2"
	answer = "The pumps are blue, says the note."
)

// tracedTurn runs one chat turn (a read-only MCP tool call, then the
// answer) with an in-memory exporter and returns the spans of the turn
// (the fixture's set-up, importing the MCP server, makes traces of its
// own) and how many MCP requests came before the turn.
func tracedTurn(t *testing.T, content bool) ([]tracetest.SpanStub, *chattest.Fixture, int) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.Setup(t.Context(), tracing.SetupParams{Exporter: exp, Version: "test", Config: tracing.Config{CaptureContent: content}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	f := chattest.New(t, chattest.Options{
		TracerProvider: p.TracerProvider(), TraceContent: p.CaptureContent(),
		Rounds: []llmtest.Round{
			{ToolCalls: []llm.ToolCall{llmtest.Call("call_1", chattest.ReadTool, `{"title":"pumps"}`)}, Usage: llm.Usage{InputTokens: 120, OutputTokens: 12}},
			{Text: answer, Usage: llm.Usage{InputTokens: 160, OutputTokens: 9}},
		},
	})
	ctx := t.Context()
	exp.Reset()
	before := len(f.MCPHeaders())
	v, err := f.Service.Create(ctx, f.Users["editor"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Service.Send(ctx, f.Users["editor"], chat.SendParams{ID: v.Conversation.ID, Content: prompt}); err != nil {
		t.Fatal(err)
	}
	f.Drain(t)
	page, err := f.Service.Messages(ctx, f.Users["editor"], v.Conversation.ID, 0)
	if err != nil || page.Conversation.Status != "idle" {
		t.Fatalf("the turn did not complete: %+v, %v", page.Conversation, err)
	}
	return exp.GetSpans(), f, before
}

// tree renders the spans as an indented tree of names, children in start
// order; siblings of one name in a row (the HTTP requests of one call,
// as many as the session needs) are shown once.
func tree(t *testing.T, spans []tracetest.SpanStub) string {
	t.Helper()
	children := map[string][]tracetest.SpanStub{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID().String(); s.Parent.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(list []tracetest.SpanStub, depth int)
	walk = func(list []tracetest.SpanStub, depth int) {
		slices.SortFunc(list, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for i, s := range list {
			if i > 0 && list[i-1].Name == s.Name && len(children[s.SpanContext.SpanID().String()]) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
			walk(children[s.SpanContext.SpanID().String()], depth+1)
		}
	}
	walk(roots, 0)
	return b.String()
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func named(t *testing.T, spans []tracetest.SpanStub, prefix string) []tracetest.SpanStub {
	t.Helper()
	var out []tracetest.SpanStub
	for _, s := range spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no span %q in:\n%s", prefix, tree(t, spans))
	}
	return out
}

// want checks one span's attributes; a want of "*" only needs the key.
func want(t *testing.T, s tracetest.SpanStub, kv map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range kv {
		g, ok := got[attribute.Key(k)]
		switch {
		case !ok:
			t.Errorf("span %q lacks %s", s.Name, k)
		case v != "*" && g.String() != v:
			t.Errorf("span %q: %s = %q, want %q", s.Name, k, g.String(), v)
		}
	}
}

// TestChatTurnSpans: a chat turn with a tool call that goes to an MCP
// server is one trace: the turn, the agent run under it, a span per
// round, the provider calls with their GenAI attributes, the gate's
// execute_tool with its decision and outcome, the MCP tools/call, and
// the HTTP requests under them, whose traceparent reaches the provider
// and the MCP server. No prompt or answer text is on any span.
func TestChatTurnSpans(t *testing.T) {
	t.Parallel()
	spans, f, mcpBefore := tracedTurn(t, false)
	got := tree(t, spans)
	const shape = `chat turn
  invoke_agent chat-config
    round 1
      chat llmtest-large
        HTTP POST
      execute_tool mcp_notes_lookup_note
        tools/call lookup_note
          HTTP POST
    round 2
      chat llmtest-large
        HTTP POST
`
	if got != shape {
		t.Errorf("span tree:\n%s\nwant\n%s", got, shape)
	}
	traceID := named(t, spans, "chat turn")[0].SpanContext.TraceID()
	for _, s := range spans {
		if s.SpanContext.TraceID() != traceID {
			t.Errorf("span %q is in another trace", s.Name)
		}
		if s.Status.Code == codes.Error {
			t.Errorf("span %q failed: %s", s.Name, s.Status.Description)
		}
	}

	turn := named(t, spans, "chat turn")[0]
	run := named(t, spans, "invoke_agent")[0]
	conv := attrs(turn)["gen_ai.conversation.id"].String()
	want(t, run, map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": chattest.Configuration,
		"gen_ai.conversation.id": conv, "t3agent.run.id": "*", "t3agent.run.outcome": "completed",
		"t3agent.caller.source": "chat", "t3agent.run.rounds": "2", "t3agent.run.tool_calls": "1",
		"gen_ai.usage.input_tokens": "280", "gen_ai.usage.output_tokens": "21",
	})
	calls := named(t, spans, "chat llmtest-large")
	want(t, calls[0], map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "llmtest-large",
		"gen_ai.response.model": "llmtest-large", "gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "12",
		"gen_ai.response.finish_reasons": `["tool_calls"]`, "gen_ai.request.max_tokens": "1000", "server.address": "127.0.0.1",
	})
	want(t, calls[1], map[string]string{"gen_ai.usage.input_tokens": "160", "gen_ai.response.finish_reasons": `["stop"]`})
	want(t, named(t, spans, "execute_tool")[0], map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": chattest.ReadTool, "gen_ai.tool.call.id": "call_1",
		"t3agent.gate.decision": "allowed", "t3agent.tool.outcome": "ok", "t3agent.run.id": attrs(run)["t3agent.run.id"].String(),
	})
	want(t, named(t, spans, "tools/call")[0], map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup_note", "t3agent.mcp.server": chattest.MCPServer,
	})

	// The W3C trace context went out with every request.
	for i, r := range f.LLM.Requests() {
		if tp := r.Header.Get("Traceparent"); !strings.Contains(tp, traceID.String()) {
			t.Errorf("provider request %d traceparent %q, want trace %s", i, tp, traceID)
		}
	}
	hdrs := f.MCPHeaders()[mcpBefore:]
	if len(hdrs) == 0 {
		t.Fatal("the MCP server saw no request")
	}
	for i, h := range hdrs {
		if tp := h.Get("Traceparent"); !strings.Contains(tp, traceID.String()) {
			t.Errorf("MCP request %d traceparent %q, want trace %s", i, tp, traceID)
		}
	}

	// Nothing of the conversation's text, in any attribute or event.
	for _, s := range spans {
		text := fmt.Sprint(s.Attributes, s.Events, s.Status)
		for _, secret := range []string{"pumps note", "hunter2", "blue"} {
			if strings.Contains(text, secret) {
				t.Errorf("span %q carries %q: %s", s.Name, secret, text)
			}
		}
	}
}

// TestChatTurnSpansWithContent: with content capture on, the provider
// spans carry the messages and the answer, the credential redacted.
func TestChatTurnSpansWithContent(t *testing.T) {
	t.Parallel()
	spans, _, _ := tracedTurn(t, true)
	calls := named(t, spans, "chat llmtest-large")
	in := attrs(calls[0])["gen_ai.input.messages"].String()
	if !strings.Contains(in, "Look up the pumps note") || !strings.Contains(in, chattest.ConfigPrompt) {
		t.Errorf("input messages lack the prompt: %s", in)
	}
	out := attrs(calls[1])["gen_ai.output.messages"].String()
	if !strings.Contains(out, answer) {
		t.Errorf("output messages lack the answer: %s", out)
	}
	for _, s := range spans {
		if text := fmt.Sprint(s.Attributes, s.Events); strings.Contains(text, "hunter2") {
			t.Errorf("span %q carries the credential: %s", s.Name, text)
		}
	}
}

// TestLogRecordsCarryTraceIDs: a record logged inside a span names the
// trace and the span; one logged outside does not.
func TestLogRecordsCarryTraceIDs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tracing.Tracer(tp).Start(context.Background(), "work")
	log.InfoContext(ctx, "inside")
	span.End()
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	wantIn := "trace_id=" + span.SpanContext().TraceID().String() + " span_id=" + span.SpanContext().SpanID().String()
	if len(lines) != 2 || !strings.Contains(lines[0], wantIn) || !strings.Contains(lines[0], "component=test") || strings.Contains(lines[1], "trace_id") {
		t.Errorf("log lines:\n%s\nwant the first with %s", buf.String(), wantIn)
	}
}
