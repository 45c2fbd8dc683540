package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

var cancelSeed = flag.Uint64("cancel-seed", 1, "seed of the random cancel instants of TestCancelAroundApprovedWrite")

// Registry names of the site server's tools.
const (
	siteLookup  = "mcp_site_lookup"  // read-only
	sitePut     = "mcp_site_put"     // an idempotent write
	sitePublish = "mcp_site_publish" // a non-idempotent write
)

// siteServer is a real MCP server (the go-sdk over httptest) with the
// tools lookup, put and publish, each taking {"text": …}. It counts the
// calls that took effect, by registry name and text. A hook set with
// onCall runs in the handler before a call takes effect and may block it:
// a slow write, held by the test.
type siteServer struct {
	url  string
	hook atomic.Pointer[func(name, text string)]
	mu   sync.Mutex
	done map[string]int
}

func newSiteServer(t testing.TB) *siteServer {
	t.Helper()
	s := &siteServer{done: map[string]int{}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "site", Version: "1.0.0"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}
	for _, remote := range []string{"lookup", "put", "publish"} {
		name := "mcp_site_" + remote
		srv.AddTool(&sdk.Tool{Name: remote, Description: "The site's " + remote + ".", InputSchema: schema},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &args)
				if hook := s.hook.Load(); hook != nil {
					(*hook)(name, args.Text)
				}
				s.mu.Lock()
				s.done[name+":"+args.Text]++
				s.mu.Unlock()
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: remote + " done: " + args.Text}}}, nil
			})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(func() {
		ts.Close()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	s.url = ts.URL
	return s
}

// onCall sets the hook every call runs before it takes effect.
func (s *siteServer) onCall(fn func(name, text string)) { s.hook.Store(&fn) }

// count is how many calls of the tool with this text took effect.
func (s *siteServer) count(name, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done[name+":"+text]
}

// importSite adds the site server to the fixture's MCP client (open to
// editors, approval only for its writes), imports its catalogue with the
// effects of the tool names and enables the tools.
func (f *fixture) importSite(t testing.TB, url string) {
	t.Helper()
	ctx := context.Background()
	no := false
	if _, err := f.mcp.Add(ctx, mcp.AddParams{Identifier: "site", Name: "Site", URL: url, DataClass: tool.EditorContent,
		RequiresApproval: &no, AdminOnly: &no, Enabled: true, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.mcp.Import(ctx, mcp.ImportParams{Server: "site", Registry: f.reg}); err != nil {
		t.Fatal(err)
	}
	for name, effect := range map[string]tool.Effect{siteLookup: tool.ReadOnly, sitePut: tool.IdempotentWrite, sitePublish: tool.NonIdempotentWrite} {
		if err := f.mcp.SetToolEffect(ctx, mcp.SetToolEffectParams{Name: name, Effect: effect}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: name, Enabled: true, By: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
}

// effective counts the tool events of name that report a result (no
// error) in the run's log.
func (f *fixture) effective(t testing.TB, runID, name string) int {
	t.Helper()
	n := 0
	for _, p := range payloads[agent.ToolPayload](t, f.events(runID), agent.EventTool) {
		if p.Tool == name && !p.IsError {
			n++
		}
	}
	return n
}

// cancelInstant is where around an approved write a cancel falls.
type cancelInstant string

const (
	beforeApproval cancelInstant = "before_approval" // the run still waits
	atDecision     cancelInstant = "at_decision"     // claimed, the decision not yet stored
	inFlight       cancelInstant = "in_flight"       // the server holds the write
	returned       cancelInstant = "returned"        // the server answered, nothing of it stored
	recorded       cancelInstant = "recorded"        // the write's step stored, the next round begins
	answering      cancelInstant = "answering"       // the provider call after the write is in flight
)

var cancelInstants = []cancelInstant{beforeApproval, atDecision, inFlight, returned, recorded, answering}

// TestCancelAroundApprovedWrite: however a cancel falls around an
// approved write of a slow MCP tool, the write the server carried out is
// on the run's record: its tool event, the run's counter, no pending
// effect left, a gapless log. Every instant is taken once with the cancel
// done inside its hook, then instants are drawn at random (-cancel-seed)
// with the cancel racing the run from a goroutine the hook starts.
func TestCancelAroundApprovedWrite(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		site := newSiteServer(t)
		f := newFixture(t, fixtureParams{storeDSN: dsn(t), mcp: true})
		f.importSite(t, site.url)
		n := 0
		for _, at := range cancelInstants {
			cancelAround(t, f, site, n, at, false)
			n++
		}
		t.Logf("random instants from -cancel-seed=%d", *cancelSeed)
		rng := rand.New(rand.NewPCG(*cancelSeed, 0))
		for range 8 {
			cancelAround(t, f, site, n, cancelInstants[rng.IntN(len(cancelInstants))], true)
			n++
		}
	})
}

// cancelAround waits a fresh run for approval of one publish call,
// approves it and cancels the run at the instant at.
func cancelAround(t *testing.T, f *fixture, site *siteServer, n int, at cancelInstant, racing bool) {
	t.Helper()
	ctx := context.Background()
	tag, config := fmt.Sprintf("note-%d", n), fmt.Sprintf("cancel%d", n)
	var runID atomic.Value
	var fired atomic.Bool
	var once sync.Once
	cancelled := make(chan struct{})
	var won bool
	var cerr error
	fire := func() {
		once.Do(func() {
			fired.Store(true)
			cancel := func() {
				defer close(cancelled)
				won, cerr = f.rt.Cancel(ctx, f.user("editor"), agent.Access{}, runID.Load().(string))
			}
			if racing {
				go cancel()
			} else {
				cancel()
			}
		})
	}
	srv := llmtest.New(t, llmtest.Options{Wire: llmtest.OpenAI, AllowUnused: true},
		llmtest.Calls(llmtest.Call("c1", sitePublish, `{"text":"`+tag+`"}`)),
		llmtest.Text("Published.").WithCheck(func(testing.TB, llmtest.Request) {
			if at == answering {
				fire()
			}
		}))
	f.apply(providerDoc(config, "openai", "externalGlobal", srv, 0, ""))
	first := f.rt.Run(ctx, f.request(config, "editor", "Publish "+tag+"."))
	if first.Outcome != agent.OutcomeAwaitingApproval {
		t.Fatalf("%s: setup = %+v", at, first)
	}
	runID.Store(first.RunID)
	site.onCall(func(name, text string) {
		if at == inFlight && text == tag {
			fire()
		}
	})
	if at == beforeApproval {
		fire()
	}
	res, err := f.rt.Approve(ctx, agent.ApproveParams{
		RunID: first.RunID, Approver: f.user("admin"), Approved: true, Digest: first.Pending.Digest,
		OnEvent: func(ev agent.Event) {
			if at == atDecision && ev.Kind == agent.EventDecision || at == returned && ev.Kind == agent.EventTool ||
				at == recorded && ev.Kind == agent.EventContext {
				fire()
			}
		},
	})
	if !fired.Load() {
		t.Fatalf("%s: the instant never came (approve = %+v, %v)", at, res, err)
	}
	<-cancelled
	writes := site.count(sitePublish, tag)
	row := f.run(first.RunID)
	name := fmt.Sprintf("%s (racing %v)", at, racing)
	if writes > 1 || row.ToolCalls != writes || f.effective(t, first.RunID, sitePublish) != writes || row.PendingEffect != "" || row.LeaseOwner != "" {
		t.Errorf("%s: the server wrote %d time(s), the run records %d tool call(s) and %d tool event(s), pending effect %q, lease %q",
			name, writes, row.ToolCalls, f.effective(t, first.RunID, sitePublish), row.PendingEffect, row.LeaseOwner)
	}
	checkSeq(t, f.events(first.RunID))
	if err == nil && res.ToolCalls != writes {
		t.Errorf("%s: the result counts %d tool call(s), the server wrote %d time(s)", name, res.ToolCalls, writes)
	}
	if code := refusal(err); err != nil && (writes != 0 || code != agent.RefusedNotWaiting && code != agent.RefusedAlreadyResuming) {
		t.Errorf("%s: approve = %v after %d write(s)", name, err, writes)
	}
	switch {
	case cerr != nil:
		t.Errorf("%s: cancel: %v", name, cerr)
	case won && row.Status != store.RunCancelled, !won && row.Status != store.RunCompleted:
		t.Errorf("%s: cancel won = %v, run = %+v", name, won, row)
	}
	if racing {
		return
	}
	want := 1
	if at == beforeApproval || at == atDecision {
		want = 0
	}
	if !won || writes != want {
		t.Errorf("%s: cancel won = %v, %d write(s), want %d", name, won, writes, want)
	}
	if at == beforeApproval && refusal(err) != agent.RefusedNotWaiting || at != beforeApproval && (err != nil || res.Outcome != agent.OutcomeCancelled) {
		t.Errorf("%s: approve = %+v, %v", name, res, err)
	}
}
