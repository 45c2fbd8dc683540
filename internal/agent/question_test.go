package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// askServer is a real MCP server (the go-sdk over httptest) whose tool
// "publish" asks for a title before it publishes. Stateless, it speaks
// 2026-07-28 and asks with input_required; with sessions and an older
// revision the SDK turns the same handler into elicitation/create on the
// call's stream.
type askServer struct {
	url       string
	mu        sync.Mutex
	published []string
	answers   []string
}

func newAskServer(t testing.TB, stateless bool) *askServer {
	t.Helper()
	a := &askServer{}
	var versions []string
	if !stateless {
		versions = []string{"2025-06-18"}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1.0.0"}, &sdk.ServerOptions{SupportedProtocolVersions: versions})
	schema := map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []any{"title"}}
	srv.AddTool(&sdk.Tool{Name: "publish", Description: "Publishes a page; asks its title.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["title"]
			if !ok {
				return &sdk.CallToolResult{RequestState: "r1", InputRequests: sdk.InputRequestMap{
					"title": &sdk.ElicitParams{Message: "Which title shall the page get?", RequestedSchema: schema}}}, nil
			}
			er := resp.(*sdk.ElicitResult)
			a.mu.Lock()
			defer a.mu.Unlock()
			a.answers = append(a.answers, er.Action)
			if er.Action != "accept" {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "not published: " + er.Action}}}, nil
			}
			title, _ := er.Content["title"].(string)
			a.published = append(a.published, title)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "published " + title}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(func() {
		ts.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	a.url = ts.URL
	return a
}

func (a *askServer) seen() (published, answers []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.published...), append([]string(nil), a.answers...)
}

// importAsker adds the asking server (a write that needs approval, open
// to editors) and enables its tool.
func (f *fixture) importAsker(t testing.TB, url string) {
	t.Helper()
	ctx := context.Background()
	no := false
	if _, err := f.mcp.Add(ctx, mcp.AddParams{Identifier: "ask", Name: "Asker", URL: url, DataClass: tool.EditorContent,
		AdminOnly: &no, Enabled: true, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.mcp.Import(ctx, mcp.ImportParams{Server: "ask", Registry: f.reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: "mcp_ask_publish", Enabled: true, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
}

// restarted is another process over the same store: its own store
// connection, MCP client, registry, gate and runtime. Nothing of the
// first process's memory reaches it.
func (f *fixture) restarted(t testing.TB) *agent.Runtime {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, f.dsn, store.OpenParams{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	log := slog.New(slog.NewTextHandler(f.logs, nil))
	client, err := mcp.New(mcp.Params{Store: st, Logger: log, ClientVersion: "restarted"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	tc, err := tca.Load(tca.LoadParams{ProjectRoot: f.site.Root})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(builtin.Tools(f.tsite, readpolicy.New(tc)), client.Provider())
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Params{Registry: reg, Store: st, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := agent.New(agent.Params{Gate: g, Store: st, Providers: f.providers, Telemetry: f.tel, Keyring: f.keyring,
		Now: fixedNow, Logger: log, LeaseOwner: "interactive:restarted", Configs: f.cfgs, Users: f.tsite})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestServerQuestionSuspendsQueuedRun: a queued run's approved MCP call
// is asked a question by its server (input_required from a 2026-07-28
// server; elicitation/create from a stateful 2025-06-18 one); the run
// waits for input with the question and its form; another process,
// started afresh over the same store, takes the person's answer, and the
// same call finishes with it: published once, the run completed. Decline
// and cancel reach the server as such.
func TestServerQuestionSuspendsQueuedRun(t *testing.T) {
	for _, kind := range []struct {
		name      string
		stateless bool
	}{{"mrtr", true}, {"elicitation", false}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
				for _, action := range []string{tool.AnswerAccept, tool.AnswerDecline, tool.AnswerCancel} {
					t.Run(action, func(t *testing.T) {
						askQueued(t, dsn, kind.stateless, action)
					})
				}
			})
		})
	}
}

func askQueued(t *testing.T, dsn func(testing.TB) string, stateless bool, action string) {
	ctx := context.Background()
	a := newAskServer(t, stateless)
	f := newFixture(t, fixtureParams{storeDSN: dsn(t), mcp: true})
	f.importAsker(t, a.url)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "mcp_ask_publish", `{}`)), llmtest.Text("Done."))
	f.apply(providerDoc("asking", "openai", "externalGlobal", srv, 0, ""))
	id, err := f.rt.Enqueue(ctx, f.request("asking", "editor", "Publish the page."))
	if err != nil {
		t.Fatal(err)
	}
	first, ok := f.rt.RunQueued(ctx, agent.RunQueuedParams{ID: id})
	if !ok || first.Outcome != agent.OutcomeAwaitingApproval {
		t.Fatalf("first segment = %+v, %v", first, ok)
	}
	asked, err := f.rt.Approve(ctx, agent.ApproveParams{RunID: id, Approver: f.user("admin"), Approved: true, Digest: first.Pending.Digest})
	if err != nil {
		t.Fatal(err)
	}
	p := asked.Pending
	if asked.Outcome != agent.OutcomeAwaitingInput || p == nil || p.InputTool != "mcp_ask_publish" ||
		p.InputMessage != "Which title shall the page get?" || !strings.Contains(string(p.InputSchema), `"title"`) {
		t.Fatalf("after approval = %+v (pending %+v)", asked, p)
	}
	if row := f.run(id); row.Status != store.RunWaitingForInput || row.PendingEffect != "" {
		t.Fatalf("waiting row = %+v", row)
	}
	if pub, _ := a.seen(); len(pub) != 0 {
		t.Fatalf("published before the answer: %v", pub)
	}
	inputs := payloads[agent.InputPayload](t, f.events(id), agent.EventInput)
	if len(inputs) != 1 || inputs[0].Message != "Which title shall the page get?" || inputs[0].Digest != p.Digest {
		t.Errorf("input events = %+v", inputs)
	}

	// The first process is gone; a fresh one takes the answer.
	later := f.restarted(t)
	if _, err := later.SubmitInput(ctx, agent.SubmitInputParams{RunID: id, Submitter: f.user("editor"), Action: action,
		Data: json.RawMessage(`{"title":"x"}`), Digest: "stale"}); err == nil {
		t.Fatal("a stale digest was taken")
	}
	res, err := later.SubmitInput(ctx, agent.SubmitInputParams{RunID: id, Submitter: f.user("editor"), Action: action,
		Data: json.RawMessage(`{"title":"Spring news"}`), Digest: p.Digest})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != agent.OutcomeCompleted || res.Content != "Done." {
		t.Fatalf("answered = %+v", res)
	}
	pub, answers := a.seen()
	want := "not published: " + action
	if action == tool.AnswerAccept {
		want = "published Spring news"
		if len(pub) != 1 || pub[0] != "Spring news" {
			t.Errorf("published = %v", pub)
		}
	} else if len(pub) != 0 {
		t.Errorf("published after %s = %v", action, pub)
	}
	// The server saw the person's action last (a stateful server saw
	// "cancel" first: that is how the question was put on hold).
	if len(answers) == 0 || answers[len(answers)-1] != action {
		t.Errorf("answers the server saw = %v", answers)
	}
	msgs := messages(t, srv.Request(1))
	if last := msgs[len(msgs)-1]; last["tool_call_id"] != "c1" || last["content"] != want {
		t.Errorf("the model was sent %v", last)
	}
	if row := f.run(id); row.Status != store.RunCompleted {
		t.Errorf("run = %+v", row)
	}
	checkSeq(t, f.events(id))
}

// TestServerQuestionInvalidAnswer: an answer that does not match the
// server's form is refused before anything is claimed; the run still
// waits and takes a valid one.
func TestServerQuestionInvalidAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAskServer(t, true)
	f := newFixture(t, fixtureParams{mcp: true})
	f.importAsker(t, a.url)
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "mcp_ask_publish", `{}`)), llmtest.Text("Done."))
	f.apply(providerDoc("asking", "openai", "externalGlobal", srv, 0, ""))
	first := f.rt.Run(ctx, f.request("asking", "editor", "Publish."))
	asked, err := f.rt.Approve(ctx, agent.ApproveParams{RunID: first.RunID, Approver: f.user("admin"), Approved: true, Digest: first.Pending.Digest})
	if err != nil || asked.Outcome != agent.OutcomeAwaitingInput {
		t.Fatalf("asked = %+v, %v", asked, err)
	}
	_, err = f.rt.SubmitInput(ctx, agent.SubmitInputParams{RunID: first.RunID, Submitter: f.user("editor"), Data: json.RawMessage(`{"title":7}`), Digest: asked.Pending.Digest})
	if refusal(err) != agent.RefusedInvalidInput {
		t.Fatalf("invalid answer = %v", err)
	}
	if _, err := f.rt.SubmitInput(ctx, agent.SubmitInputParams{RunID: first.RunID, Submitter: f.user("editor"), Action: "maybe", Digest: asked.Pending.Digest}); refusal(err) != agent.RefusedInvalidInput {
		t.Fatalf("unknown action = %v", err)
	}
	res, err := f.rt.SubmitInput(ctx, agent.SubmitInputParams{RunID: first.RunID, Submitter: f.user("editor"), Data: json.RawMessage(`{"title":"T"}`), Digest: asked.Pending.Digest})
	if err != nil || res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("valid answer = %+v, %v", res, err)
	}
	if pub, _ := a.seen(); len(pub) != 1 {
		t.Errorf("published = %v", pub)
	}
}
