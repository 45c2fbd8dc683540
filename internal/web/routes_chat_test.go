package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// create starts a conversation of c over the API and returns its path.
func (c *client) create() string {
	c.e.t.Helper()
	res := c.do("POST", "/api/v1/chat/conversations", nil)
	if res.code != 201 {
		c.e.t.Fatalf("create: %d %s", res.code, res.body)
	}
	var v struct{ ID int64 }
	res.decode(c.e.t, &v)
	return fmt.Sprintf("/api/v1/chat/conversations/%d", v.ID)
}

// page reads a conversation's messages and card.
func (c *client) page(path string) pageJSON {
	c.e.t.Helper()
	res := c.do("GET", path+"/messages", nil)
	if res.code != 200 {
		c.e.t.Fatalf("messages of %s: %d %s", path, res.code, res.body)
	}
	var p pageJSON
	res.decode(c.e.t, &p)
	return p
}

// idOf is the conversation id at the end of path.
func idOf(t *testing.T, path string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscanf(path[strings.LastIndex(path, "/")+1:], "%d", &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestChatRoutes covers every chat route with its answers: the 202s of
// queued turns and recorded decisions, the 400s of bad requests and
// refused content, the 404 of another's or an unknown conversation, and
// the 409s: a busy conversation, both 409s of Retry (locked; a recorded
// decision not yet carried out) and the decision-in-flight window, which
// closes once the worker has carried the decision out.
func TestChatRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{chat: chattest.Options{Settings: &chat.Settings{Task: chattest.Task, MaxMessageLength: 100}}})
	ctx := context.Background()
	editor, admin := e.login("editor"), e.login("admin")

	a := editor.create()
	check(t, []call{
		{"status", editor, "GET", "/api/v1/chat/status", nil, nil, 200, []string{`"available":true`, `"maxMessageLength":100`}, nil},
		{"list", editor, "GET", "/api/v1/chat/conversations", nil, nil, 200, []string{`"id":` + a[len("/api/v1/chat/conversations/"):]}, nil},
		{"show", editor, "GET", a, nil, nil, 200, []string{`"status":"idle"`, `"messages":[]`, `"pending":null`, `"totalCount":0`}, nil},
		{"create with a body", editor, "POST", "/api/v1/chat/conversations", `{"title":"x"}`, nil, 400, []string{`unknown field \"title\"`}, nil},
		{"an id that is no number", editor, "GET", "/api/v1/chat/conversations/abc", nil, nil, 400, []string{"id in the path must be a positive whole number"}, nil},
		{"id zero", editor, "GET", "/api/v1/chat/conversations/0/messages", nil, nil, 400, []string{errBody("badRequest")}, nil},
		{"unknown conversation", editor, "GET", "/api/v1/chat/conversations/999999", nil, nil, 404, []string{errBody("conversationNotFound")}, nil},
		{"another's conversation", admin, "GET", a + "/messages", nil, nil, 404, []string{errBody("conversationNotFound")}, nil},
		{"send to another's", admin, "POST", a + "/messages", map[string]string{"content": "hi"}, nil, 404, []string{errBody("conversationNotFound")}, nil},
		{"messages with a bad after", editor, "GET", a + "/messages?after=-1", nil, nil, 400, []string{"after must be a whole number"}, nil},
		{"send without content", editor, "POST", a + "/messages", map[string]string{}, nil, 400, []string{"The field content is required."}, nil},
		{"send empty", editor, "POST", a + "/messages", map[string]string{"content": "  "}, nil, 400, []string{errBody("emptyMessage"), `"message":"The message is empty."`}, nil},
		{"send too long", editor, "POST", a + "/messages", map[string]string{"content": strings.Repeat("x", 101)}, nil, 400, []string{errBody("messageTooLong")}, nil},
		{"send a number", editor, "POST", a + "/messages", `{"content":5}`, nil, 400, []string{`The field \"content\" has the wrong type.`}, nil},
		{"send", editor, "POST", a + "/messages", map[string]string{"content": "Publish hello"}, nil, 202, []string{`"status":"processing"`, `"title":"Publish hello"`, `"messageCount":1`}, nil},
		{"send while busy", editor, "POST", a + "/messages", map[string]string{"content": "And more"}, nil, 409, []string{errBody("conversationProcessing")}, nil},
		{"retry a turn no worker took yet", editor, "POST", a + "/retry", nil, nil, 202, []string{`"status":"processing"`}, nil},
		{"approve while processing", editor, "POST", a + "/approve", map[string]string{"digest": "d"}, nil, 409, []string{errBody("notAwaitingApproval")}, nil},
	})

	// Retry's first 409: the turn runs (locked by a worker).
	locked := editor.create()
	check(t, []call{{"send", editor, "POST", locked + "/messages", map[string]string{"content": "Run long"}, nil, 202, nil, nil}})
	if _, err := e.f.Store.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: idOf(t, locked), ClaimID: "another-worker"}); err != nil {
		t.Fatal(err)
	}
	check(t, []call{
		{"retry while locked", editor, "POST", locked + "/retry", nil, nil, 409, []string{errBody("conversationProcessing")}, nil},
		{"edit while locked", editor, "PUT", locked + "/messages/1", map[string]any{"content": "x", "expectedContent": "Run long", "messageCount": 1}, nil, 409, []string{errBody("conversationProcessing")}, nil},
	})

	// The turn asks to write: the conversation waits for approval.
	e.f.LLM.Push(llmtest.Calls(llmtest.Call("c1", chattest.WriteTool, `{"text":"hello"}`)))
	e.f.Drain(t)
	p := editor.page(a)
	if p.Conversation.Status != store.ConversationAwaitingApproval || p.Pending == nil || p.Pending.Digest == "" || !p.Conversation.MayDecide {
		t.Fatalf("after the turn: %+v", p)
	}
	digest := p.Pending.Digest
	check(t, []call{
		{"the card", editor, "GET", a, nil, nil, 200, []string{`"status":"awaiting_approval"`, `"digest":"` + digest, `"name":"` + chattest.WriteTool}, nil},
		{"input while awaiting approval", editor, "POST", a + "/input", map[string]any{"digest": digest, "data": map[string]string{"choice": "a"}}, nil, 409, []string{errBody("notAwaitingInput")}, nil},
		{"retry while awaiting approval", editor, "POST", a + "/retry", nil, nil, 400, []string{errBody("notResumable")}, nil},
		{"approve without a body", editor, "POST", a + "/approve", nil, nil, 400, []string{errBody("badRequest")}, nil},
		{"approve", editor, "POST", a + "/approve", map[string]string{"digest": digest}, nil, 202, []string{`"status":"processing"`, `"decisionPending":true`}, []string{digest}},
		// The decision-in-flight window: recorded, not carried out yet.
		{"retry while the decision is in flight", editor, "POST", a + "/retry", nil, nil, 409, []string{errBody("decisionInFlight")}, nil},
		{"send while the decision is in flight", editor, "POST", a + "/messages", map[string]string{"content": "Wait"}, nil, 409, []string{errBody("conversationProcessing")}, nil},
		{"approve twice", editor, "POST", a + "/approve", map[string]string{"digest": digest}, nil, 409, []string{errBody("notAwaitingApproval")}, nil},
		{"deny after approving", editor, "POST", a + "/deny", map[string]string{"digest": digest}, nil, 409, []string{errBody("notAwaitingApproval")}, nil},
	})
	if n := e.f.WriteCalls(); n != 0 {
		t.Fatalf("the write ran before the worker carried the decision out: %d calls", n)
	}
	e.f.LLM.Push(llmtest.Text("Published."))
	e.f.Drain(t)
	check(t, []call{
		{"carried out", editor, "GET", a + "/messages", nil, nil, 200, []string{`"status":"idle"`, `"decisionPending":false`, `"content":"Published."`}, nil},
		{"retry once the window closed", editor, "POST", a + "/retry", nil, nil, 400, []string{errBody("notResumable")}, nil},
		{"messages after", editor, "GET", a + "/messages?after=1", nil, nil, 200, []string{`"content":"Published."`}, []string{`"content":"Publish hello"`}},
	})
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want 1", n)
	}

	// Edit, rename, pin, archive.
	check(t, []call{
		{"edit without fields", editor, "PUT", a + "/messages/1", map[string]string{"content": "x"}, nil, 400, []string{"content, expectedContent and messageCount are required"}, nil},
		{"edit a bad seq", editor, "PUT", a + "/messages/x", map[string]any{"content": "x", "expectedContent": "", "messageCount": 2}, nil, 400, []string{"seq in the path"}, nil},
		{"edit the answer", editor, "PUT", a + "/messages/2", map[string]any{"content": "x", "expectedContent": "Published.", "messageCount": 2}, nil, 400, []string{errBody("notEditable")}, nil},
		{"edit stale text", editor, "PUT", a + "/messages/1", map[string]any{"content": "x", "expectedContent": "Publish bye", "messageCount": 2}, nil, 409, []string{errBody("editStale")}, nil},
		{"edit a stale count", editor, "PUT", a + "/messages/1", map[string]any{"content": "x", "expectedContent": "Publish hello", "messageCount": 1}, nil, 409, []string{errBody("editStale")}, nil},
		{"edit", editor, "PUT", a + "/messages/1", map[string]any{"content": "Publish hi", "expectedContent": "Publish hello", "messageCount": 2}, nil, 202, []string{`"status":"processing"`, `"messageCount":1`}, nil},
		{"rename empty", editor, "PATCH", a, map[string]string{"title": " "}, nil, 400, []string{errBody("emptyTitle")}, nil},
		{"rename without a title", editor, "PATCH", a, map[string]string{}, nil, 400, []string{"The field title is required."}, nil},
		{"rename", editor, "PATCH", a, map[string]string{"title": "Notes"}, nil, 200, []string{`"title":"Notes"`}, nil},
		{"pin without pinned", editor, "POST", a + "/pin", map[string]string{}, nil, 400, []string{"The field pinned is required."}, nil},
		{"pin", editor, "POST", a + "/pin", map[string]bool{"pinned": true}, nil, 200, []string{`"pinned":true`}, nil},
		{"archive another's", admin, "POST", a + "/archive", nil, nil, 404, []string{errBody("conversationNotFound")}, nil},
		{"archive", editor, "POST", a + "/archive", nil, nil, 200, []string{`"archived":true`}, nil},
		{"archived left the list", editor, "GET", "/api/v1/chat/conversations", nil, nil, 200, []string{`"title":"Run long"`}, []string{`"title":"Notes"`}},
		{"archived on request", editor, "GET", "/api/v1/chat/conversations?archived=true", nil, nil, 200, []string{`"title":"Notes"`}, nil},
		{"a bad archived", editor, "GET", "/api/v1/chat/conversations?archived=maybe", nil, nil, 400, []string{"archived must be true or false"}, nil},
	})

	e.f.LLM.Push(llmtest.Text("Edited."))
	e.f.Drain(t)
	check(t, []call{{"the edited turn", editor, "GET", a + "/messages", nil, nil, 200, []string{`"content":"Publish hi"`, `"content":"Edited."`}, []string{"Published."}}})

	// A denial and an answer are recorded for the worker (their flows end
	// to end are tested elsewhere).
	b := editor.create()
	e.f.LLM.Push(llmtest.Calls(llmtest.Call("c1", chattest.WriteTool, `{"text":"bye"}`)), llmtest.Calls(llmtest.Call("c1", chattest.InputTool, `{}`)))
	check(t, []call{{"send", editor, "POST", b + "/messages", map[string]string{"content": "Publish bye"}, nil, 202, nil, nil}})
	e.f.Drain(t)
	c := editor.create()
	check(t, []call{{"send", editor, "POST", c + "/messages", map[string]string{"content": "Pick a variant"}, nil, 202, nil, nil}})
	e.f.Drain(t)
	pb, pc := editor.page(b), editor.page(c)
	if pb.Pending == nil || pc.Pending == nil || pc.Conversation.Status != store.ConversationAwaitingInput {
		t.Fatalf("b %+v / c %+v", pb, pc)
	}
	check(t, []call{
		{"deny", editor, "POST", b + "/deny", map[string]string{"digest": pb.Pending.Digest, "reason": "Not today"}, nil, 202, []string{`"decisionPending":true`}, nil},
		{"the reason is kept", editor, "GET", b + "/messages?after=1", nil, nil, 200, []string{`"content":"Not today"`, `"notice":"denyReason"`}, nil},
		{"input that is no object", editor, "POST", c + "/input", map[string]any{"digest": pc.Pending.Digest, "data": []string{"a"}}, nil, 400, []string{"data must be a JSON object"}, nil},
		{"input", editor, "POST", c + "/input", map[string]any{"digest": pc.Pending.Digest, "data": map[string]string{"choice": "a"}}, nil, 202, []string{`"decisionPending":true`}, nil},
		{"retry with an answer in flight", editor, "POST", c + "/retry", nil, nil, 409, []string{errBody("decisionInFlight")}, nil},
		{"input twice", editor, "POST", c + "/input", map[string]any{"digest": pc.Pending.Digest, "data": map[string]string{"choice": "a"}}, nil, 409, []string{errBody("notAwaitingInput")}, nil},
	})
}

// TestChatLimitsAndAccess: the 429s of the per-user limits, the 403 of a
// user outside the allowed groups, and 503 on a server without a chat.
func TestChatLimitsAndAccess(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{chat: chattest.Options{Settings: &chat.Settings{
		Task: chattest.Task, MaxActivePerUser: 1, MaxConversationsPerUser: 2, MaxMessageLength: 10, AllowedGroups: []int64{1},
	}}})
	editor, intern := e.login("editor"), e.login("intern")
	x, y := editor.create(), editor.create()
	check(t, []call{
		{"intern's status", intern, "GET", "/api/v1/chat/status", nil, nil, 200, []string{`"available":false`, `"reason":"accessDenied"`}, nil},
		{"intern may not chat", intern, "POST", "/api/v1/chat/conversations", nil, nil, 403, []string{errBody("accessDenied"), `"message":"You may not use the chat."`}, nil},
		{"intern may not list", intern, "GET", "/api/v1/chat/conversations", nil, nil, 403, []string{errBody("accessDenied")}, nil},
		{"too many conversations", editor, "POST", "/api/v1/chat/conversations", nil, nil, 429, []string{errBody("tooManyConversations")}, nil},
		{"send", editor, "POST", x + "/messages", map[string]string{"content": "Hello"}, nil, 202, nil, nil},
		{"too long before too many", editor, "POST", y + "/messages", map[string]string{"content": "Hello world"}, nil, 400, []string{errBody("messageTooLong")}, nil},
		{"too many active", editor, "POST", y + "/messages", map[string]string{"content": "Hello"}, nil, 429, []string{errBody("tooManyActive")}, nil},
		{"a huge body", editor, "POST", y + "/messages", map[string]string{"content": strings.Repeat("x", DefaultMaxBody)}, nil, 413, []string{errBody("bodyTooLarge")}, nil},
	})
	none := serve(t, e.f, func(a *API) { a.Chat = nil })
	c := none.login("editor")
	check(t, []call{
		{"no chat", c, "GET", "/api/v1/chat/status", nil, nil, 503, []string{errBody("chatUnavailable")}, nil},
		{"no chat to stream", c, "GET", "/api/v1/chat/conversations/1/stream", nil, nil, 503, []string{errBody("chatUnavailable")}, nil},
	})
}

// TestChatFourEyes: under require_second_approver the owner's view says
// who may decide (mayApprove false, mayDeny true, decideReason
// secondApproverRequired) and the chat's approve answers 403
// secondApproverRequired with nothing recorded; the admin approves the
// run through the runs API, and that request already moves the
// conversation on: the answer is appended and it is idle.
func TestChatFourEyes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{chat: chattest.Options{ConfigYAML: "require_second_approver: true"}})
	editor, admin := e.login("editor"), e.login("admin")
	a := editor.create()
	e.f.LLM.Push(llmtest.Calls(llmtest.Call("c1", chattest.WriteTool, `{"text":"hello"}`)))
	check(t, []call{{"send", editor, "POST", a + "/messages", map[string]string{"content": "Publish hello"}, nil, 202, nil, nil}})
	e.f.Drain(t)
	p := editor.page(a)
	if p.Conversation.Status != store.ConversationAwaitingApproval || p.Pending == nil {
		t.Fatalf("after the turn: %+v", p)
	}
	digest, runID := p.Pending.Digest, p.Conversation.RunID
	check(t, []call{
		{"the owner's card", editor, "GET", a, nil, nil, 200, []string{`"mayDecide":true`, `"mayApprove":false`, `"mayDeny":true`,
			`"decideReason":"secondApproverRequired"`, `"decideReason":"selfApprovalDenied"`}, nil},
		{"the owner approves", editor, "POST", a + "/approve", map[string]string{"digest": digest}, nil, 403,
			[]string{errBody("secondApproverRequired"), "second person"}, nil},
		{"nothing was recorded", editor, "GET", a, nil, nil, 200, []string{`"status":"awaiting_approval"`, `"decisionPending":false`}, nil},
		{"the admin sees who may decide", admin, "GET", "/api/v1/runs/" + runID, nil, nil, 200, []string{`"mayApprove":true`, `"mayDeny":true`}, []string{"decideReason"}},
	})
	e.f.LLM.Push(llmtest.Text("Published."))
	check(t, []call{{"the admin approves the run", admin, "POST", "/api/v1/runs/" + runID + "/approve", map[string]string{"digest": digest}, nil, 200,
		[]string{`"outcome":"completed"`, `"content":"Published."`}, nil}})
	// Read from the store, not through the chat (whose reads follow runs
	// themselves): the approval request moved the conversation on.
	c, err := e.f.Store.Conversation(context.Background(), idOf(t, a))
	if err != nil || c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) {
		t.Fatalf("after the approval through the runs API: %+v, %v", c, err)
	}
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d writes, want 1", n)
	}
	check(t, []call{{"the answer", editor, "GET", a + "/messages", nil, nil, 200,
		[]string{`"status":"idle"`, `"content":"Published."`, `"pending":null`, `"mayDecide":false`}, nil}})
}
