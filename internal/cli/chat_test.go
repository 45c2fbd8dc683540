package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/cli"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// chatClock is the store clock of a chat test: the rows a test writes
// carry the time it sets, so that cleanup sees them as old.
type chatClock struct {
	mu sync.Mutex
	at time.Time // zero: the real time
}

func (c *chatClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return time.Now()
	}
	return c.at
}

func (c *chatClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = t
}

// demoStore opens the demo directory's own store beside the commands,
// with the test's clock.
func demoStore(t *testing.T, work string, clock *chatClock) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(work, cli.DefaultDataDir, "t3agent.db"), store.OpenParams{Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// queueTurn creates a conversation of the demo's editor (uid 2) with task
// and queues a turn in it, as a send through the API does.
func queueTurn(t *testing.T, st store.Store, task, content string, state store.ConversationState) store.Conversation {
	t.Helper()
	ctx := context.Background()
	c, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 2, OwnerUsername: "editor", Title: content, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	c, err = st.ChangeConversation(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing,
		State: state, KeepMessages: -1, Append: []store.NewChatMessage{{Role: store.ChatRoleUser, Content: content}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func conversation(t *testing.T, st store.Store, id int64) store.Conversation {
	t.Helper()
	c, err := st.Conversation(context.Background(), id)
	if err != nil {
		t.Fatalf("conversation %d: %v", id, err)
	}
	return c
}

// TestChatCleanup: a turn stuck for longer than stale_after fails with
// timedOut and loses its recorded decision, a fresh one is left alone;
// archiving and deleting follow the chat.* keys, which the flags override
// (in days, too).
func TestChatCleanup(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	clock := &chatClock{}
	st := demoStore(t, work, clock)
	now := time.Now()

	clock.set(now.Add(-10 * time.Minute))
	stale := queueTurn(t, st, "chat", "Stuck?", store.ConversationState{
		RunID: "0195f1c2-0000-7000-8000-000000000001", Decision: store.DecisionApprove, DecisionDigest: "digest", DecisionBy: "admin",
	})
	clock.set(now.Add(-40 * 24 * time.Hour))
	oldIdle, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 2, OwnerUsername: "editor", Title: "Old"})
	if err != nil {
		t.Fatal(err)
	}
	clock.set(now.Add(-100 * 24 * time.Hour))
	oldArchived, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 2, OwnerUsername: "editor", Title: "Older"})
	if err != nil {
		t.Fatal(err)
	}
	archived := true
	if _, err := st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: oldArchived.ID, Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	clock.set(time.Time{})
	fresh := queueTurn(t, st, "chat", "Still running", store.ConversationState{})

	// The configuration disables archiving and deleting: only the stale
	// turn is touched.
	env := []string{"T3AGENT_CHAT_ARCHIVE_AFTER=0s", "T3AGENT_CHAT_DELETE_AFTER=0s"}
	out, errOut, err := run(t, ctx, work, env, "chat", "cleanup", "--json")
	if err != nil {
		t.Fatalf("chat cleanup: %v (stderr %s)", err, errOut)
	}
	var rep struct{ Failed, Archived, Deleted int }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Failed != 1 || rep.Archived != 0 || rep.Deleted != 0 {
		t.Fatalf("chat cleanup --json = %s (%v), want 1 failed only", out, err)
	}
	c := conversation(t, st, stale.ID)
	if c.Status != store.ConversationFailed || c.ErrorCode != "timedOut" {
		t.Errorf("stale turn: status %s, code %q; want failed, timedOut", c.Status, c.ErrorCode)
	}
	if c.RunID != "" || c.Decision != store.DecisionNone || c.DecisionDigest != "" || c.DecisionBy != "" || c.ClaimID != "" {
		t.Errorf("cleanup kept the approval fields, so a Retry could replay the approval: %+v", c.ConversationState)
	}
	if c := conversation(t, st, fresh.ID); c.Status != store.ConversationProcessing {
		t.Errorf("fresh turn: status %s, want processing", c.Status)
	}
	if c := conversation(t, st, oldIdle.ID); c.Archived {
		t.Error("archived although chat.archive_after is 0")
	}

	// The flags, in days, switch both steps on for one run.
	out, _, err = run(t, ctx, work, env, "chat", "cleanup", "--archive-after", "30d", "--delete-after", "90d")
	if err != nil || out != "Cleanup: 0 stale turn(s) failed, 1 conversation(s) archived, 1 deleted.\n" {
		t.Fatalf("chat cleanup with flags = %q, %v", out, err)
	}
	if c := conversation(t, st, oldIdle.ID); !c.Archived {
		t.Error("the idle conversation of 40 days was not archived")
	}
	if _, err := st.Conversation(ctx, oldArchived.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the archived conversation of 100 days is still there: %v", err)
	}
	if c := conversation(t, st, fresh.ID); c.Status != store.ConversationProcessing {
		t.Errorf("fresh turn after the second cleanup: status %s", c.Status)
	}

	// With the defaults (30 days), --archive-after 0 skips archiving for
	// one run; without it the defaults apply.
	clock.set(now.Add(-31 * 24 * time.Hour))
	another, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 2, OwnerUsername: "editor", Title: "Another"})
	if err != nil {
		t.Fatal(err)
	}
	clock.set(time.Time{})
	if out, _, err := run(t, ctx, work, nil, "chat", "cleanup", "--archive-after", "0"); err != nil || !strings.Contains(out, " 0 conversation(s) archived") {
		t.Errorf("chat cleanup --archive-after 0 = %q, %v", out, err)
	}
	if c := conversation(t, st, another.ID); c.Archived {
		t.Error("--archive-after 0 archived")
	}
	if out, _, err := run(t, ctx, work, nil, "chat", "cleanup"); err != nil || !strings.Contains(out, " 1 conversation(s) archived") {
		t.Errorf("chat cleanup with the defaults = %q, %v", out, err)
	}
	if c := conversation(t, st, another.ID); !c.Archived {
		t.Error("the default chat.archive_after (30 days) did not archive a conversation of 31 days")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "cleanup", "--stale-after", "0s"}, "--stale-after must be a positive duration"},
		{[]string{"chat", "cleanup", "--archive-after", "-1h"}, "must not be negative"},
		{[]string{"chat", "cleanup", "--delete-after", "3 weeks"}, `"3 weeks" is not a duration such as 5m, 720h or 30d`},
		{[]string{"chat", "cleanup", "--archive-after", "-3d"}, `"-3d" is not a duration`},
	} {
		_, _, err := run(t, ctx, work, env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one sentence containing %q", c.args, err, c.want)
		}
	}
}

// TestChatProcessAndWorker: without a chat task a turn fails with
// chatNotConfigured, never as a tool-less chat; `chat process` says so and
// exits non-zero, and has nothing to do afterwards; the worker runs a
// configured turn against a scripted provider and stops when drained.
func TestChatProcessAndWorker(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	clock := &chatClock{}
	st := demoStore(t, work, clock)

	unconfigured := queueTurn(t, st, "", "Hello?", store.ConversationState{})
	id := strconv.FormatInt(unconfigured.ID, 10)
	_, _, err := run(t, ctx, work, nil, "chat", "process", id)
	want := fmt.Sprintf("conversation %d failed (chatNotConfigured)", unconfigured.ID)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("chat process of an unconfigured chat: err = %v, want %q", err, want)
	}
	c := conversation(t, st, unconfigured.ID)
	if c.Status != store.ConversationFailed || c.ErrorCode != "chatNotConfigured" {
		t.Errorf("unconfigured turn: status %s, code %q", c.Status, c.ErrorCode)
	}
	msgs, err := st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: unconfigured.ID})
	if err != nil || len(msgs) != 1 {
		t.Errorf("an unconfigured turn added messages: %+v (%v)", msgs, err)
	}
	out, _, err := run(t, ctx, work, nil, "chat", "process", id)
	if err != nil || out != fmt.Sprintf("Conversation %d: nothing to do (it is failed).\n", unconfigured.ID) {
		t.Errorf("chat process of a failed conversation = %q, %v; want nothing to do, exit 0", out, err)
	}
	out, _, err = run(t, ctx, work, nil, "chat", "process", id, "--json")
	var pv struct {
		Processed bool   `json:"processed"`
		Status    string `json:"status"`
		ErrorCode string `json:"errorCode"`
	}
	if err != nil || json.Unmarshal([]byte(out), &pv) != nil || pv.Processed || pv.Status != "failed" || pv.ErrorCode != "chatNotConfigured" {
		t.Errorf("chat process --json = %s, %v", out, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "process", "999999"}, "there is no conversation 999999"},
		{[]string{"chat", "process", "twelve"}, `"twelve" is not a conversation id`},
		{[]string{"chat", "process", "0"}, `"0" is not a conversation id`},
		{[]string{"chat", "worker", "--concurrency", "0"}, "--concurrency must be between 1 and 256"},
		{[]string{"chat", "worker", "--poll-interval", "1ms"}, "--poll-interval must be between 10ms and 1m"},
	} {
		_, _, err := run(t, ctx, work, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one sentence containing %q", c.args, err, c.want)
		}
	}

	// A configured chat: the worker takes the queued turn, the answer is
	// stored and the conversation is idle again.
	srv := llmtest.NewOpenAI(t, llmtest.Text("Hello, Erika."))
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key, "T3AGENT_CHAT_TASK=chat"}
	doc := agentsDoc(t, srv.BaseURL(), `tasks:
  - identifier: chat
    configuration: assistant
`)
	if _, _, err := run(t, ctx, work, env, "apply", "-f", doc); err != nil {
		t.Fatal(err)
	}
	configured := queueTurn(t, st, "chat", "Who am I talking to?", store.ConversationState{})
	out, errOut, err := run(t, ctx, work, env, "chat", "worker", "--drain", "--concurrency", "2", "--poll-interval", "50ms")
	if err != nil || out != "Chat worker stopped.\n" {
		t.Fatalf("chat worker --drain = %q, %v (stderr %s)", out, err, errOut)
	}
	c = conversation(t, st, configured.ID)
	if c.Status != store.ConversationIdle || c.ErrorCode != "" || c.ClaimID != "" {
		t.Errorf("configured turn: status %s, code %q, error %q", c.Status, c.ErrorCode, c.ErrorMessage)
	}
	msgs, err = st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: configured.ID})
	if err != nil || len(msgs) != 2 || msgs[1].Role != store.ChatRoleAssistant || msgs[1].Content != "Hello, Erika." {
		t.Errorf("messages after the turn: %+v (%v)", msgs, err)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Who am I talking to?") {
		t.Errorf("the provider saw %d request(s), want one with the user's message", len(reqs))
	}
	if c := conversation(t, st, unconfigured.ID); c.Status != store.ConversationFailed {
		t.Errorf("the worker touched the failed conversation: %s", c.Status)
	}
}
