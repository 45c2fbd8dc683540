package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// The end-to-end tests drive the chat over real HTTP as a browser does:
// the demo editor logs in (session cookie, CSRF header on every write),
// a real chat worker runs the queued turns against the scripted provider
// and the real MCP server, and the client follows each conversation over
// its event stream before reading the messages.

const (
	e2ePrompt = "Publish a note saying hello"
	e2eBeside = "I will publish the note for you."
	e2eWrite  = `{"text":"hello"}`
)

// writeRound is the provider's first round: text beside a call of the
// MCP server's write tool, which needs approval.
func writeRound() llmtest.Round {
	return llmtest.Round{Text: e2eBeside, ToolCalls: []llm.ToolCall{llmtest.Call("call-1", chattest.WriteTool, e2eWrite)}}
}

// e2eSetup serves the API over a fresh fixture with the provider script
// rounds, and starts a worker.
func e2eSetup(t *testing.T, rounds ...llmtest.Round) *apiEnv {
	t.Helper()
	e := setup(t, envOptions{chat: chattest.Options{Rounds: rounds}})
	startWorker(t, e.f, 2, e2ePoll)
	return e
}

// startWriteTurn logs the editor in, creates a conversation, sends the
// prompt and follows the turn to the approval card, checking the card.
// It returns the client, the conversation's path and the page with the
// card.
func startWriteTurn(t *testing.T, e *apiEnv) (*client, string, pageJSON) {
	t.Helper()
	editor := e.login("editor")
	conv := editor.create()
	// The answer shows the conversation queued, or already claimed by
	// the worker: the title is set after the turn is queued.
	check(t, []call{{"send", editor, "POST", conv + "/messages", map[string]string{"content": e2ePrompt}, nil, 202,
		[]string{`"messageCount":1`, `"title":"` + e2ePrompt + `"`}, nil}})
	editor.waitFor(conv, "the approval card", statusIs(store.ConversationAwaitingApproval, -1))

	res := editor.do("GET", conv+"/messages", nil)
	if res.code != 200 {
		t.Fatalf("messages: %d %s", res.code, res.body)
	}
	// A tool without a preview leaves the list empty, never null.
	if !strings.Contains(res.body, `"previews":[]`) {
		t.Errorf("the card's previews are not an empty list: %s", res.body)
	}
	var p pageJSON
	res.decode(t, &p)
	cv := p.Conversation
	if cv.Status != store.ConversationAwaitingApproval || !cv.MayDecide || cv.DecisionPending || cv.ErrorCode != "" || cv.RunID == "" || cv.Resumable {
		t.Errorf("the waiting conversation: %+v", cv)
	}
	want := []string{"user: " + e2ePrompt, "assistant: " + e2eBeside + " [beside]"}
	if got := roles(p.Messages); !slices.Equal(got, want) {
		t.Errorf("messages before the decision = %q, want %q", got, want)
	}
	if p.TotalCount != 2 {
		t.Errorf("totalCount = %d, want 2", p.TotalCount)
	}
	pd := p.Pending
	if pd == nil {
		t.Fatalf("no card on a conversation awaiting approval: %s", res.body)
	}
	if pd.RunID != cv.RunID || pd.Digest == "" || pd.InputTool != "" || pd.Unreadable {
		t.Errorf("the card: %+v (conversation run %s)", pd, cv.RunID)
	}
	if len(pd.Calls) != 1 || pd.Calls[0].Name != chattest.WriteTool || pd.Calls[0].ID != "call-1" || pd.Calls[0].Arguments != e2eWrite {
		t.Errorf("the card's calls = %+v, want one %s %s", pd.Calls, chattest.WriteTool, e2eWrite)
	}
	// The same card shows without the messages, and the run waits.
	check(t, []call{
		{"the conversation", editor, "GET", conv, nil, nil, 200, []string{`"digest":"` + pd.Digest + `"`, `"messages":[]`}, nil},
		{"the run waits", editor, "GET", "/api/v1/runs/" + cv.RunID, nil, nil, 200,
			[]string{`"status":"waiting_for_approval"`, `"callerSource":"chat"`, `"callerOperation":"chatTurn"`}, nil},
	})
	if n := e.f.WriteCalls(); n != 0 {
		t.Fatalf("the write ran before anyone approved it: %d calls", n)
	}
	return editor, conv, p
}

// finalPage reads the finished conversation and checks what every
// finished flow shares: idle, no error or decision left, the run
// completed.
func finalPage(t *testing.T, c *client, conv, runID string) pageJSON {
	t.Helper()
	p := c.page(conv)
	cv := p.Conversation
	if cv.Status != store.ConversationIdle || cv.ErrorCode != "" || cv.ErrorMessage != "" || cv.DecisionPending || cv.RunID != "" || p.Pending != nil {
		t.Errorf("the finished conversation: %+v, pending %+v", cv, p.Pending)
	}
	check(t, []call{{"the run completed", c, "GET", "/api/v1/runs/" + runID, nil, nil, 200, []string{`"status":"completed"`}, nil}})
	return p
}

// TestE2EApprove: the turn calls the write tool → awaiting_approval with
// the card → approve over the API → the worker carries it out → the
// model answers → idle with the beside text before the answer, and the
// MCP server saw exactly one call.
func TestE2EApprove(t *testing.T) {
	t.Parallel()
	const answer = "The note is published."
	e := e2eSetup(t, writeRound(), llmtest.Text(answer))
	editor, conv, p := startWriteTurn(t, e)

	check(t, []call{
		{"approve without the CSRF header", editor, "POST", conv + "/approve", map[string]string{"digest": p.Pending.Digest}, []string{CSRFHeader, ""}, 403, []string{errBody("csrfFailed")}, nil},
		{"approve", editor, "POST", conv + "/approve", map[string]string{"digest": p.Pending.Digest}, nil, 202,
			[]string{`"status":"processing"`, `"decisionPending":true`}, []string{p.Pending.Digest}},
	})
	editor.waitFor(conv, "the answer", statusIs(store.ConversationIdle, 3))

	f := finalPage(t, editor, conv, p.Conversation.RunID)
	want := []string{"user: " + e2ePrompt, "assistant: " + e2eBeside + " [beside]", "assistant: " + answer}
	if got := roles(f.Messages); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want exactly 1", n)
	}
	// The model's second round read the tool's result.
	if body := string(e.f.LLM.Request(1).Body); !strings.Contains(body, "published: hello") {
		t.Errorf("the provider's second request lacks the tool result: %s", body)
	}
	check(t, []call{{"nothing left to decide", editor, "POST", conv + "/approve", map[string]string{"digest": p.Pending.Digest}, nil, 409, []string{errBody("notAwaitingApproval")}, nil}})
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("after a second approve the MCP server saw %d write calls, want 1", n)
	}
}

// TestE2EDeny: the same turn denied with a reason: the MCP server sees
// no call, the model is told and answers, the conversation ends idle
// with the reason kept before the answer.
func TestE2EDeny(t *testing.T) {
	t.Parallel()
	const answer = "Understood, I did not publish it."
	e := e2eSetup(t, writeRound(), llmtest.Text(answer))
	editor, conv, p := startWriteTurn(t, e)

	check(t, []call{{"deny", editor, "POST", conv + "/deny", map[string]string{"digest": p.Pending.Digest, "reason": "Not today"}, nil, 202,
		[]string{`"status":"processing"`, `"decisionPending":true`, `"messageCount":3`}, nil}})
	editor.waitFor(conv, "the answer", statusIs(store.ConversationIdle, 4))

	f := finalPage(t, editor, conv, p.Conversation.RunID)
	want := []string{
		"user: " + e2ePrompt, "assistant: " + e2eBeside + " [beside]",
		"user: Not today [" + string(chat.NoticeDenyReason) + "]", "assistant: " + answer,
	}
	if got := roles(f.Messages); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Errorf("the MCP server saw %d write calls after a denial, want 0", n)
	}
	if body := string(e.f.LLM.Request(1).Body); !strings.Contains(body, "denied by the operator") {
		t.Errorf("the provider was not told of the denial: %s", body)
	}
}

// TestE2EStaleDigest: an approval quoting another digest is recorded,
// refused by the runtime when the worker carries it out, and the card is
// handed back with handBack.staleTurn and no call made; approving with
// the card's digest then works, once.
func TestE2EStaleDigest(t *testing.T) {
	t.Parallel()
	const answer = "Published after all."
	e := e2eSetup(t, writeRound(), llmtest.Text(answer))
	editor, conv, p := startWriteTurn(t, e)
	stale := strings.Repeat("0", len(p.Pending.Digest))
	if stale == p.Pending.Digest {
		stale = strings.Repeat("f", len(stale))
	}

	check(t, []call{{"approve a stale digest", editor, "POST", conv + "/approve", map[string]string{"digest": stale}, nil, 202,
		[]string{`"decisionPending":true`}, nil}})
	v := editor.waitFor(conv, "the hand-back", func(v viewEvent) bool {
		return v.Status == store.ConversationAwaitingApproval && v.ErrorCode != ""
	})
	if v.ErrorCode != string(chat.HandBackStaleTurn) || v.DecisionPending || v.TotalCount != 2 {
		t.Errorf("the handed-back conversation: %+v, want code %s", v, chat.HandBackStaleTurn)
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Fatalf("a stale approval reached the MCP server: %d calls", n)
	}
	if left := e.f.LLM.Remaining(); left != 1 {
		t.Errorf("the provider was asked again after a refused approval: %d rounds left, want 1", left)
	}
	// The same card, same digest, still decidable; the code has a label.
	back := editor.page(conv)
	if back.Pending == nil || back.Pending.Digest != p.Pending.Digest || !back.Conversation.MayDecide || back.Conversation.RunID != p.Conversation.RunID {
		t.Fatalf("the card after the hand-back: %+v / %+v", back.Conversation, back.Pending)
	}
	check(t, []call{
		{"the hand-back's label", editor, "GET", "/api/v1/labels?lang=de", nil, nil, 200, []string{`"error.` + string(chat.HandBackStaleTurn) + `":`}, nil},
		{"approve the card's digest", editor, "POST", conv + "/approve", map[string]string{"digest": p.Pending.Digest}, nil, 202, []string{`"decisionPending":true`}, nil},
	})
	editor.waitFor(conv, "the answer", statusIs(store.ConversationIdle, 3))

	f := finalPage(t, editor, conv, p.Conversation.RunID)
	want := []string{"user: " + e2ePrompt, "assistant: " + e2eBeside + " [beside]", "assistant: " + answer}
	if got := roles(f.Messages); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want exactly 1", n)
	}
}

// TestE2EInput: the turn calls the input tool → awaiting_input with the
// question as the assistant's message and the schema on the page. An
// answer that is no object is refused at the API (400); one that does
// not fit the schema is recorded (202: the API does not know the schema)
// and handed back by the worker with handBack.inputInvalid, the answer
// dropped; a fitting answer goes on to the tool and the model's answer.
func TestE2EInput(t *testing.T) {
	t.Parallel()
	const (
		beside = "Two variants fit."
		answer = "I used variant b."
	)
	e := e2eSetup(t,
		llmtest.Round{Text: beside, ToolCalls: []llm.ToolCall{llmtest.Call("call-1", chattest.InputTool, `{}`)}},
		llmtest.Text(answer))
	editor := e.login("editor")
	conv := editor.create()
	check(t, []call{{"send", editor, "POST", conv + "/messages", map[string]string{"content": "Pick a variant"}, nil, 202, nil, nil}})
	editor.waitFor(conv, "the question", statusIs(store.ConversationAwaitingInput, -1))

	p := editor.page(conv)
	question := chat.Question(json.RawMessage(chattest.InputSchema))
	want := []string{"user: Pick a variant", "assistant: " + beside + " [beside]", "assistant: " + question}
	if got := roles(p.Messages); !slices.Equal(got, want) || question == "" {
		t.Errorf("messages = %q, want %q", got, want)
	}
	pd := p.Pending
	if pd == nil || p.Conversation.RunID == "" || pd.RunID != p.Conversation.RunID || pd.Digest == "" || pd.InputTool != chattest.InputTool {
		t.Fatalf("the question's page: %+v / %+v", p.Conversation, pd)
	}
	if !jsonEqual(t, pd.InputSchema, json.RawMessage(chattest.InputSchema)) {
		t.Errorf("the schema on the page = %s, want %s", pd.InputSchema, chattest.InputSchema)
	}

	check(t, []call{
		{"an answer that is no object", editor, "POST", conv + "/input", map[string]any{"digest": pd.Digest, "data": "b"}, nil, 400, []string{errBody("badRequest")}, nil},
		{"an answer outside the schema", editor, "POST", conv + "/input", map[string]any{"digest": pd.Digest, "data": map[string]string{"choice": "c"}}, nil, 202,
			[]string{`"decisionPending":true`, `"messageCount":4`}, nil},
	})
	v := editor.waitFor(conv, "the hand-back", func(v viewEvent) bool {
		return v.Status == store.ConversationAwaitingInput && v.ErrorCode != ""
	})
	if v.ErrorCode != string(chat.HandBackInputInvalid) || v.DecisionPending || v.TotalCount != 3 {
		t.Errorf("the handed-back conversation: %+v, want code %s and the answer dropped", v, chat.HandBackInputInvalid)
	}
	if left := e.f.LLM.Remaining(); left != 1 {
		t.Errorf("the provider was asked again after a refused answer: %d rounds left, want 1", left)
	}
	back := editor.page(conv)
	if back.Pending == nil || back.Pending.Digest != pd.Digest {
		t.Fatalf("the question after the hand-back: %+v", back.Pending)
	}

	check(t, []call{{"a fitting answer", editor, "POST", conv + "/input", map[string]any{"digest": pd.Digest, "data": map[string]string{"choice": "b"}}, nil, 202,
		[]string{`"decisionPending":true`}, []string{`"errorCode"`}}})
	editor.waitFor(conv, "the answer", statusIs(store.ConversationIdle, 5))

	f := finalPage(t, editor, conv, p.Conversation.RunID)
	want = append(want, "user: b ["+string(chat.NoticeInputAnswer)+"]", "assistant: "+answer)
	if got := roles(f.Messages); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	if body := string(e.f.LLM.Request(1).Body); !strings.Contains(body, "variant b chosen") {
		t.Errorf("the tool did not run with the answer: %s", body)
	}
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("not JSON: %s", a)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Errorf("not JSON: %s", b)
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
