package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup is a parallel test's fixture.
func setup(t *testing.T, opts chattest.Options) *chattest.Fixture {
	t.Helper()
	t.Parallel()
	return chattest.New(t, opts)
}

// forStores runs fn on SQLite, and on PostgreSQL when the machine has one.
func forStores(t *testing.T, fn func(t *testing.T, postgres bool)) {
	t.Helper()
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { fn(t, pg) })
	}
}

// rounds is a script.
func rounds(r ...llmtest.Round) []llmtest.Round { return r }

// beside is a round in which the model writes text beside tool calls.
func beside(text string, calls ...llm.ToolCall) llmtest.Round {
	return llmtest.Round{Text: text, ToolCalls: calls}
}

func publish(id, text string) llm.ToolCall {
	return llmtest.Call(id, chattest.WriteTool, `{"text":"`+text+`"}`)
}

// code is the chat code and HTTP status of a refusal ("" for nil, "!"
// for another error).
func code(err error) (chat.Code, int) {
	if err == nil {
		return "", 0
	}
	var ce *chat.Error
	if errors.As(err, &ce) {
		return ce.Code, ce.Status
	}
	return "!" + chat.Code(err.Error()), 0
}

func wantCode(t *testing.T, what string, err error, want chat.Code, status int) {
	t.Helper()
	if c, s := code(err); c != want || s != status {
		t.Errorf("%s: got %q (%d), want %q (%d); err = %v", what, c, s, want, status, err)
	}
}

// shape renders messages as "role[beside][notice]:content" lines.
func shape(ms []store.ChatMessage) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(string(m.Role))
		if m.BesideToolCall {
			b.WriteString("[beside]")
		}
		if m.Notice != "" {
			b.WriteString("[" + m.Notice + "]")
		}
		b.WriteString(":" + m.Content + "\n")
	}
	return b.String()
}

// wireMessages are the role:content pairs of an OpenAI request.
func wireMessages(t testing.TB, r llmtest.Request) []string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(body.Messages))
	for i, m := range body.Messages {
		c, _ := m.Content.(string)
		out[i] = m.Role + ":" + c
	}
	return out
}

// page reads a conversation as its owner would.
func page(t *testing.T, f *chattest.Fixture, user string, id int64) chat.Page {
	t.Helper()
	p, err := f.Service.Messages(context.Background(), f.Users[user], id, 0)
	if err != nil {
		t.Fatalf("messages of %d as %s: %v", id, user, err)
	}
	return p
}

// run reads the agent run a conversation points at.
func run(t *testing.T, f *chattest.Fixture, id string) store.Run {
	t.Helper()
	r, err := f.Store.Run(context.Background(), id)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return r
}

// runs lists every run, newest first.
func allRuns(t *testing.T, f *chattest.Fixture) []store.Run {
	t.Helper()
	rs, err := f.Store.Runs(context.Background(), store.ListRunsParams{Limit: store.MaxRunLimit})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
