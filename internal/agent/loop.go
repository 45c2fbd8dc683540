package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/tool"
)

// settleTimeout bounds the final write of a run whose context ended.
const settleTimeout = 10 * time.Second

// run is the state of one Run; it lives on the Run's goroutine only.
type run struct {
	rt   *Runtime
	req  Request
	cfg  *agentconfig.Resolved
	conf agentconfig.Configuration // the primary's, whose settings apply
	// pipeline screens everything; provider is the fallback chain, each
	// entry metered; chain holds the entries it tries, by name.
	pipeline *guardrail.Pipeline
	provider llm.Provider
	chain    map[string]chainEntry
	id       string
	owner    string // the lease this segment holds
	created  bool
	finished bool
	rec      *recorder
	prog     store.RunProgress
	usage    llm.Usage
	cal      float64
	offered  *gate.Offered
	// state and base are set on a resumed segment: the sealed turn it
	// answers and the rounds before it.
	state    *suspendedState
	base     int
	requeues int // how often a queued run was requeued before
	// queued: the row keeps a stored request (a queued run, also in its
	// resumed segments), which every recorded write replaces with a
	// continuation.
	queued bool
	specs  map[string]tool.Spec
	defs   []llm.ToolDef
	// beside collects the text the model wrote in this segment's rounds
	// beside its tool calls, for Result.Beside.
	beside []string
	// roundSpan is the span of the round under way.
	roundSpan trace.Span
	// host: the run is an MCP host's call (see SuspendHostCall), answered
	// without a model; lastIsError is whether the last call failed.
	host        bool
	lastIsError bool
	// approved: the calls running now were approved in this segment's
	// decision; asked is the question a call asked (see ask).
	approved bool
	asked    *askedState
}

// ending is how the loop stopped, before it is settled.
type ending struct {
	outcome Outcome
	status  store.RunStatus
	term    Termination
	public  string // Result.Error
	class   string
	content string
	// pending and state are set for a suspension.
	pending *Pending
	state   string
	// unsettled: the row is not ours any more (cancelled elsewhere, lease
	// lost), so nothing is written.
	unsettled bool
}

func failed(term Termination, class, public string) ending {
	return ending{outcome: OutcomeFailed, status: store.RunFailed, term: term, class: class, public: public}
}

func cancelled() ending {
	return ending{outcome: OutcomeCancelled, status: store.RunCancelled, term: TerminationCancelled,
		class: "canceled", public: "The run was cancelled."}
}

func internalFailure() ending {
	return failed(TerminationProviderFailed, "internal", "The run failed because of an internal error; the log has the details.")
}

// Run executes one agent run to its end and returns how it ended. It
// never panics and never returns a Go error: failures are outcomes.
func (rt *Runtime) Run(ctx context.Context, req Request) (res Result) {
	r := &run{rt: rt, req: req, cfg: req.Config, cal: InitialCalibration, owner: rt.owner}
	ctx, span := rt.spans.segment(ctx, "run", "", req.Config, req.Caller)
	defer func() { rt.spans.end(span, res, nil) }() // after the recover below has set res
	defer func() {
		if v := recover(); v != nil {
			rt.log.ErrorContext(ctx, "agent run panicked", "run_id", r.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if r.finished {
				res = Result{Outcome: OutcomeFailed, RunID: r.id, Termination: TerminationProviderFailed, Error: internalFailure().public}
				return
			}
			res = r.finish(ctx, internalFailure())
		}
	}()
	// Each segment may make a bounded number of remote (MCP) calls.
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	if e := r.start(ctx); e != nil {
		return r.finish(ctx, *e)
	}
	return r.finish(ctx, r.loop(ctx))
}

// start records the run and sets up what it needs: the guardrail
// pipeline and the provider chain.
func (r *run) start(ctx context.Context) *ending {
	rt := r.rt
	r.id = newRunID(rt.now())
	privacy := agentconfig.PrivacyMetadata
	if r.cfg != nil {
		r.conf = r.cfg.Configuration
		if r.conf.Privacy == agentconfig.PrivacyFull {
			privacy = agentconfig.PrivacyFull
		}
	}
	r.rec = &recorder{runID: r.id, full: privacy == agentconfig.PrivacyFull, now: rt.now, onEvent: r.req.OnEvent}
	p := store.CreateRunParams{
		ID: r.id, Configuration: clip(r.conf.Identifier), CallerSource: clip(r.req.Caller.Source),
		CallerOperation: clip(r.req.Caller.Operation), Privacy: string(privacy),
		LeaseOwner: r.owner, Lease: LeaseDuration,
	}
	if a := r.req.Actor; a != nil {
		p.OwnerUsername, p.OwnerUID = clip(a.Username), max(a.UID, 0)
	}
	if _, err := rt.st.CreateRun(ctx, p); err != nil {
		rt.log.ErrorContext(ctx, "agent run cannot be recorded; not running it", "run_id", r.id, "error", err.Error())
		e := failed(TerminationProviderFailed, "store", "The run could not be recorded, so it did not start.")
		if ctx.Err() != nil {
			e = cancelled()
		}
		return &e
	}
	r.created = true
	return r.prepare(ctx)
}

// prepare sets up what a segment needs once its row is ours: the
// guardrail pipeline and the provider chain.
func (r *run) prepare(ctx context.Context) *ending {
	if r.cfg == nil {
		e := failed(TerminationProviderFailed, "configuration", "The run has no configuration.")
		return &e
	}
	pl, err := guardrail.NewPipeline(guardrail.PipelineParams{Enabled: r.conf.Guardrails})
	if err != nil {
		e := failed(TerminationPolicyDenied, "configuration", fmt.Sprintf("Configuration %q: %v.", r.conf.Identifier, err))
		return &e
	}
	r.pipeline = pl
	r.rt.spans.named(ctx, r.conf.Identifier)
	if r.host {
		// A host call asks no model.
		return nil
	}
	return r.buildChain(ctx)
}

func (r *run) maxRounds() int {
	n := r.req.MaxRounds
	if n <= 0 {
		n = r.conf.MaxRounds
	}
	if n <= 0 {
		n = DefaultMaxRounds
	}
	return min(n, MaxRounds)
}

// loop is the agent loop: assemble, offer, then rounds.
func (r *run) loop(ctx context.Context) ending {
	msgs, e := r.assemble(ctx)
	if e != nil {
		return *e
	}
	if e := r.offer(ctx); e != nil {
		return *e
	}
	return r.rounds(ctx, msgs, 0)
}

// offer decides the tools of this segment through the gate, for the
// actor and the live configuration.
func (r *run) offer(ctx context.Context) *ending {
	offered, err := r.rt.gate.Offer(ctx, gate.OfferParams{
		Requested: r.req.Tools, Actor: r.req.Actor, Config: r.cfg, RunID: r.id,
	})
	if err != nil {
		e := cancelled()
		if ctx.Err() == nil {
			r.rt.log.ErrorContext(ctx, "agent run cannot offer tools", "run_id", r.id, "error", err.Error())
			e = failed(TerminationProviderFailed, "store", "The tools could not be offered.")
		}
		return &e
	}
	r.offered = offered
	r.specs = make(map[string]tool.Spec, offered.Len())
	for _, s := range offered.Specs() {
		r.specs[s.Name] = s
		r.defs = append(r.defs, llm.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.InputSchema})
	}
	return nil
}

// rounds runs up to the round cap of this segment; round numbers in
// events continue after base (the rounds of earlier segments).
func (r *run) rounds(ctx context.Context, msgs []llm.Message, base int) ending {
	defer r.endRound()
	maxRounds := r.maxRounds()
	for i := 1; i <= maxRounds; i++ {
		round := base + i
		ctx := r.beginRound(ctx, round)
		resp, e := r.call(ctx, round, msgs, r.defs, false)
		if e != nil {
			return *e
		}
		if len(resp.ToolCalls) == 0 {
			return ending{outcome: OutcomeCompleted, status: store.RunCompleted, term: TerminationCompleted, content: resp.Content}
		}
		calls := withIDs(resp.ToolCalls, round)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: calls})
		if strings.TrimSpace(resp.Content) != "" {
			r.beside = append(r.beside, resp.Content)
		}
		if e := r.scan(ctx, round, msgs, calls); e != nil {
			return *e
		}
		for i := range calls {
			if ctx.Err() != nil {
				return cancelled()
			}
			if msgs, e = r.fenced(ctx, round, msgs, calls[i:], nil); e != nil {
				return *e
			}
		}
	}
	// The cap came with calls still pending: one last call, without
	// tools, for the answer.
	r.prog.Truncated = true
	ctx = r.beginRound(ctx, base+maxRounds+1)
	resp, e := r.call(ctx, base+maxRounds+1, msgs, nil, true)
	if e != nil {
		return *e
	}
	return ending{outcome: OutcomeCompleted, status: store.RunCompleted, term: TerminationMaxIterations, content: resp.Content}
}

// assemble builds the transcript to send: one leading system message with
// the configuration's prompt and then the caller's system text, followed
// by the caller's messages, every one but the model's own screened by the
// input guardrails.
func (r *run) assemble(ctx context.Context) ([]llm.Message, *ending) {
	msgs := joinSystem(r.conf.SystemPrompt, r.req.Messages)
	for i := range msgs {
		stage, ok := stageOf(msgs[i])
		if !ok {
			continue
		}
		text, e := r.screen(ctx, 0, stage, msgs[i].ToolCallID, msgs[i].Content)
		if e != nil {
			return nil, e
		}
		msgs[i].Content = text
	}
	return msgs, nil
}

// joinSystem puts the configuration's prompt and the caller's leading
// system messages into one leading system message, before the caller's
// other messages (a new slice; in is not changed).
func joinSystem(prompt string, in []llm.Message) []llm.Message {
	var system []string
	if p := strings.TrimSpace(prompt); p != "" {
		system = append(system, p)
	}
	for len(in) > 0 && in[0].Role == llm.RoleSystem {
		if t := strings.TrimSpace(in[0].Content); t != "" {
			system = append(system, t)
		}
		in = in[1:]
	}
	msgs := make([]llm.Message, 0, len(in)+1)
	if len(system) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: strings.Join(system, "\n\n")})
	}
	return append(msgs, in...)
}

// call fits the transcript, checks the budget, calls the provider and
// screens the answer. A guardrail's retry verdict calls once more.
func (r *run) call(ctx context.Context, round int, msgs []llm.Message, defs []llm.ToolDef, final bool) (llm.Response, *ending) {
	if ctx.Err() != nil {
		e := cancelled()
		return llm.Response{}, &e
	}
	model := r.cfg.Model
	maxTokens := r.conf.MaxTokens
	if maxTokens <= 0 {
		maxTokens = model.MaxOutputTokens
	}
	fit := Fit(FitParams{
		Messages: msgs, Tools: defs, ContextLength: model.ContextLength,
		MaxTokens: maxTokens, MaxOutput: model.MaxOutputTokens, Calibration: r.cal,
	})
	r.rec.emit(EventContext, round, 0, ContextPayload{
		Breakdown: fit.Breakdown, Messages: len(msgs), Sent: len(fit.Messages), Pruned: fit.Pruned,
		DroppedTurns: fit.DroppedTurns, KeptTurns: fit.KeptTurns, CappedResults: fit.CappedResults,
		Overflow: fit.Overflow, Calibration: fit.Calibration,
	})
	if fit.Overflow {
		e := failed(TerminationContextTruncated, "context", "The conversation does not fit the model's context window, even after dropping older turns.")
		return llm.Response{}, &e
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	rp := RequestPayload{Configuration: r.conf.Identifier, Model: model.ModelID, Messages: len(fit.Messages), Tools: names, Final: final}
	if r.rec.full {
		rp.MessagesSent = fit.Messages
	}
	r.rec.emit(EventRequest, round, 0, rp)
	if e := r.flush(ctx); e != nil {
		return llm.Response{}, e
	}
	req := llm.Request{Model: model.ModelID, Messages: fit.Messages, Tools: defs, Temperature: r.conf.Temperature, MaxTokens: maxTokens}
	for attempt := 0; ; attempt++ {
		if e := r.checkBudget(ctx, fit.Breakdown.EstimatedTokens); e != nil {
			return llm.Response{}, e
		}
		resp, latency, e := r.chat(ctx, round, req)
		if e != nil {
			return llm.Response{}, e
		}
		r.cal = Calibrate(r.cal, resp.Usage.InputTokens, fit.RawTokens)
		s := r.pipeline.ScreenOutput(ctx, resp.Content, resp.FinishReason)
		if s.Verdict == guardrail.Retry && attempt == 0 {
			// Recorded without its content: the retry replaces it.
			resp.Content = ""
			r.emitLLM(round, resp, latency)
			r.verdict(round, guardrail.StageOutput, "", s)
			continue
		}
		if s.Verdict.Strength() > guardrail.Retry.Strength() {
			resp.Content = ""
			r.emitLLM(round, resp, latency)
			return llm.Response{}, r.verdict(round, guardrail.StageOutput, "", s)
		}
		r.verdict(round, guardrail.StageOutput, "", s)
		resp.Content = s.Text
		r.emitLLM(round, resp, latency)
		return resp, nil
	}
}

// checkBudget refuses the next call when a budget of the user or the
// configuration would be exceeded; a failing check refuses too.
func (r *run) checkBudget(ctx context.Context, estimated int) *ending {
	p := telemetry.CheckBudgetParams{
		Username: r.username(), UserBudget: r.cfg.UserLimits(r.username()),
		Configuration: r.conf.Identifier, Budget: r.conf.Budget, PlannedTokens: int64(estimated),
	}
	if pr := r.cfg.Model.Prices; pr != nil {
		p.PlannedCost = pr.Cost(llm.Usage{InputTokens: estimated})
	}
	err := r.rt.tel.CheckBudget(ctx, p)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		e := cancelled()
		return &e
	}
	public := "The budget could not be checked, so no request was sent."
	var be *telemetry.BudgetError
	if errors.As(err, &be) {
		public = "No request was sent: " + be.Error() + "."
	} else {
		r.rt.log.ErrorContext(ctx, "budget check failed; not calling the provider", "run_id", r.id, "error", err.Error())
	}
	e := failed(TerminationBudgetExhausted, "budget", public)
	return &e
}

func (r *run) username() string {
	if r.req.Actor == nil {
		return ""
	}
	return r.req.Actor.Username
}

// chat makes one provider call through the chain and adds up its usage
// and cost. Each entry's call is recorded by the metered chain.
func (r *run) chat(ctx context.Context, round int, req llm.Request) (llm.Response, time.Duration, *ending) {
	start := r.rt.now()
	resp, err := r.provider.Chat(ctx, req)
	latency := r.rt.now().Sub(start)
	r.prog.Rounds++
	if err != nil {
		le := llm.AsError(r.provider.Name(), err)
		r.rec.emit(EventLLM, round, latency, LLMPayload{
			Entry: le.Entry, Provider: le.Provider, Model: r.entry(le.Entry).Model.ModelID, Attempts: le.Attempts,
			FellBack: le.FellBack, ErrorClass: string(le.Class), Error: providerError(le),
		})
		if ctx.Err() != nil || le.Class == llm.FailCanceled {
			e := cancelled()
			return llm.Response{}, latency, &e
		}
		e := failed(TerminationProviderFailed, string(le.Class), providerError(le))
		return llm.Response{}, latency, &e
	}
	r.usage.InputTokens += resp.Usage.InputTokens
	r.usage.OutputTokens += resp.Usage.OutputTokens
	r.prog.InputTokens, r.prog.OutputTokens = int64(r.usage.InputTokens), int64(r.usage.OutputTokens)
	if pr := r.entry(resp.Entry).Model.Prices; pr != nil {
		r.prog.Cost += int64(pr.Cost(resp.Usage))
	} else {
		r.prog.CostUnknown = true
	}
	if resp.Model == "" {
		resp.Model = r.entry(resp.Entry).Model.ModelID
	}
	return resp, latency, nil
}

func (r *run) emitLLM(round int, resp llm.Response, latency time.Duration) {
	p := LLMPayload{
		Entry: resp.Entry, Provider: resp.Provider, Model: resp.Model, FinishReason: resp.FinishReason,
		Usage: resp.Usage, Attempts: resp.Attempts, FellBack: resp.FellBack, ToolCalls: refs(resp.ToolCalls),
	}
	if pr := r.entry(resp.Entry).Model.Prices; pr != nil {
		c := pr.Cost(resp.Usage)
		p.Cost = &c
	}
	if r.rec.full {
		p.Content, p.RequestedToolCalls = resp.Content, resp.ToolCalls
	}
	r.rec.emit(EventLLM, round, latency, p)
}

// providerError is the public sentence for a provider failure: the class
// and status only, never a message that might quote a request.
func providerError(e *llm.Error) string {
	s := "The model provider failed (" + string(e.Class)
	if e.Status != 0 {
		s += fmt.Sprintf(", HTTP %d", e.Status)
	}
	if len(e.FellBack) > 0 {
		s += fmt.Sprintf(", after %d fallback(s)", len(e.FellBack))
	}
	return s + ")."
}

// scan looks at the whole turn before any call runs: an approval-bound
// call stops the run for approval, else a call that needs input stops it
// for input. Only offered tools count; the others fail at the gate.
func (r *run) scan(ctx context.Context, round int, msgs []llm.Message, calls []llm.ToolCall) *ending {
	for _, c := range calls {
		if s, ok := r.specs[c.Name]; ok && s.ApprovalBound() {
			digest := digestOf(calls, "", nil, nil)
			p := ApprovalPayload{Pending: refs(calls), Digest: digest}
			if r.rec.full {
				p.RequestedToolCalls = calls
			}
			r.rec.emit(EventApproval, round, 0, p)
			e := r.suspend(msgs, &Pending{Calls: calls, Digest: digest, Previews: r.previews(ctx, calls)})
			return &e
		}
	}
	for _, c := range calls {
		if s, ok := r.specs[c.Name]; ok && s.InputRequest != nil {
			digest := digestOf(calls, c.Name, s.InputRequest, nil)
			r.rec.emit(EventInput, round, 0, InputPayload{Tool: c.Name, CallID: bounded(c.ID), Digest: digest, Schema: s.InputRequest, Pending: refs(calls)})
			e := r.suspend(msgs, &Pending{Calls: calls, Digest: digest, InputTool: c.Name, InputSchema: s.InputRequest})
			return &e
		}
	}
	return nil
}

// fenced runs one call through the write fence and returns the
// transcript with its result. Before a write runs, its effect is stamped
// on the leased row in the guarded update that renews the lease (a lost
// lease or a cancel stops here, before the side effect); once it ran,
// recordWrite puts it on record whatever happens next.
//
// rest is the turn's calls from this one on; answer is a person's answer
// to the question this call asked before. A call that asks a question
// now suspends the run for input with rest pending.
func (r *run) fenced(ctx context.Context, round int, msgs []llm.Message, rest []llm.ToolCall, answer *tool.Answer) ([]llm.Message, *ending) {
	c := rest[0]
	effect := ""
	if s, ok := r.specs[c.Name]; ok && s.Effect.IsWrite() {
		effect = string(s.Effect)
	}
	if effect != "" {
		if e := r.flushStep(ctx, effect, ""); e != nil {
			return msgs, e
		}
	}
	content, q, e := r.invoke(ctx, round, c, answer)
	if q != nil {
		if effect != "" {
			// The call stopped at its question: nothing took effect, so
			// the fence is lifted with the tool event on record.
			if fe := r.flushStep(ctx, "", ""); fe != nil {
				return msgs, fe
			}
		}
		return msgs, r.ask(round, msgs, rest, q)
	}
	if e == nil {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, Content: content, ToolCallID: c.ID})
	}
	if effect != "" {
		if we := r.recordWrite(ctx, round, msgs, e == nil); we != nil {
			return msgs, we
		}
	}
	return msgs, e
}

// recordWrite stores the step of a write that ran, which clears its
// pending effect: its tool event, the counters and, for a queued run that
// goes on, the continuation (the transcript through the write's result),
// so that a worker taking the run over after a crash goes on from there
// and never plans the write again. It is stored even when the caller's
// context ended, and on the cancelled row when the run was cancelled
// while the write ran. A write whose step cannot be stored fails the run,
// as does one whose continuation cannot be made: then the settle, which
// drops the stored request, is the write's step, so the run is never
// retried from before the write.
func (r *run) recordWrite(ctx context.Context, round int, msgs []llm.Message, goesOn bool) *ending {
	wctx := context.WithoutCancel(ctx)
	var cont string
	if r.queued && goesOn {
		var err error
		if cont, err = r.continuation(round, msgs); err != nil {
			r.rt.log.ErrorContext(ctx, "cannot keep a queued run's progress after a write; stopping it", "run_id", r.id, "error", err.Error())
			f := failed(TerminationNotRetryable, "store", "A write ran, but the run's progress after it could not be kept, so the run stopped rather than risk repeating the write.")
			return &f
		}
	}
	e := r.flushStep(wctx, "", cont)
	switch {
	case e == nil:
		return nil
	case e.unsettled && e.outcome == OutcomeCancelled:
		// Cancelled while the write ran: the cancel kept the fence for
		// this segment, which records the write on the cancelled row.
		if err := r.rt.st.RecordCancelledWrite(wctx, store.RecordRunStepParams{
			ID: r.id, LeaseOwner: r.owner, Progress: r.prog, Events: r.rec.take(),
		}); err != nil {
			r.rt.log.ErrorContext(ctx, "cannot record a write of a cancelled run", "run_id", r.id, "error", err.Error())
		}
		return e
	case e.unsettled:
		return e
	}
	// The settle records the failure; the step that could not be stored
	// is not offered again (the log has it).
	r.rec.take()
	f := failed(TerminationProviderFailed, "store", "A write ran but could not be recorded, so the run stopped.")
	return &f
}

// invoke runs one call through the gate and screens its result before it
// can reach the provider.
func (r *run) invoke(ctx context.Context, round int, c llm.ToolCall, answer *tool.Answer) (string, *tool.Question, *ending) {
	start := r.rt.now()
	res := r.rt.gate.Invoke(ctx, gate.InvokeParams{
		Name: c.Name, Args: json.RawMessage(c.Arguments),
		Call:   tool.Call{Actor: r.req.Actor, RunID: r.id, CallID: c.ID, Answer: answer},
		Config: r.cfg, Offered: r.offered,
	})
	took := r.rt.now().Sub(start)
	r.prog.ToolCalls++
	if q := res.Question; q != nil && r.rt.keyring != nil && usableSchema(q.Schema) {
		// Asked, not answered: the call goes on once a person answers.
		r.rec.emit(EventTool, round, took, ToolPayload{Tool: bounded(c.Name), CallID: bounded(c.ID), IsError: true, Bytes: 0})
		return "", q, nil
	}
	r.lastIsError = res.IsError
	content, e := r.screen(ctx, round, guardrail.StageToolResult, c.ID, res.Content)
	p := ToolPayload{Tool: bounded(c.Name), CallID: bounded(c.ID), IsError: res.IsError, Bytes: len(content)}
	if r.rec.full && e == nil {
		p.ToolArguments, p.ToolResult = r.redacted(ctx, guardrail.StageToolResult, c.Arguments), content
		p.ToolArtifacts = r.redactArtifacts(ctx, res.Artifacts)
	}
	r.rec.emit(EventTool, round, took, p)
	if e != nil {
		return "", nil, e
	}
	return content, nil, nil
}

// ask suspends the run for a question the first of rest asked while it
// ran; the answer resumes that call (resume, answerInput).
func (r *run) ask(round int, msgs []llm.Message, rest []llm.ToolCall, q *tool.Question) *ending {
	c := rest[0]
	r.asked = &askedState{Message: q.Message, URL: q.URL, State: q.State, Approved: r.approved}
	digest := digestOf(rest, c.Name, q.Schema, r.asked)
	r.rec.emit(EventInput, round, 0, InputPayload{Tool: c.Name, CallID: bounded(c.ID), Digest: digest, Schema: q.Schema,
		Pending: refs(rest), Message: q.Message, URL: q.URL})
	e := r.suspend(msgs, &Pending{Calls: rest, Digest: digest, InputTool: c.Name, InputSchema: q.Schema, InputMessage: q.Message, InputURL: q.URL})
	return &e
}

// flush writes the queued events with the run's progress and renews the
// lease, guarded by it. A run that is no longer ours stops unsettled.
//
// It runs once a round, before the provider call, so the request in
// flight is on record; the answer and the tool calls of a turn are
// written with the next request or the settle. (A write tool will flush
// before it runs, stamping its pending effect.) Live views see every
// event at once through Request.OnEvent.
func (r *run) flush(ctx context.Context) *ending { return r.flushStep(ctx, "", "") }

// flushStep is flush stamping a pending effect (the write fence) or
// storing a continuation.
func (r *run) flushStep(ctx context.Context, pendingEffect, continuation string) *ending {
	evs := r.rec.take()
	err := r.rt.st.RecordRunStep(ctx, store.RecordRunStepParams{
		ID: r.id, LeaseOwner: r.owner, Lease: LeaseDuration, Progress: r.prog, PendingEffect: pendingEffect,
		Continuation: continuation, Events: evs,
	})
	if err == nil {
		return nil
	}
	r.rec.untake(evs)
	if ctx.Err() != nil {
		e := cancelled()
		return &e
	}
	if errors.Is(err, store.ErrConflict) {
		e := cancelled()
		if cur, rerr := r.rt.st.Run(ctx, r.id); rerr != nil || cur.Status != store.RunCancelled {
			e = failed(TerminationProviderFailed, "lease_lost", "The run was taken over by another process.")
			e.outcome = OutcomeLeaseLost
		}
		e.unsettled = true
		r.rt.log.WarnContext(ctx, "agent run is no longer ours; stopping", "run_id", r.id, "error", err.Error())
		return &e
	}
	r.rt.log.ErrorContext(ctx, "cannot record a run step", "run_id", r.id, "error", err.Error())
	e := failed(TerminationProviderFailed, "store", "The run could not be recorded, so it stopped.")
	return &e
}

// finish settles (or suspends) the run and builds its Result.
func (r *run) finish(ctx context.Context, e ending) Result {
	r.finished = true
	res := Result{
		Outcome: e.outcome, Content: e.content, Rounds: r.prog.Rounds, ToolCalls: r.prog.ToolCalls,
		Usage: r.usage, Cost: agentconfig.USD(r.prog.Cost), CostUnknown: r.prog.CostUnknown, Truncated: r.prog.Truncated,
		Termination: e.term, Error: e.public, Pending: e.pending, Beside: r.beside,
	}
	if !r.created {
		return res
	}
	res.RunID = r.id
	if e.unsettled {
		return res
	}
	// The final write must happen even when the caller's context ended.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	evs := r.rec.take()
	var err error
	if e.pending != nil && e.state != "" {
		_, err = r.rt.st.SuspendRun(wctx, store.SuspendRunParams{
			ID: r.id, LeaseOwner: r.owner, Status: e.status, Outcome: string(e.outcome), Progress: r.prog,
			TurnDigest: e.pending.Digest, SuspendedState: e.state, Events: evs,
		})
	} else {
		answer := ""
		if r.req.KeepAnswer && e.outcome == OutcomeCompleted {
			answer = encodeAnswer(Answer{Content: e.content, Beside: r.beside})
		}
		_, err = r.rt.st.SettleRun(wctx, store.SettleRunParams{
			ID: r.id, LeaseOwner: r.owner, Status: e.status, Outcome: string(e.outcome),
			TerminationReason: string(e.term), Progress: r.prog, Error: cutUTF8(e.public, store.MaxRunErrorLen),
			ErrorClass: clip(e.class), Answer: answer, Events: evs,
		})
	}
	if err != nil {
		r.rt.log.ErrorContext(ctx, "cannot settle the run", "run_id", r.id, "outcome", e.outcome, "error", err.Error())
		if errors.Is(err, store.ErrConflict) {
			if cur, rerr := r.rt.st.Run(wctx, r.id); rerr == nil && cur.Status == store.RunCancelled {
				res.Outcome, res.Termination, res.Error, res.Pending = OutcomeCancelled, TerminationCancelled, cancelled().public, nil
				return res
			}
		}
		if e.pending != nil {
			// A waiting run whose state is not stored cannot resume.
			res.Outcome, res.Termination, res.Pending = OutcomeSuspendFailed, TerminationProviderFailed, nil
			res.Error = "The run needed a decision but its pending turn could not be stored."
		}
	}
	return res
}

// withIDs gives every call an id, since tool results are paired by it;
// a provider that sends none gets call_<round>_<index>.
func withIDs(calls []llm.ToolCall, round int) []llm.ToolCall {
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", round, i)
		}
		out[i] = c
	}
	return out
}

// newRunID returns a UUIDv7: time-ordered, so ids sort by creation.
func newRunID(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ms := uint64(now.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// clip fits outside text into a store name column.
func clip(s string) string {
	return cutUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), store.MaxNameLen)
}
