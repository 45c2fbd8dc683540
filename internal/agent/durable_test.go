package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestReapAfterCrash: a queued run's process is killed (its store
// connection closed and its goroutine held where it stood, so it never
// writes again) before, during or after one tool call — a read, an
// idempotent write or a non-idempotent write, the writes approved — and
// another process reaps the expired lease and takes the run over. A run
// stopped during a non-idempotent write is dead-lettered; a run whose
// write was recorded goes on from there, the model sent exactly what it
// was sent after the write before the crash; the others start again. No
// approval ever writes twice; only the read, which records no progress,
// runs again.
func TestReapAfterCrash(t *testing.T) {
	requeued, deadLettered := agent.ReapReport{Requeued: 1}, agent.ReapReport{DeadLettered: 1}
	cases := []struct {
		tool, kill string
		reap       agent.ReapReport
		status     store.RunStatus
		term       string
		effective  int // calls of the tool the server carried out
		// recorded are the calls on the run's record; a call the process
		// died in is not, its outcome died with the process.
		recorded int
		// resumed is the first request of the process that took over,
		// and repeats the request it must equal (-1: none made).
		resumed, repeats int
	}{
		{sitePublish, "before", requeued, store.RunWaitingForApproval, "", 0, 0, 1, 0},
		{sitePublish, "during", deadLettered, store.RunFailed, "not_retryable", 1, 0, -1, -1},
		{sitePublish, "after", requeued, store.RunCompleted, "completed", 1, 1, 2, 1},
		{sitePut, "before", requeued, store.RunWaitingForApproval, "", 0, 0, 1, 0},
		{sitePut, "during", requeued, store.RunWaitingForApproval, "", 1, 0, 1, 0},
		{sitePut, "after", requeued, store.RunCompleted, "completed", 1, 1, 2, 1},
		{siteLookup, "before", requeued, store.RunCompleted, "completed", 1, 1, 1, 0},
		{siteLookup, "during", requeued, store.RunCompleted, "completed", 2, 1, 1, 0},
		{siteLookup, "after", requeued, store.RunCompleted, "completed", 2, 2, 2, 0},
	}
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		site, f, clock, late := crashFixture(t, dsn)
		ctx := context.Background()
		for n, tc := range cases {
			t.Run(strings.TrimPrefix(tc.tool, "mcp_site_")+"/"+tc.kill, func(t *testing.T) {
				tag, config := fmt.Sprintf("item-%d", n), fmt.Sprintf("crash%d", n)
				write := tc.tool != siteLookup
				z := newFreezer()
				call := llmtest.Calls(llmtest.Call("c1", tc.tool, `{"text":"`+tag+`"}`))
				held := z.held()
				var script []llmtest.Round
				switch {
				case tc.kill == "before" && !write:
					script = []llmtest.Round{held, call, llmtest.Text("Done.")}
				case tc.kill == "after" && !write:
					script = []llmtest.Round{call, held, call, llmtest.Text("Done.")}
				case !write:
					script = []llmtest.Round{call, call, llmtest.Text("Done.")}
				case tc.kill == "after":
					script = []llmtest.Round{call, held, llmtest.Text("Done.")}
				case tc.reap == deadLettered:
					script = []llmtest.Round{call}
				default:
					script = []llmtest.Round{call, call}
				}
				srv := llmtest.NewOpenAI(t, script...)
				t.Cleanup(z.release) // before the servers close, which wait for their handlers
				f.apply(providerDoc(config, "openai", "externalGlobal", srv, 0, ""))
				site.onCall(func(name, text string) {
					if tc.kill == "during" && text == tag {
						z.freeze()
					}
				})
				id, err := f.rt.Enqueue(ctx, f.request(config, "editor", "Handle "+tag+"."))
				if err != nil {
					t.Fatal(err)
				}
				dead := f.crash(t, z, clock, id, write, func(ev agent.Event) {
					if tc.kill == "before" && ev.Kind == agent.EventDecision {
						z.freeze()
					}
				})
				if tc.kill == "during" {
					// The server finishes the write it was given; the dead
					// process cannot record it.
					z.release()
					<-dead
				}
				rep, res := takeOver(t, late, clock, id)
				if rep != tc.reap || rep == requeued && res.Outcome == agent.OutcomeFailed {
					t.Fatalf("reap = %+v, then %+v; want %+v", rep, res, tc.reap)
				}
				row := f.run(id)
				if row.Status != tc.status || row.TerminationReason != tc.term || row.PendingEffect != "" {
					t.Errorf("run = %+v; want %s %q", row, tc.status, tc.term)
				}
				if got := site.count(tc.tool, tag); got != tc.effective {
					t.Errorf("the server carried out %s %d time(s), want %d", tc.tool, got, tc.effective)
				}
				if got := f.effective(t, id, tc.tool); got != tc.recorded {
					t.Errorf("the run records %d call(s) of %s, want %d", got, tc.tool, tc.recorded)
				}
				checkSeq(t, f.events(id))
				reqs := srv.Requests()
				if tc.resumed < 0 {
					if len(reqs) != 1 {
						t.Errorf("%d provider requests; a dead-lettered run asks nothing more", len(reqs))
					}
				} else {
					got, want := messages(t, reqs[tc.resumed]), messages(t, reqs[tc.repeats])
					if !reflect.DeepEqual(got, want) {
						t.Errorf("the model was sent on resume\n%v\nwant what it was sent in request %d\n%v", got, tc.repeats, want)
					}
					if tc.kill == "after" && write {
						last := got[len(got)-1]
						if last["role"] != "tool" || last["tool_call_id"] != "c1" || !strings.Contains(fmt.Sprint(last["content"]), "done: "+tag) {
							t.Errorf("the resumed run does not show the write's result: %v", got)
						}
					}
				}

				z.release()
				<-dead
				if after := f.run(id); after.Status != row.Status || after.UpdatedAt != row.UpdatedAt {
					t.Errorf("the dead process wrote: %+v", after)
				}
			})
		}
	})
}

// TestReapAfterCrashMidTurn: the process dies in the read that follows an
// approved write in the same turn. The run taken over goes on from the
// write: the model is sent the write's result and, for the read whose
// result was never recorded, that the run was interrupted; nothing of
// the turn runs again unasked.
func TestReapAfterCrashMidTurn(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		site, f, clock, late := crashFixture(t, dsn)
		z := newFreezer()
		srv := llmtest.NewOpenAI(t,
			llmtest.Calls(llmtest.Call("c1", sitePublish, `{"text":"news"}`), llmtest.Call("c2", siteLookup, `{"text":"news"}`)),
			llmtest.Text("Published; the lookup was interrupted."))
		t.Cleanup(z.release)
		f.apply(providerDoc("midturn", "openai", "externalGlobal", srv, 0, ""))
		site.onCall(func(name, _ string) {
			if name == siteLookup {
				z.freeze()
			}
		})
		id, err := f.rt.Enqueue(context.Background(), f.request("midturn", "editor", "Publish the news, then look it up."))
		if err != nil {
			t.Fatal(err)
		}
		dead := f.crash(t, z, clock, id, true, nil)
		z.release()
		<-dead
		rep, res := takeOver(t, late, clock, id)
		if rep != (agent.ReapReport{Requeued: 1}) || res.Outcome != agent.OutcomeCompleted {
			t.Fatalf("reap = %+v, then %+v", rep, res)
		}
		if p, l := site.count(sitePublish, "news"), site.count(siteLookup, "news"); p != 1 || l != 1 {
			t.Errorf("the server carried out publish %d and lookup %d time(s), want once each", p, l)
		}
		tools := payloads[agent.ToolPayload](t, f.events(id), agent.EventTool)
		if len(tools) != 2 || tools[0].Tool != sitePublish || tools[0].IsError || tools[1].Tool != siteLookup || !tools[1].IsError {
			t.Errorf("tool events = %+v; want the write and the interrupted read", tools)
		}
		checkSeq(t, f.events(id))
		msgs := messages(t, srv.Request(1))
		if len(msgs) != 5 || msgs[2]["role"] != "assistant" || msgs[3]["tool_call_id"] != "c1" || msgs[3]["content"] != "publish done: news" ||
			msgs[4]["tool_call_id"] != "c2" || !strings.Contains(fmt.Sprint(msgs[4]["content"]), "interrupted") {
			t.Errorf("the model was sent on resume %v", msgs)
		}
	})
}

// crashFixture is a fixture with the site server imported, and the
// process that outlives a crash: another store connection whose clock
// the test moves.
func crashFixture(t *testing.T, dsn func(testing.TB) string) (*siteServer, *fixture, *testClock, *agent.Runtime) {
	t.Helper()
	site := newSiteServer(t)
	f := newFixture(t, fixtureParams{storeDSN: dsn(t), mcp: true})
	f.importSite(t, site.url)
	clock := &testClock{now: fixedNow()}
	late, _ := f.second(t, "late", clock.Now)
	return site, f, clock, late
}

// freezer holds a process where it stands (in a hook, or in a provider
// call) until released.
type freezer struct {
	frozen, thaw chan struct{}
	once, out    sync.Once
}

func newFreezer() *freezer { return &freezer{frozen: make(chan struct{}), thaw: make(chan struct{})} }

// freeze reports the process frozen and holds it.
func (z *freezer) freeze() {
	z.mark()
	<-z.thaw
}

func (z *freezer) mark()    { z.once.Do(func() { close(z.frozen) }) }
func (z *freezer) release() { z.out.Do(func() { close(z.thaw) }) }

// held is a provider call that freezes the process making it; released,
// it fails, which the dead process cannot record.
func (z *freezer) held() llmtest.Round {
	return llmtest.Round{Status: http.StatusServiceUnavailable, Message: "gone", Hold: z.thaw,
		Check: func(testing.TB, llmtest.Request) { z.mark() }}
}

// crash runs the queued run id in a process of its own (its own store
// connection, its clock at clock's now) and, for a write, approves the
// turn it waits on with onEvent watching; once z is frozen it kills the
// process: its store connection closes, so whatever it does after it is
// released reaches the store no more. dead closes when it has returned.
func (f *fixture) crash(t *testing.T, z *freezer, clock *testClock, id string, approve bool, onEvent func(agent.Event)) (dead chan struct{}) {
	t.Helper()
	ctx := context.Background()
	proc, st := f.second(t, "doomed", (&testClock{now: clock.Now()}).Now)
	dead = make(chan struct{})
	go func() {
		defer close(dead)
		first, ok := proc.RunQueued(ctx, agent.RunQueuedParams{ID: id})
		if !approve {
			return
		}
		if !ok || first.Outcome != agent.OutcomeAwaitingApproval {
			t.Errorf("first segment = %+v, %v", first, ok)
			z.mark()
			return
		}
		_, _ = proc.Approve(ctx, agent.ApproveParams{
			RunID: id, Approver: f.user("admin"), Approved: true, Digest: first.Pending.Digest, OnEvent: onEvent,
		})
	}()
	<-z.frozen
	if err := st.Close(); err != nil { // kill -9
		t.Fatal(err)
	}
	return dead
}

// takeOver is the process that outlives the crash: once the lease has
// expired it reaps, and runs the run if the reaper requeued it.
func takeOver(t *testing.T, rt *agent.Runtime, clock *testClock, id string) (agent.ReapReport, agent.Result) {
	t.Helper()
	ctx := context.Background()
	clock.Advance(agent.LeaseDuration + time.Minute)
	rep, err := rt.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requeued == 0 {
		return rep, agent.Result{}
	}
	clock.Advance(agent.RequeueDelay(0))
	res, ok := rt.RunQueued(ctx, agent.RunQueuedParams{ID: id})
	if !ok {
		t.Fatalf("the requeued run %s was not claimable", id)
	}
	return rep, res
}
