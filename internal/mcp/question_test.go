//lint:file-ignore SA1019 the refusal of deprecated sampling and roots is what is tested

package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/tool"
)

// askingKinds are servers that ask questions: a 2026-07-28 stateless
// server answers input_required (MRTR); a stateful older one sends
// elicitation/create on the call's stream (the SDK's server turns the
// same handler into that for clients before 2026-07-28).
var askingKinds = []serverKind{
	{name: "mrtr_stateless_json", stateless: true, json: true},
	{name: "mrtr_stateless_sse", stateless: true},
	{name: "elicitation_sessions_sse_2025_06_18", versions: []string{"2025-06-18"}},
	{name: "elicitation_sessions_sse_2025_11_25", versions: []string{"2025-11-25"}},
}

const titleSchema = `{"type":"object","properties":{"title":{"type":"string","description":"The page title"}},"required":["title"]}`

// asker is a real server whose tool "publish" asks for a title before it
// publishes, and "visit" asks the person to open a page (URL mode). It
// records what it carried out and how often it was called.
type asker struct {
	*sdkServer
	mu        sync.Mutex
	published []string
	calls     int
}

func newAsker(t testing.TB, kind serverKind) *asker {
	t.Helper()
	a := &asker{}
	a.sdkServer = newSDKServer(t, kind)
	var schema map[string]any
	_ = json.Unmarshal([]byte(titleSchema), &schema)
	a.mcp.AddTool(&sdk.Tool{Name: "publish", Description: "Publishes a page after asking its title.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a.mu.Lock()
			a.calls++
			a.mu.Unlock()
			resp, ok := req.Params.InputResponses["title"]
			if !ok {
				return &sdk.CallToolResult{RequestState: "publish-1", InputRequests: sdk.InputRequestMap{
					"title": &sdk.ElicitParams{Message: "Which title shall the page get?", RequestedSchema: schema},
				}}, nil
			}
			if req.Params.RequestState != "publish-1" && req.Params.RequestState != "" {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "lost state"}}}, nil
			}
			er := resp.(*sdk.ElicitResult)
			if er.Action != "accept" {
				return textResult("not published: " + er.Action), nil
			}
			title, _ := er.Content["title"].(string)
			a.mu.Lock()
			a.published = append(a.published, title)
			a.mu.Unlock()
			return textResult("published " + title), nil
		})
	a.mcp.AddTool(&sdk.Tool{Name: "visit", Description: "Asks the person to open a page.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["consent"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{
					"consent": &sdk.ElicitParams{Mode: "url", Message: "Grant access in the browser.", URL: "https://auth.example.org/consent?x=1", ElicitationID: "e1"},
				}}, nil
			}
			return textResult("visited: " + resp.(*sdk.ElicitResult).Action), nil
		})
	return a
}

func (a *asker) state() ([]string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.published...), a.calls
}

// answer makes the call again with a person's answer to q.
func (g gated) answer(ctx context.Context, name string, q *tool.Question, action string, content map[string]any) tool.Result {
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	return g.gate.Invoke(ctx, gate.InvokeParams{
		Name: name, Args: json.RawMessage(`{}`),
		Call:   tool.Call{Actor: admin(), CallID: "c1", Answer: &tool.Answer{Action: action, Content: content, State: q.State}},
		Config: gate.Config{Name: "test", TrustZone: tool.ZoneLocal},
	})
}

// TestQuestionRoundTrip: a server's question ends the call with a
// tool.Question (message and form as the server put them) and nothing
// carried out; the call made again with the answer (even on a fresh
// Service, as after a restart) finishes with it; decline and cancel are
// passed back.
func TestQuestionRoundTrip(t *testing.T) {
	t.Parallel()
	for _, kind := range askingKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			a := newAsker(t, kind)
			f := newFixture(t)
			g := f.gated(t)
			f.add(t, "ask", a.URL)
			f.importTools(t, g, "ask")

			res := g.invoke(t.Context(), "mcp_ask_publish", `{}`)
			q := res.Question
			if q == nil || !res.IsError || q.Message != "Which title shall the page get?" || q.URL != "" {
				t.Fatalf("first call = %+v", res)
			}
			var schema map[string]any
			if err := json.Unmarshal(q.Schema, &schema); err != nil || schema["type"] != "object" || schema["properties"] == nil {
				t.Errorf("question schema = %s", q.Schema)
			}
			if pub, _ := a.state(); len(pub) != 0 {
				t.Fatalf("published before the answer: %v", pub)
			}

			// A fresh Service over the same store: nothing of the call
			// lives in memory.
			f2 := newFixture(t)
			g2 := f2.gated(t)
			f2.add(t, "ask", a.URL)
			f2.importTools(t, g2, "ask")
			res = g2.answer(t.Context(), "mcp_ask_publish", q, tool.AnswerAccept, map[string]any{"title": "Spring news"})
			if res.IsError || res.Content != "published Spring news" || res.Question != nil {
				t.Fatalf("answered call = %+v", res)
			}
			if pub, _ := a.state(); len(pub) != 1 || pub[0] != "Spring news" {
				t.Errorf("published = %v", pub)
			}

			for _, action := range []string{tool.AnswerDecline, tool.AnswerCancel} {
				res := g.invoke(t.Context(), "mcp_ask_publish", `{}`)
				if res.Question == nil {
					t.Fatalf("%s: no question: %+v", action, res)
				}
				res = g.answer(t.Context(), "mcp_ask_publish", res.Question, action, nil)
				if res.IsError || res.Content != "not published: "+action {
					t.Errorf("%s: answered call = %+v", action, res)
				}
			}
			if pub, _ := a.state(); len(pub) != 1 {
				t.Errorf("published after decline/cancel = %v", pub)
			}
		})
	}
}

// TestQuestionURLMode: a URL-mode question carries the page to open and
// an empty form; the person's "accept" goes back without content.
func TestQuestionURLMode(t *testing.T) {
	t.Parallel()
	for _, kind := range []serverKind{askingKinds[0], askingKinds[3]} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			a := newAsker(t, kind)
			f := newFixture(t)
			g := f.gated(t)
			f.add(t, "ask", a.URL)
			f.importTools(t, g, "ask")
			res := g.invoke(t.Context(), "mcp_ask_visit", `{}`)
			q := res.Question
			if q == nil || q.URL != "https://auth.example.org/consent?x=1" || q.Message != "Grant access in the browser." || string(q.Schema) != `{"type":"object","properties":{}}` {
				t.Fatalf("URL question = %+v (%+v)", q, res)
			}
			res = g.answer(t.Context(), "mcp_ask_visit", q, tool.AnswerAccept, nil)
			if res.IsError || res.Content != "visited: accept" {
				t.Errorf("answered = %+v", res)
			}
		})
	}
}

// TestQuestionAnswerForeignState: an answer whose state does not come
// from a question is refused without a request.
func TestQuestionAnswerForeignState(t *testing.T) {
	t.Parallel()
	a := newAsker(t, askingKinds[0])
	f := newFixture(t)
	g := f.gated(t)
	f.add(t, "ask", a.URL)
	f.importTools(t, g, "ask")
	_, before := a.state()
	res := g.answer(t.Context(), "mcp_ask_publish", &tool.Question{State: json.RawMessage(`{"v":9}`)}, tool.AnswerAccept, nil)
	if !res.IsError || !strings.Contains(res.Content, "does not belong to a question it asked") {
		t.Errorf("foreign state = %+v", res)
	}
	if _, after := a.state(); after != before {
		t.Errorf("the server was called: %d → %d", before, after)
	}
}

// TestDiagnosticCallElicitation: a diagnostic call has nobody to ask; by
// default it declines, and with ElicitDefaults it accepts the schema's
// defaults (SEP-1034) or declines when a required field has none.
func TestDiagnosticCallElicitation(t *testing.T) {
	t.Parallel()
	for _, kind := range []serverKind{askingKinds[0], askingKinds[2]} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			s := newSDKServer(t, kind)
			s.mcp.AddTool(&sdk.Tool{Name: "defaults", Description: "Asks with defaults.", InputSchema: map[string]any{"type": "object"}},
				func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					resp, ok := req.Params.InputResponses["q"]
					if !ok {
						return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"q": &sdk.ElicitParams{Message: "Defaults?",
							RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
								"name": map[string]any{"type": "string", "default": "John Doe"},
								"age":  map[string]any{"type": "integer", "default": 30},
								"ok":   map[string]any{"type": "boolean", "default": true},
							}}}}}, nil
					}
					b, _ := json.Marshal(resp)
					return textResult(string(b)), nil
				})
			f := newFixture(t)
			for _, tc := range []struct{ policy, want string }{
				{"", `{"action":"decline"}`},
				{mcp.ElicitDecline, `{"action":"decline"}`},
				{mcp.ElicitDefaults, `{"action":"accept","content":{"age":30,"name":"John Doe","ok":true}}`},
			} {
				res, err := f.svc.Call(t.Context(), mcp.CallParams{URL: s.URL, Tool: "defaults", Elicitation: tc.policy})
				if err != nil || res.Content != tc.want {
					t.Errorf("policy %q: %+v, %v; want %s", tc.policy, res, err, tc.want)
				}
			}
			if _, err := f.svc.Call(t.Context(), mcp.CallParams{URL: s.URL, Tool: "defaults", Elicitation: "ask"}); mcp.KindOf(err) != mcp.KindInvalidRequest {
				t.Errorf("unknown policy: %v", err)
			}
		})
	}
}

// TestUnsupportedServerRequests: sampling, roots and unknown requests a
// server sends during a call are answered at once with an error that
// names them; the call finishes well within its deadline. The client
// declares elicitation only.
func TestUnsupportedServerRequests(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var caps *sdk.ClientCapabilities
	got := map[string]string{}
	s := newSDKServer(t, serverKind{name: "sessions", versions: []string{"2025-06-18"}})
	s.mcp.AddTool(&sdk.Tool{Name: "probe", Description: "Asks the client for everything.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			ss := req.Session
			_, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
			mu.Lock()
			got["sampling"] = errText(err)
			mu.Unlock()
			_, err = ss.ListRoots(ctx, nil)
			mu.Lock()
			got["roots"] = errText(err)
			caps = ss.InitializeParams().Capabilities
			mu.Unlock()
			return textResult("probed"), nil
		})
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	res, err := f.svc.Call(ctx, mcp.CallParams{URL: s.URL, Tool: "probe"})
	if err != nil || res.Content != "probed" {
		t.Fatalf("probe = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The SDK's server refuses to send what the client did not declare;
	// a server that sends anyway gets t3agent's refusal. Either way the
	// request is answered at once, with an error.
	refused := func(s, what string) bool {
		return strings.Contains(s, "does not support "+what) || strings.Contains(s, "method not found")
	}
	if !refused(got["sampling"], "sampling") || !refused(got["roots"], "roots") {
		t.Errorf("refusals = %q", got)
	}
	//lint:ignore SA1019 that sampling and roots are not declared is what is tested
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil || caps.Elicitation.URL == nil || caps.Sampling != nil || caps.RootsV2 != nil {
		b, _ := json.Marshal(caps)
		t.Errorf("declared capabilities = %s", b)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	var rpc *jsonrpc.Error
	if e, ok := err.(*jsonrpc.Error); ok {
		rpc = e
		return rpc.Message
	}
	return err.Error()
}

// TestUnsupportedInputRequest: an input_required result asking for
// sampling ends the call with an error that names it.
func TestUnsupportedInputRequest(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t, askingKinds[0])
	s.mcp.AddTool(&sdk.Tool{Name: "sample", Description: "Wants an LLM.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"s": &sdk.CreateMessageParams{MaxTokens: 5,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}}}}, nil
		})
	f := newFixture(t)
	g := f.gated(t)
	f.add(t, "s", s.URL)
	f.importTools(t, g, "s")
	res := g.invoke(t.Context(), "mcp_s_sample", `{}`)
	if !res.IsError || res.Question != nil || !strings.Contains(res.Content, "asked for sampling") {
		t.Errorf("sampling input request = %+v", res)
	}
}

// ---- a dropped answer stream ----

// cutter is an MCP server that cuts the answer stream of a tools/call
// after a priming event (id and retry field), then answers on the GET
// that resumes it with Last-Event-ID, unless refuse says otherwise. It
// is hand-written: the Go SDK's server cannot be made to drop a stream.
type cutter struct {
	*httptest.Server
	mu      sync.Mutex
	pending json.RawMessage // the id of the call waiting for its answer
	resumes []string        // Last-Event-ID of every GET
	refuse  int             // status of the resume; 0 answers it
	retryMS int
}

func newCutter(t testing.TB, refuse int) *cutter {
	c := &cutter{refuse: refuse, retryMS: 50}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *cutter) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "s1")
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		c.mu.Lock()
		c.resumes = append(c.resumes, r.Header.Get("Last-Event-ID"))
		id, refuse := c.pending, c.refuse
		c.mu.Unlock()
		if refuse != 0 {
			w.WriteHeader(refuse)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": "resumed answer"}}}})
		_, _ = w.Write([]byte("id: e2\ndata: " + string(msg) + "\n\n"))
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	switch req.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"cutter","version":"1"}}}`))
	case "tools/call":
		c.mu.Lock()
		c.pending = req.ID
		retry := c.retryMS
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: e1\nretry: " + itoa(retry) + "\ndata: \n\n"))
		// Returning ends the stream before the answer.
	case "":
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (c *cutter) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.resumes...)
}

// TestDroppedStreamResumed: a call whose answer stream is cut after an
// event id is resumed with GET and Last-Event-ID, and finishes with the
// answer sent there.
func TestDroppedStreamResumed(t *testing.T) {
	t.Parallel()
	c := newCutter(t, 0)
	f := newFixture(t)
	res, err := f.svc.Call(t.Context(), mcp.CallParams{URL: c.URL, Tool: "anything"})
	if err != nil || res.Content != "resumed answer" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if got := c.seen(); len(got) != 1 || got[0] != "e1" {
		t.Errorf("resumes = %q", got)
	}
}

// TestDroppedStreamNotResumed: when resuming is refused, or the server's
// retry delay lies past the deadline, the error says that the stream
// was dropped, not that the answer was malformed.
func TestDroppedStreamNotResumed(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		c := newCutter(t, http.StatusBadRequest)
		f := newFixture(t)
		_, err := f.svc.Call(t.Context(), mcp.CallParams{URL: c.URL, Tool: "anything"})
		if mcp.KindOf(err) != mcp.KindStreamLost || !strings.Contains(err.Error(), "dropped its answer stream, and resuming it was refused with HTTP status 400") {
			t.Errorf("error = %v (%s)", err, mcp.KindOf(err))
		}
	})
	t.Run("retry_past_deadline", func(t *testing.T) {
		t.Parallel()
		c := newCutter(t, 0)
		c.retryMS = 60_000
		f := newFixture(t, func(p *mcp.Params) { p.Timeout = 300 * time.Millisecond })
		_, err := f.svc.Call(t.Context(), mcp.CallParams{URL: c.URL, Tool: "anything"})
		if mcp.KindOf(err) != mcp.KindTimeout || len(c.seen()) != 0 {
			t.Errorf("error = %v (%s), resumes %q", err, mcp.KindOf(err), c.seen())
		}
	})
}
