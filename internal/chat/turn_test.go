package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// TestOutcomeMapping maps every outcome of a turn onto the conversation,
// as the seed says.
func TestOutcomeMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     chattest.Options
		status   store.ConversationStatus
		messages string // after the user's "Hello"
		code     chat.Code
		errText  string // a fragment of the stored error
		hasRun   bool
		requests int
	}{
		{
			name: "completed with beside texts in round order",
			opts: chattest.Options{Rounds: rounds(
				beside("Let me look that up.", llmtest.Call("c1", chattest.ReadTool, `{"title":"pumps"}`)),
				beside("One more check.", llmtest.Call("c2", chattest.ReadTool, `{"title":"colours"}`)),
				llmtest.Text("Pumps are blue."),
			)},
			status:   store.ConversationIdle,
			messages: "assistant[beside]:Let me look that up.\nassistant[beside]:One more check.\nassistant:Pumps are blue.\n",
			requests: 3,
		},
		{
			name:     "awaiting approval with its card",
			opts:     chattest.Options{Rounds: rounds(beside("I will publish the note.", publish("c1", "hello")))},
			status:   store.ConversationAwaitingApproval,
			messages: "assistant[beside]:I will publish the note.\n",
			hasRun:   true,
			requests: 1,
		},
		{
			name:     "awaiting input with the question",
			opts:     chattest.Options{Rounds: rounds(beside("I need to know one thing.", llmtest.Call("c1", chattest.InputTool, `{}`)))},
			status:   store.ConversationAwaitingInput,
			messages: "assistant[beside]:I need to know one thing.\nassistant:Which variant should I use?\n",
			hasRun:   true,
			requests: 1,
		},
		{
			name:     "a failed run takes the default arm, sanitised",
			opts:     chattest.Options{Rounds: rounds(llmtest.Status(http.StatusUnauthorized).WithMessage("bad key sk-live-0123456789abcdef at https://api.example.com/v1"))},
			status:   store.ConversationFailed,
			code:     chat.CodeRunFailed,
			hasRun:   true,
			requests: 1,
		},
		{
			name:    "no chat task",
			opts:    chattest.Options{Settings: &chat.Settings{}},
			status:  store.ConversationFailed,
			code:    chat.CodeChatNotConfigured,
			errText: "No chat task",
		},
		{
			name:    "a task whose configuration is inactive",
			opts:    chattest.Options{ConfigYAML: "active: false"},
			status:  store.ConversationFailed,
			code:    chat.CodeChatNotConfigured,
			errText: "inactive",
		},
		{
			name:    "a task that does not exist",
			opts:    chattest.Options{Settings: &chat.Settings{Task: "nosuch"}},
			status:  store.ConversationFailed,
			code:    chat.CodeChatNotConfigured,
			errText: "nosuch",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, tc.opts)
			id := f.Start(t, "editor", "Hello")
			f.Drain(t)
			c := f.Conversation(t, id)
			if c.Status != tc.status || c.ErrorCode != string(tc.code) {
				t.Fatalf("status %s, code %q (%s); want %s, %q", c.Status, c.ErrorCode, c.ErrorMessage, tc.status, tc.code)
			}
			if got := shape(f.Messages(t, id)); got != "user:Hello\n"+tc.messages {
				t.Errorf("messages:\n%s\nwant:\nuser:Hello\n%s", got, tc.messages)
			}
			if (c.RunID != "") != tc.hasRun {
				t.Errorf("run id %q, want one: %v", c.RunID, tc.hasRun)
			}
			if tc.code == "" && c.ErrorMessage != "" {
				t.Errorf("error message %q kept", c.ErrorMessage)
			}
			if tc.code != "" && !strings.Contains(c.ErrorMessage, tc.errText) {
				t.Errorf("error message %q, want it to hold %q", c.ErrorMessage, tc.errText)
			}
			for _, secret := range []string{"sk-live", "api.example.com"} {
				if strings.Contains(c.ErrorMessage, secret) {
					t.Errorf("the stored error %q holds %q", c.ErrorMessage, secret)
				}
			}
			if c.ClaimID != "" || c.Decision != store.DecisionNone {
				t.Errorf("claim %q, decision %q left", c.ClaimID, c.Decision)
			}
			if n := len(f.LLM.Requests()); n != tc.requests {
				t.Errorf("%d provider requests, want %d", n, tc.requests)
			}
			if tc.requests > 0 {
				rs := allRuns(t, f)
				if len(rs) != 1 || rs[0].CallerSource != "chat" || rs[0].CallerOperation != "chatTurn" || rs[0].OwnerUsername != "editor" {
					t.Errorf("runs: %+v", rs)
				}
			}
			p := page(t, f, "editor", id)
			switch tc.status {
			case store.ConversationAwaitingApproval:
				if p.Pending == nil || len(p.Pending.Calls) != 1 || p.Pending.Calls[0].Name != chattest.WriteTool || p.Pending.Digest == "" || !p.MayDecide {
					t.Errorf("card: %+v, may decide %v", p.Pending, p.MayDecide)
				}
			case store.ConversationAwaitingInput:
				if p.Pending == nil || p.Pending.Input != chattest.InputTool || !json.Valid(p.Pending.Schema) || p.Pending.Digest == "" {
					t.Errorf("question: %+v", p.Pending)
				}
			default:
				if p.Pending != nil {
					t.Errorf("pending %+v on a %s conversation", p.Pending, tc.status)
				}
			}
			if p.Resumable != (tc.status == store.ConversationFailed) {
				t.Errorf("resumable %v for %s", p.Resumable, tc.status)
			}
		})
	}
}

// TestTranscript: the next turn reads the system message (configuration
// prompt, identity contract, task prompt) and the stored messages, the
// beside texts joined with the answer that follows them.
func TestTranscript(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(
		beside("Let me look that up.", llmtest.Call("c1", chattest.ReadTool, `{"title":"pumps"}`)),
		beside("One more check.", llmtest.Call("c2", chattest.ReadTool, `{"title":"colours"}`)),
		llmtest.Text("Pumps are blue."),
		llmtest.Text("Yes, all of them."),
	)})
	ctx := context.Background()
	ed := f.Users["editor"]
	id := f.Start(t, "editor", "What colour are pumps?")
	f.Drain(t)
	if _, err := f.Service.Send(ctx, ed, chat.SendParams{ID: id, Content: "All of them?"}); err != nil {
		t.Fatal(err)
	}
	f.Drain(t)
	got := wireMessages(t, f.LLM.Request(3))
	want := []string{
		"user:What colour are pumps?",
		"assistant:Let me look that up.\n\nOne more check.\n\nPumps are blue.",
		"user:All of them?",
	}
	if len(got) != 4 || !slices.Equal(got[1:], want) {
		t.Fatalf("transcript:\n%s\nwant system + \n%s", strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n"))
	}
	sys := got[0]
	for _, part := range []string{"system:" + chattest.ConfigPrompt, "t3agent assistant", `"Nordlicht Pumps"`, "Never invent data", chattest.TaskPrompt} {
		if !strings.Contains(sys, part) {
			t.Errorf("system message lacks %q:\n%s", part, sys)
		}
	}
	if strings.Count(sys, chattest.ConfigPrompt) != 1 {
		t.Errorf("the configuration's prompt appears %d times", strings.Count(sys, chattest.ConfigPrompt))
	}
	if i, j := strings.Index(sys, "t3agent assistant"), strings.Index(sys, chattest.TaskPrompt); i > j {
		t.Errorf("the task prompt comes before the identity contract:\n%s", sys)
	}
	if c := f.Conversation(t, id); c.Status != store.ConversationIdle || c.Title != "What colour are pumps?" {
		t.Errorf("conversation %+v", c)
	}
}

// TestTranscriptJoin is the joining rule on its own.
func TestTranscriptJoin(t *testing.T) {
	t.Parallel()
	msg := func(role store.ChatRole, text string, b bool) store.ChatMessage {
		return store.ChatMessage{Role: role, Content: text, BesideToolCall: b}
	}
	u, a := store.ChatRoleUser, store.ChatRoleAssistant
	cases := []struct {
		name string
		in   []store.ChatMessage
		want []string
	}{
		{"plain", []store.ChatMessage{msg(u, "q", false), msg(a, "x", false)}, []string{"system:S", "user:q", "assistant:x"}},
		{"beside joined", []store.ChatMessage{msg(u, "q", false), msg(a, "b1", true), msg(a, "b2", true), msg(a, "x", false)},
			[]string{"system:S", "user:q", "assistant:b1\n\nb2\n\nx"}},
		{"beside before a decision", []store.ChatMessage{msg(u, "q", false), msg(a, "b1", true), msg(u, "no", false), msg(a, "ok", false)},
			[]string{"system:S", "user:q", "assistant:b1", "user:no", "assistant:ok"}},
		{"beside last", []store.ChatMessage{msg(u, "q", false), msg(a, "b1", true)}, []string{"system:S", "user:q", "assistant:b1"}},
	}
	for _, tc := range cases {
		var got []string
		for _, m := range chat.Transcript("S", tc.in) {
			got = append(got, string(m.Role)+":"+m.Content)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
