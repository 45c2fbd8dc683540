package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// Provider returns the catalogue as a tool.Provider for the registry.
// It reads the store only, never the network. It is a tool.Versioned
// provider: the registry asks the catalogue's generation in the store on
// every lookup, so a server or tool changed by any process (the CLI beside
// a running serve, another serve on the same PostgreSQL store) is
// registered anew from the next lookup on.
func (s *Service) Provider() tool.Provider { return provider{s} }

type provider struct{ s *Service }

func (p provider) String() string { return "the MCP catalogue" }

// Generation is the catalogue's generation in the store, which triggers
// move with every change to what Tools reads (store.MCPCatalogue).
func (p provider) Generation(ctx context.Context) (int64, error) {
	return p.s.st.MCPCatalogueGeneration(ctx)
}

// Tools yields one tool per live catalogue row of every enabled server
// that declares a data class. Servers without one are inert: none of
// their tools is registered, so none can be offered or called.
//
// Each tool keeps the server and row it was made from, so a call does
// not read the store (see remoteTool.Execute for when it does).
func (p provider) Tools(ctx context.Context) ([]tool.Tool, error) {
	// Read before the store: a change the Service makes after this point
	// is then seen by the tools even if the reads below missed it.
	epoch := p.s.changes.epoch()
	read := time.Now()
	servers, err := p.s.st.MCPServers(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := p.s.st.MCPTools(ctx, store.ListMCPToolsParams{})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.MCPServer, len(servers))
	for _, srv := range servers {
		byID[srv.Identifier] = srv
	}
	var out []tool.Tool
	for _, row := range rows {
		srv, ok := byID[row.Server]
		if !ok {
			continue
		}
		if spec, ok := specOf(srv, row); ok {
			t := &remoteTool{s: p.s, spec: spec, remote: row.RemoteName, mark: p.s.changes.mark(srv.Identifier)}
			t.cur.Store(&declaration{server: srv, epoch: epoch, read: read})
			out = append(out, t)
		}
	}
	return out, nil
}

// specOf is the registry's view of one catalogue row, or false when the
// row must not be registered (server disabled or inert, row orphaned or
// unusable).
func specOf(srv store.MCPServer, row store.MCPTool) (tool.Spec, bool) {
	class, err := tool.ParseDataClass(srv.DataClass)
	if err != nil || !srv.Enabled || row.Orphaned || row.Server != srv.Identifier {
		return tool.Spec{}, false
	}
	schema := []byte(row.InputSchema)
	if !bytes.HasPrefix(schema, []byte("{")) || !json.Valid(schema) {
		return tool.Spec{}, false
	}
	effect := tool.Effect(srv.Effect)
	if row.Effect != "" {
		effect = tool.Effect(row.Effect)
	}
	desc := row.Description
	if desc == "" {
		desc = row.Title
	}
	if desc == "" {
		desc = "The server gives no description."
	}
	return tool.Spec{
		Name:        row.Name,
		Description: fmt.Sprintf("[via the external MCP server %q] %s", srv.Name, desc),
		InputSchema: schema,
		Group:       Group(srv.Identifier),
		Effect:      effect,
		DataClass:   class,
		AdminOnly:   srv.AdminOnly,
		// Enabling the server is the operator's opt-in: its tools are
		// then usable as declared, unless a tool or group override
		// switches them off.
		EnabledByDefault: true,
		RequiresApproval: srv.RequiresApproval,
		Remote:           true,
	}, true
}

// sameDecision reports whether two specs would be decided alike by the
// gate and the approval scan.
func sameDecision(a, b tool.Spec) bool {
	return a.Name == b.Name && a.Group == b.Group && a.Effect == b.Effect && a.DataClass == b.DataClass &&
		a.AdminOnly == b.AdminOnly && a.RequiresApproval == b.RequiresApproval && a.Remote == b.Remote &&
		bytes.Equal(a.InputSchema, b.InputSchema)
}

// remoteTool is one catalogue row in the registry.
type remoteTool struct {
	s      *Service
	spec   tool.Spec
	remote string
	// mark is the epoch of the server's last change through the Service.
	mark *atomic.Uint64
	// cur is the server record calls use, with when it was read.
	cur atomic.Pointer[declaration]
	// stale is set for good once the declaration is found changed.
	stale atomic.Bool
	// checkMu lets one call at a time compare with the store.
	checkMu sync.Mutex
}

// declaration is the server record a tool calls with, as read from the
// store: its URL and sealed credential are used; its declaration matched
// the tool's spec when it was read.
type declaration struct {
	server store.MCPServer
	epoch  uint64    // the Service's change epoch before the read
	read   time.Time // when it was read
}

func (t *remoteTool) Spec() tool.Spec { return t.spec }

// Execute calls the remote tool. The gate has admitted the call and
// validated the arguments. A server disabled, made inert or redeclared
// since the registry loaded is not called on the old declaration: the
// tool compares its spec with the store again when the server was
// changed through this Service since the last comparison (so such a
// change is seen at once), or when that comparison is older than
// Params.Recheck (so a change made by another process is seen within
// it); otherwise the call reads nothing. Once a change is found the tool
// refuses for good: the registry has made a new tool of the new
// declaration for the next offer. A new URL or credential is taken up
// without that. Then one unit of the run segment's budget
// is spent and the server is asked. Every failure is an error result;
// only a store failure is a Go error.
func (t *remoteTool) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	budget, ok := CallBudgetFrom(ctx)
	if !ok {
		return tool.Errorf("Error: tool %q was not called: no remote-call budget was given for this run segment.", t.spec.Name), nil
	}
	d, err := t.declaration(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	if d == nil {
		return t.unavailable(), nil
	}
	if !budget.take() {
		return tool.Errorf("Error: tool %q was not called: this run segment has used its %d remote calls; the server was not asked.", t.spec.Name, CallsPerSegment), nil
	}
	target, err := t.s.targetOf(ctx, d.server)
	if err != nil {
		return tool.Errorf("Error: tool %q failed: %s.", t.spec.Name, err.Error()), nil
	}
	res, err := t.s.callPooled(ctx, target, remoteCall{name: t.remote, args: args, answer: call.Answer})
	if err != nil {
		return tool.Errorf("Error: tool %q failed: %s.", t.spec.Name, err.Error()), nil
	}
	return res, nil
}

// declaration returns the server record to call with, comparing with
// the store first when due; nil when the declaration changed.
func (t *remoteTool) declaration(ctx context.Context) (*declaration, error) {
	d := t.cur.Load()
	if t.stale.Load() {
		return nil, nil
	}
	if !t.due(d) {
		return d, nil
	}
	t.checkMu.Lock()
	defer t.checkMu.Unlock()
	// Another call may have compared while this one waited.
	if d = t.cur.Load(); t.stale.Load() || !t.due(d) {
		return t.current(d), nil
	}
	epoch := t.s.changes.epoch()
	read := time.Now()
	row, srv, err := t.s.st.MCPToolWithServer(ctx, t.spec.Name)
	if errors.Is(err, store.ErrNotFound) {
		t.stale.Store(true)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if now, ok := specOf(srv, row); !ok || !sameDecision(now, t.spec) || row.RemoteName != t.remote {
		t.stale.Store(true)
		return nil, nil
	}
	d = &declaration{server: srv, epoch: epoch, read: read}
	t.cur.Store(d)
	return d, nil
}

// due reports whether d must be compared with the store before a call.
func (t *remoteTool) due(d *declaration) bool {
	return t.mark.Load() > d.epoch || time.Since(d.read) >= t.s.recheck
}

func (t *remoteTool) current(d *declaration) *declaration {
	if t.stale.Load() {
		return nil
	}
	return d
}

func (t *remoteTool) unavailable() tool.Result {
	return tool.Errorf("Error: tool %q is not available: its MCP server or its declaration was changed, disabled or removed during this turn; the next turn offers the tools as they are now.", t.spec.Name)
}

// remoteCall is one tools/call: the remote tool, its arguments, the
// person's answer when it goes on after a question, and, for a
// diagnostic call, how questions are answered (ElicitDecline,
// ElicitDefaults; "" asks a person).
type remoteCall struct {
	name   string
	args   map[string]any
	answer *tool.Answer
	policy string
}

// maxQuestions bounds the questions one call may ask before it finishes.
const maxQuestions = 10

// callPooled runs tools/call on the server's pooled session (opened,
// after the guard's check, when there is none). A failure
// that may have broken the session retires it; a session the server
// forgot (404) is replaced once within the same deadline, since the
// server did not run the call.
//
// A question of the server ends the call with a tool.Question (see the
// package doc); the call made again with the answer goes on from there.
func (s *Service) callPooled(ctx context.Context, t target, rc remoteCall) (res tool.Result, err error) {
	ctx, span := s.startCall(ctx, t, rc.name)
	defer func() { endCall(span, res, err) }()
	st, params, early, err := prepare(t.id, rc)
	if err != nil || early != nil {
		return deref(early), err
	}
	ctx, op, budget, cancel := s.begin(ctx)
	defer cancel()
	start := time.Now()
	oc := &openCall{armed: st.Armed, policy: rc.policy}
	rounds := 0
	for attempt := 0; ; attempt++ {
		cs, err := s.pool.session(ctx, t)
		if err != nil {
			return tool.Result{}, s.fail(ctx, "call", t, op, budget, err)
		}
		leave := cs.calls.enter(oc)
		r, err := cs.CallTool(ctx, params)
		leave()
		if p := oc.question(); p != nil {
			// Told "cancel" meanwhile: whatever the server made of it is
			// not the call's answer; the person's is.
			return st.ask(t.id, questionKey(p), p)
		}
		if err == nil {
			s.health.record(t.id, time.Since(start))
			var again *sdk.CallToolParams
			if res, again = st.outcome(t.id, r, params, rc.policy); again == nil {
				return res, nil
			}
			if rounds++; rounds > maxQuestions {
				return tool.Errorf("Error: the MCP server %q asked more than %d questions in one call; t3agent stopped answering.", t.id, maxQuestions), nil
			}
			params, attempt = again, -1
			continue
		}
		if !rpcAnswer(op, err) {
			s.pool.invalidate(t.id, cs)
		}
		// A 404 to the call itself means the server never ran it; one to a
		// resume does not, so the call is not sent again then.
		if n, _ := op.resumed(); attempt == 0 && n == 0 && errors.Is(err, sdk.ErrSessionMissing) && ctx.Err() == nil {
			continue
		}
		return tool.Result{}, s.fail(ctx, "call", t, op, budget, err)
	}
}

func deref(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}

// prepare opens the state an answer brings back and builds the request:
// the inputResponses of a 2026-07-28 server's questions once all are
// answered (until then, the next is asked without a request), or the
// answers armed for a stateful server that will ask again.
func prepare(server string, rc remoteCall) (*askState, *sdk.CallToolParams, *tool.Result, error) {
	params := &sdk.CallToolParams{Name: rc.name, Arguments: rc.args}
	if rc.answer == nil {
		return &askState{V: askVersion}, params, nil, nil
	}
	st, err := openAnswer(server, rc.answer)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(st.Responses)+len(st.Armed) > maxQuestions {
		r := tool.Errorf("Error: the MCP server %q asked more than %d questions in one call; t3agent stopped answering.", server, maxQuestions)
		return nil, nil, &r, nil
	}
	if len(st.Requests) > 0 {
		if id := st.nextOpen(); id != "" {
			r, err := st.ask(server, id, st.Requests[id])
			return nil, nil, &r, err
		}
		params.InputResponses = sdk.InputResponseMap{}
		for id, r := range st.Responses {
			params.InputResponses[id] = r
		}
		params.RequestState = st.RequestState
		st.Requests, st.Responses, st.RequestState = nil, nil, ""
	}
	return st, params, nil, nil
}

// ask is the Question for what st asks now.
func (st *askState) ask(server, key string, p *sdk.ElicitParams) (tool.Result, error) {
	st.Asking = key
	return st.question(server, p)
}

// outcome maps a complete answer, or turns an input_required one into a
// question for the person (again non-nil: a diagnostic call answers by
// its policy and asks again at once).
func (st *askState) outcome(server string, r *sdk.CallToolResult, params *sdk.CallToolParams, policy string) (tool.Result, *sdk.CallToolParams) {
	if !r.NeedsInput() {
		return MapResult(r), nil
	}
	if why := unsupportedInput(r.InputRequests); why != "" {
		return tool.Errorf("Error: the MCP server %q asked for %s; the call did not finish.", server, why), nil
	}
	if len(r.InputRequests) == 0 {
		return tool.Errorf("Error: the MCP server %q is busy and asked to be called again later.", server), nil
	}
	if len(st.Responses)+len(st.Armed)+len(r.InputRequests) > maxQuestions {
		return tool.Errorf("Error: the MCP server %q asked more than %d questions in one call; t3agent stopped answering.", server, maxQuestions), nil
	}
	if policy != "" {
		again := *params
		again.InputResponses = sdk.InputResponseMap{}
		oc := &openCall{policy: policy}
		for id, ir := range r.InputRequests {
			again.InputResponses[id] = oc.answer(ir.(*sdk.ElicitParams))
		}
		again.RequestState = r.RequestState
		return tool.Result{}, &again
	}
	st.RequestState, st.Responses = r.RequestState, nil
	st.Requests = map[string]*sdk.ElicitParams{}
	for id, ir := range r.InputRequests {
		st.Requests[id] = ir.(*sdk.ElicitParams)
	}
	id := st.nextOpen()
	res, err := st.ask(server, id, st.Requests[id])
	if err != nil {
		return tool.Errorf("Error: the MCP server %q asked a question t3agent cannot keep.", server), nil
	}
	return res, nil
}

// rpcAnswer reports whether err is a JSON-RPC error the server sent in a
// well-formed answer, which leaves the session intact.
func rpcAnswer(op *operation, err error) bool {
	var rpc *jsonrpc.Error
	status, _, _, _ := op.snapshot()
	return errors.As(err, &rpc) && status >= 200 && status < 300
}

// callOnce runs tools/call on a fresh session, for diagnostics.
func (s *Service) callOnce(ctx context.Context, t target, rc remoteCall) (out tool.Result, err error) {
	ctx, span := s.startCall(ctx, t, rc.name)
	defer func() { endCall(span, out, err) }()
	ctx, op, budget, cancel := s.begin(ctx)
	defer cancel()
	if err := s.resolveCheck(ctx, t); err != nil {
		return tool.Result{}, s.fail(ctx, "call", t, op, budget, err)
	}
	cs, err := s.connect(ctx, t)
	if err != nil {
		return tool.Result{}, s.fail(ctx, "call", t, op, budget, err)
	}
	defer cs.Close()
	st := &askState{V: askVersion}
	oc := &openCall{policy: rc.policy}
	defer cs.calls.enter(oc)()
	params := &sdk.CallToolParams{Name: rc.name, Arguments: rc.args}
	for round := 0; ; round++ {
		if round > maxQuestions {
			return tool.Errorf("Error: the MCP server %q asked more than %d questions in one call; t3agent stopped answering.", t.id, maxQuestions), nil
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return tool.Result{}, s.fail(ctx, "call", t, op, budget, err)
		}
		out, again := st.outcome(t.id, res, params, rc.policy)
		if again == nil {
			return out, nil
		}
		params = again
	}
}

// CallParams are the parameters of Call.
type CallParams struct {
	// Server names a configured server; its catalogue must hold Tool.
	Server string
	// URL, instead of Server, calls a server that is not configured,
	// without a credential.
	URL string
	// Tool is the remote tool name.
	Tool string
	// Args is a JSON object; empty means {}.
	Args json.RawMessage
	// Elicitation says how the server's questions are answered, since a
	// diagnostic call has no person to ask: ElicitDecline (the default)
	// or ElicitDefaults.
	Elicitation string
}

// Call is the operator's diagnostic call of a remote tool, printed to
// the operator and never given to a model: it does not pass the gate,
// which decides what a model may use, and spends no run budget. Callers
// must restrict it to admins. A configured server is called only for a
// tool its catalogue holds (import first); the contact is recorded.
func (s *Service) Call(ctx context.Context, p CallParams) (tool.Result, error) {
	if (p.Server == "") == (p.URL == "") {
		return tool.Result{}, opError("", KindInvalidRequest, "name a configured MCP server or a URL, not both")
	}
	policy := p.Elicitation
	switch policy {
	case "":
		policy = ElicitDecline
	case ElicitDecline, ElicitDefaults:
	default:
		return tool.Result{}, opError(p.Server, KindInvalidRequest, "the elicitation policy must be %q or %q", ElicitDecline, ElicitDefaults)
	}
	args := map[string]any{}
	if len(bytes.TrimSpace(p.Args)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(p.Args))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || args == nil {
			return tool.Result{}, opError(p.Server, KindInvalidRequest, "the arguments must be one JSON object")
		}
	}
	if p.URL != "" {
		t, err := s.urlTarget(p.URL)
		if err != nil {
			return tool.Result{}, err
		}
		return s.callOnce(ctx, t, remoteCall{name: p.Tool, args: args, policy: policy})
	}
	srv, err := s.st.MCPServer(ctx, p.Server)
	if err != nil {
		return tool.Result{}, err
	}
	rows, err := s.st.MCPTools(ctx, store.ListMCPToolsParams{Server: p.Server})
	if err != nil {
		return tool.Result{}, err
	}
	if !slices.ContainsFunc(rows, func(r store.MCPTool) bool { return r.RemoteName == p.Tool }) {
		return tool.Result{}, opError(p.Server, KindNotImported, "the catalogue of MCP server %q has no tool %q; import the server first", p.Server, remoteText(p.Tool, 80))
	}
	t, err := s.targetOf(ctx, srv)
	if err != nil {
		return tool.Result{}, err
	}
	return s.callPooled(ctx, t, remoteCall{name: p.Tool, args: args, policy: policy})
}
