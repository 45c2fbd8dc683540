package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// RefusalCode says why a decision on a waiting run was refused. Nothing
// of the pending turn ran; after a claim the run is back waiting.
type RefusalCode string

const (
	RefusedNotWaiting           RefusalCode = "run_not_waiting"
	RefusedAccessDenied         RefusalCode = "run_access_denied"
	RefusedConfigurationGone    RefusalCode = "configuration_gone"
	RefusedOwnerCannotAct       RefusalCode = "owner_cannot_act"
	RefusedSelfApproval         RefusalCode = "self_approval_denied"
	RefusedCorruptState         RefusalCode = "corrupt_suspended_state"
	RefusedStateUnavailable     RefusalCode = "state_unavailable"
	RefusedInvalidInput         RefusalCode = "invalid_input"
	RefusedAlreadyResuming      RefusalCode = "run_already_resuming"
	RefusedStaleTurn            RefusalCode = "stale_turn"
	RefusedApproverNotPermitted RefusalCode = "approver_not_permitted"
	RefusedNotAuditable         RefusalCode = "approval_not_auditable"
	// RefusedToolUnavailable: a pending call's tool is no longer usable
	// as the turn asked for it — gone from the registry (its MCP server
	// removed, disabled or made inert, or the tool left the catalogue),
	// switched off, or now outside the configuration's groups or trust
	// zone. It is about the tool, not the person: no one could release it.
	RefusedToolUnavailable RefusalCode = "tool_unavailable"
)

// RefusedError is a decision refused before anything of the turn ran.
type RefusedError struct {
	Code   RefusalCode
	Detail string
	// Missing is set when there is no such run at all; the error then
	// also matches store.ErrNotFound.
	Missing bool
}

// Is lets a refusal of an unknown run match store.ErrNotFound.
func (e *RefusedError) Is(target error) bool { return e.Missing && target == store.ErrNotFound }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("agent: decision refused (%s): %s", e.Code, e.Detail)
}

func refuse(code RefusalCode, format string, args ...any) error {
	return &RefusedError{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Event kinds of decisions.
const (
	// EventDecision is an approval or a denial, stored before anything of
	// the turn runs.
	EventDecision EventKind = "decision"
	// EventInputSubmitted is a person's input (never its values).
	EventInputSubmitted EventKind = "input_submitted"
	// EventRefused is a decision refused after the claim; the run is
	// waiting again.
	EventRefused EventKind = "refused"
)

// DecisionPayload is an approval or a denial.
type DecisionPayload struct {
	Approved  bool   `json:"approved"`
	DecidedBy string `json:"decidedBy"`
	// Token names the service token that decided, if one did.
	Token  string `json:"token,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// InputSubmittedPayload names who answered which tool.
type InputSubmittedPayload struct {
	Tool        string `json:"tool"`
	SubmittedBy string `json:"submittedBy"`
	// Action is accept, decline or cancel.
	Action string `json:"action,omitempty"`
}

// RefusedPayload is a refused decision.
type RefusedPayload struct {
	Reason RefusalCode `json:"reason"`
	By     string      `json:"by"`
}

// ApproveParams are the parameters of Approve.
type ApproveParams struct {
	RunID string
	// Approver decides; nil is refused. For a service token it is the
	// token's backend user.
	Approver *typo3.BackendUser
	// Access is the service token acting, if any (see Access).
	Access Access
	// Approved false denies the turn: every pending call is answered
	// "denied by the operator" and the loop goes on.
	Approved bool
	// Digest is the turn digest the approver saw; it must match.
	Digest string
	// Reason is the approver's note, kept with the decision.
	Reason  string
	OnEvent func(Event)
}

// SubmitInputParams are the parameters of SubmitInput.
type SubmitInputParams struct {
	RunID     string
	Submitter *typo3.BackendUser
	// Access is the service token acting, if any; a service token never
	// answers input.
	Access Access
	// Data is the answer, a JSON object valid against the input schema;
	// it is read only when Action accepts.
	Data json.RawMessage
	// Action is tool.AnswerAccept ("" too), tool.AnswerDecline or
	// tool.AnswerCancel. Declined or cancelled, the asking call is told
	// so (an MCP server gets the action; a builtin's call is answered
	// that the person declined).
	Action  string
	Digest  string
	OnEvent func(Event)
}

// parked is a waiting run read before its claim.
type parked struct {
	row   store.Run
	cfg   *agentconfig.Resolved
	owner *typo3.BackendUser
	state suspendedState
}

// Approve decides on a run waiting for approval. The checks run in this
// order, each refusing with a RefusedError: the run waits for approval;
// the approver may act on it (an admin or the owner; a service token
// with agent:approve); its configuration still exists; four-eyes (with
// require_second_approver the initiator may deny, never approve; a
// service token is never the initiator); the sealed state opens; the
// atomic claim; the turn digest (constant-time, a missing one is stale);
// for an approval, the approver's own gate for every approval-bound call,
// and no service token releasing a write; and the decision event stored
// before anything runs. A refusal after the claim releases the run back
// to waiting with a refused event. The turn then runs as the run's
// owner, re-gated on the live configuration.
func (rt *Runtime) Approve(ctx context.Context, p ApproveParams) (res Result, err error) {
	// res is named so that a panic recovered by guard still reports the
	// failed run.
	ctx, span := rt.spans.segment(ctx, "approve", p.RunID, nil, Caller{})
	defer func() { rt.spans.end(span, res, err) }()
	pk, err := rt.precheck(ctx, p.RunID, store.RunWaitingForApproval, p.Approver, p.Access)
	if err != nil {
		return Result{}, err
	}
	if p.Approved && fourEyes(pk.cfg, p.Approver, p.Access, pk.row) {
		return Result{}, refuse(RefusedSelfApproval, "configuration %s requires a second person to approve", pk.cfg.Configuration.Identifier)
	}
	if pk.state, err = rt.openState(ctx, p.RunID, "", false); err != nil {
		return Result{}, err
	}
	r, err := rt.claim(ctx, pk, store.RunWaitingForApproval, p.OnEvent)
	if err != nil {
		return Result{}, err
	}
	defer r.guard(ctx, &res)
	if err := r.checkDigest(p.Digest); err != nil {
		return Result{}, r.release(ctx, err, p.Approver.Username)
	}
	bound, writes := r.boundCalls(ctx)
	if p.Approved && writes && p.Access.Service() {
		return Result{}, r.release(ctx, refuse(RefusedApproverNotPermitted, "service token %s may not release a write", p.Access.Token), p.Approver.Username)
	}
	if p.Approved && len(bound) > 0 {
		for _, name := range bound {
			d, err := rt.gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: p.Approver, Config: r.cfg, RunID: r.id})
			if err != nil || !d.Allowed {
				return Result{}, r.release(ctx, gateRefusal(p.Approver.Username, name, d, err), p.Approver.Username)
			}
		}
	}
	r.rec.emit(EventDecision, r.base, 0, DecisionPayload{Approved: p.Approved, DecidedBy: clip(p.Approver.Username), Token: clip(p.Access.Token), Reason: cutUTF8(p.Reason, 500)})
	if e := r.flush(ctx); e != nil {
		if e.unsettled {
			// Cancelled (or taken over) since the claim: nothing runs.
			return r.finish(ctx, *e), nil
		}
		if p.Approved && len(bound) > 0 {
			r.rec.take()
			return Result{}, r.release(ctx, refuse(RefusedNotAuditable, "the approval could not be recorded"), p.Approver.Username)
		}
		rt.log.WarnContext(ctx, "cannot record a decision; going on, nothing to write", "run_id", r.id)
	}
	mode := answerDeny
	if p.Approved {
		mode = answerApprove
	}
	res = r.finish(ctx, r.resume(ctx, mode, nil))
	return res, nil
}

// SubmitInput answers a run waiting for input. It checks the waiting
// state, the submitter's right (an admin or the owner; a service token
// with agent:approve), the configuration; a service token is then
// refused approver_not_permitted, before anything is opened or claimed
// (SPEC §5 refuses it at the submitter's gate, after the claim; refusing
// earlier changes nothing but the refused event a release would write).
// The answer is validated against the input schema before the claim, so
// an invalid one changes nothing and can be resubmitted; then the claim,
// the digest, the submitter's gate for every pending call, the input
// event (without the values), and the turn runs as the run's owner with
// only the keys the schema declares overlaid on the input call's
// arguments.
func (rt *Runtime) SubmitInput(ctx context.Context, p SubmitInputParams) (res Result, err error) {
	ctx, span := rt.spans.segment(ctx, "input", p.RunID, nil, Caller{})
	defer func() { rt.spans.end(span, res, err) }()
	pk, err := rt.precheck(ctx, p.RunID, store.RunWaitingForInput, p.Submitter, p.Access)
	if err != nil {
		return Result{}, err
	}
	if p.Access.Service() {
		return Result{}, refuse(RefusedApproverNotPermitted, "service token %s may not answer input; a person must", p.Access.Token)
	}
	if pk.state, err = rt.openState(ctx, p.RunID, "", true); err != nil {
		return Result{}, err
	}
	action := p.Action
	if action == "" {
		action = tool.AnswerAccept
	}
	var data map[string]any
	switch action {
	case tool.AnswerAccept:
		if data, err = validateInput(pk.state.InputSchema, p.Data); err != nil {
			return Result{}, err
		}
	case tool.AnswerDecline, tool.AnswerCancel:
	default:
		return Result{}, refuse(RefusedInvalidInput, "the action must be accept, decline or cancel")
	}
	r, err := rt.claim(ctx, pk, store.RunWaitingForInput, p.OnEvent)
	if err != nil {
		return Result{}, err
	}
	defer r.guard(ctx, &res)
	if err := r.checkDigest(p.Digest); err != nil {
		return Result{}, r.release(ctx, err, p.Submitter.Username)
	}
	for _, c := range r.state.Pending {
		d, err := rt.gate.Decide(ctx, gate.DecideParams{Tool: c.Name, Actor: p.Submitter, Config: r.cfg, RunID: r.id})
		if err != nil || !d.Allowed {
			return Result{}, r.release(ctx, gateRefusal(p.Submitter.Username, c.Name, d, err), p.Submitter.Username)
		}
	}
	r.rec.emit(EventInputSubmitted, r.base, 0, InputSubmittedPayload{Tool: bounded(r.state.InputTool), SubmittedBy: clip(p.Submitter.Username), Action: action})
	if e := r.flush(ctx); e != nil {
		if e.unsettled {
			return r.finish(ctx, *e), nil
		}
		rt.log.WarnContext(ctx, "cannot record the input event; going on", "run_id", r.id)
	}
	res = r.finish(ctx, r.resume(ctx, answerInput, &tool.Answer{Action: action, Content: data}))
	return res, nil
}

// gateRefusal says why the deciding person's gate refused a pending
// call. Only requires_admin (and a gate that cannot decide) is about the
// person; every other reason is the tool's, said as such.
func gateRefusal(who, name string, d gate.Decision, err error) error {
	name = bounded(name)
	switch {
	case err != nil || d.Reason == gate.ReasonRequiresAdmin:
		return refuse(RefusedApproverNotPermitted, "%s may not use %s", who, name)
	case d.Reason == gate.ReasonNotRegistered:
		return refuse(RefusedToolUnavailable, "tool %s is no longer registered: its MCP server was removed, disabled or made inert, or the tool left its catalogue", name)
	case d.Reason == gate.ReasonToolDisabled:
		return refuse(RefusedToolUnavailable, "tool %s is disabled by its own or its group's override", name)
	case d.Reason == gate.ReasonConfigurationGroup:
		return refuse(RefusedToolUnavailable, "tool %s is no longer in a group the configuration allows", name)
	case d.Reason == gate.ReasonTrustZone:
		return refuse(RefusedToolUnavailable, "tool %s now declares %s data, above the %s zone's ceiling %s", name, d.DataClass, d.Zone, d.Ceiling)
	}
	return refuse(RefusedApproverNotPermitted, "%s may not use %s (%s)", who, name, d.Reason)
}

// precheck runs the checks before the state is opened: the waiting
// actor's right (agent:approve for a service token), the waiting status,
// the configuration and the owner.
func (rt *Runtime) precheck(ctx context.Context, id string, want store.RunStatus, actor *typo3.BackendUser, access Access) (parked, error) {
	if rt.configs == nil || rt.users == nil || rt.keyring == nil {
		return parked{}, refuse(RefusedStateUnavailable, "this runtime cannot resume runs (no configurations, users or master key)")
	}
	if actor == nil {
		// Decisions are attributed to a backend user, a token's too.
		return parked{}, refuse(RefusedAccessDenied, "a decision needs the backend user who makes it")
	}
	row, err := rt.st.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return parked{}, &RefusedError{Code: RefusedNotWaiting, Detail: fmt.Sprintf("there is no run %s", id), Missing: true}
	}
	if err != nil {
		return parked{}, err
	}
	// The right comes before the status, so that a stranger learns
	// nothing of the run.
	if !mayActOnRun(actor, access, row, store.ScopeAgentApprove) {
		return parked{}, refuse(RefusedAccessDenied, "only an admin or the run's owner (a service token: with agent:approve, for its user's runs) may decide on run %s", id)
	}
	if row.Status != want || !row.HasSuspendedState {
		return parked{}, refuse(RefusedNotWaiting, "run %s is %s, not %s", id, row.Status, want)
	}
	cfg, err := rt.configs.Resolve(ctx, row.Configuration)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return parked{}, refuse(RefusedConfigurationGone, "configuration %q of run %s is gone", row.Configuration, id)
		}
		return parked{}, err
	}
	owner, err := rt.users.BackendUserByName(ctx, row.OwnerUsername)
	if err != nil {
		if errors.Is(err, typo3.ErrUserCannotAct) {
			return parked{}, refuse(RefusedOwnerCannotAct, "the run's owner %s cannot act any more", row.OwnerUsername)
		}
		return parked{}, err
	}
	return parked{row: row, cfg: cfg, owner: owner}, nil
}

// openState reads and decodes the sealed state of a run (sealed "" reads
// it from the store). A corrupt state, a wrong key or an unusable input
// schema is refused; the row is not touched.
func (rt *Runtime) openState(ctx context.Context, id, sealed string, input bool) (suspendedState, error) {
	if sealed == "" {
		var err error
		if sealed, err = rt.st.RunSuspendedState(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return suspendedState{}, refuse(RefusedNotWaiting, "run %s holds no suspended state", id)
			}
			return suspendedState{}, err
		}
	}
	plain, err := rt.keyring.Open(sealed, suspendAAD(id))
	if err != nil {
		return suspendedState{}, refuse(RefusedCorruptState, "the suspended state of run %s does not open", id)
	}
	var st suspendedState
	if err := json.Unmarshal(plain, &st); err != nil || st.Version != 1 || len(st.Pending) == 0 || len(st.Messages) == 0 {
		return suspendedState{}, refuse(RefusedCorruptState, "the suspended state of run %s is not readable", id)
	}
	if input && (st.InputTool == "" || !usableSchema(st.InputSchema)) {
		return suspendedState{}, refuse(RefusedCorruptState, "the suspended state of run %s has no usable input schema", id)
	}
	return st, nil
}

// usableSchema: a non-empty object schema with a type or properties.
func usableSchema(raw json.RawMessage) bool {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(raw, &s) == nil && (s.Type != "" || len(s.Properties) > 0)
}

// validateInput checks an answer against the input schema; an invalid
// one is refused before anything is claimed.
func validateInput(schema, data json.RawMessage) (map[string]any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, refuse(RefusedCorruptState, "the input schema is not JSON")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("input.json", doc); err != nil {
		return nil, refuse(RefusedCorruptState, "the input schema cannot be loaded")
	}
	sch, err := c.Compile("input.json")
	if err != nil {
		return nil, refuse(RefusedCorruptState, "the input schema does not compile")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, refuse(RefusedInvalidInput, "the answer is not JSON")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, refuse(RefusedInvalidInput, "the answer must be a JSON object")
	}
	if err := sch.Validate(v); err != nil {
		return nil, refuse(RefusedInvalidInput, "the answer does not match the schema: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return obj, nil
}

// claim moves the run to running under a fresh resume lease and builds
// the segment from the state read after the claim. A state that no longer
// opens fails the run: it cannot be resumed.
func (rt *Runtime) claim(ctx context.Context, pk parked, from store.RunStatus, onEvent func(Event)) (*run, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	owner := "resume:" + rt.node + ":" + hex.EncodeToString(b[:])
	c, err := rt.st.ClaimWaitingRun(ctx, store.ClaimWaitingRunParams{ID: pk.row.ID, From: from, LeaseOwner: owner, Lease: LeaseDuration})
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil, refuse(RefusedAlreadyResuming, "run %s is already being resumed or is no longer waiting", pk.row.ID)
	}
	if err != nil {
		return nil, err
	}
	r := rt.segment(c.Run, pk.cfg, pk.owner, owner, c.NextSeq, onEvent)
	st, err := rt.openState(ctx, c.ID, c.Sealed, from == store.RunWaitingForInput)
	if err != nil {
		r.finish(ctx, failed(TerminationProviderFailed, "corrupt_state", "The run's pending turn could not be read after it was claimed."))
		return nil, err
	}
	r.adopt(st)
	return r, nil
}

// segment is a run struct for a row this process now holds.
func (rt *Runtime) segment(row store.Run, cfg *agentconfig.Resolved, actor *typo3.BackendUser, owner string, seq int64, onEvent func(Event)) *run {
	r := &run{rt: rt, cfg: cfg, id: row.ID, owner: owner, created: true, cal: InitialCalibration, prog: row.RunProgress,
		requeues: row.RequeueCount, queued: row.HasQueuedRequest}
	r.conf = cfg.Configuration
	r.req = Request{Config: cfg, Actor: actor, OnEvent: onEvent}
	r.usage = llm.Usage{InputTokens: int(row.InputTokens), OutputTokens: int(row.OutputTokens)}
	r.rec = &recorder{runID: row.ID, seq: seq, full: row.Privacy == string(agentconfig.PrivacyFull), now: rt.now, onEvent: onEvent}
	return r
}

// adopt takes the sealed state's transcript, counters and request.
func (r *run) adopt(st suspendedState) {
	r.state = &st
	r.req.Caller, r.req.Tools, r.req.MaxRounds, r.req.KeepAnswer = st.Caller, st.Tools, st.Progress.RequestedMax, st.KeepAnswer
	r.base = st.Progress.Rounds
	r.host = st.Host
	if st.Calibration > 0 {
		r.cal = st.Calibration
	}
}

// checkDigest is gate 1: the decision must quote the digest of the turn
// read after the claim; a missing one is stale.
func (r *run) checkDigest(digest string) error {
	want := digestOf(r.state.Pending, r.state.InputTool, r.state.InputSchema, r.state.Asked)
	if digest == "" || subtle.ConstantTimeCompare([]byte(digest), []byte(want)) != 1 {
		return refuse(RefusedStaleTurn, "the decision does not quote the pending turn's digest")
	}
	return nil
}

// boundCalls names the pending calls that need approval, and reports
// whether any of them declares a write; an unknown tool counts as a
// non-idempotent write.
func (r *run) boundCalls(ctx context.Context) (bound []string, writes bool) {
	return r.rt.boundCalls(ctx, r.state.Pending)
}

func (rt *Runtime) boundCalls(ctx context.Context, calls []llm.ToolCall) (bound []string, writes bool) {
	for _, c := range calls {
		e, ok := rt.gate.Registry().Get(ctx, c.Name)
		if !ok || e.Spec.ApprovalBound() {
			bound = append(bound, c.Name)
		}
		writes = writes || !ok || e.Spec.Effect.IsWrite()
	}
	return bound, writes
}

// pendingWrites reports whether any of calls declares a write (see
// boundCalls).
func (rt *Runtime) pendingWrites(ctx context.Context, calls []llm.ToolCall) bool {
	_, writes := rt.boundCalls(ctx, calls)
	return writes
}

// release hands a refused run back to waiting with a refused event and
// returns the refusal; if even that fails, the run fails.
func (r *run) release(ctx context.Context, refusal error, by string) error {
	var re *RefusedError
	code := RefusalCode("refused")
	if errors.As(refusal, &re) {
		code = re.Code
	}
	r.rec.take()
	r.rec.emit(EventRefused, r.base, 0, RefusedPayload{Reason: code, By: clip(by)})
	status := store.RunWaitingForApproval
	if r.state.InputTool != "" {
		status = store.RunWaitingForInput
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if _, err := r.rt.st.ReleaseRun(wctx, store.ReleaseRunParams{ID: r.id, LeaseOwner: r.owner, Status: status, Events: r.rec.take()}); err != nil {
		r.rt.log.ErrorContext(ctx, "cannot release a refused run; failing it", "run_id", r.id, "error", err.Error())
		r.finish(ctx, failed(TerminationProviderFailed, "store", "A refused decision could not hand the run back, so it failed."))
	}
	return refusal
}

// guard turns a panic of a resumed segment into a failed run.
func (r *run) guard(ctx context.Context, res *Result) {
	if v := recover(); v != nil {
		r.rt.log.ErrorContext(ctx, "agent run panicked", "run_id", r.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if r.finished {
			*res = Result{Outcome: OutcomeFailed, RunID: r.id, Termination: TerminationProviderFailed, Error: internalFailure().public}
			return
		}
		*res = r.finish(ctx, internalFailure())
	}
}

type answerMode int

const (
	answerDeny answerMode = iota
	answerApprove
	answerInput
)

// resume answers the pending turn and goes on with the loop: the tools
// are offered afresh for the owner on the live configuration, each
// pending call is denied, refused or run through the write fence, and the
// rounds continue with a fresh cap. A call that asked a question while it
// ran (state.Asked) is made again with the person's answer.
func (r *run) resume(ctx context.Context, mode answerMode, input *tool.Answer) ending {
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	if e := r.prepare(ctx); e != nil {
		return *e
	}
	if e := r.offer(ctx); e != nil {
		return *e
	}
	asked := r.state.Asked
	r.approved = mode == answerApprove || (mode == answerInput && asked != nil && asked.Approved)
	msgs := r.state.Messages
	inputDone := false
	for i, c := range r.state.Pending {
		if ctx.Err() != nil {
			return cancelled()
		}
		spec, offered := r.specs[c.Name]
		refusal := ""
		var answer *tool.Answer
		switch {
		case mode == answerDeny:
			refusal = "Error: the call was denied by the operator."
		case !offered:
			refusal = fmt.Sprintf("Error: tool %q is no longer permitted.", displayName(c.Name))
		case mode == answerInput && spec.ApprovalBound() && !r.approved && (asked != nil || c.Name != r.state.InputTool || inputDone):
			// The turn was scanned for approval before it waited for
			// input, so the tool became approval-bound meanwhile; input
			// is not an approval.
			refusal = fmt.Sprintf("Error: tool %q needs an approval this turn did not get.", displayName(c.Name))
			if err := r.rt.gate.RecordUnapproved(ctx, gate.UnapprovedParams{Tool: c.Name, Actor: r.req.Actor, Config: r.cfg, RunID: r.id}); err != nil {
				r.rt.log.WarnContext(ctx, "cannot record write_unapproved", "run_id", r.id, "error", err.Error())
			}
		case mode == answerInput && asked != nil && i == 0:
			answer = &tool.Answer{Action: input.Action, Content: input.Content, State: asked.State}
		case mode == answerInput && asked == nil && c.Name == r.state.InputTool && !inputDone:
			inputDone = true
			if input.Action != tool.AnswerAccept {
				refusal = fmt.Sprintf("Error: the person declined to give the input tool %q asks for.", displayName(c.Name))
				break
			}
			c.Arguments = overlay(c.Arguments, r.state.InputSchema, input.Content)
		case spec.InputRequest != nil:
			refusal = fmt.Sprintf("Error: tool %q requires user input that was not provided.", displayName(c.Name))
		}
		if refusal != "" {
			r.rec.emit(EventTool, r.base, 0, ToolPayload{Tool: bounded(c.Name), CallID: bounded(c.ID), IsError: true, Bytes: len(refusal)})
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, Content: refusal, ToolCallID: c.ID})
			continue
		}
		rest := append([]llm.ToolCall{c}, r.state.Pending[i+1:]...)
		var e *ending
		if msgs, e = r.fenced(ctx, r.base, msgs, rest, answer); e != nil {
			return *e
		}
	}
	r.approved = false
	if r.host {
		return r.hostEnding(mode, msgs)
	}
	return r.rounds(ctx, msgs, r.base)
}

func displayName(name string) string { return bounded(name) }

// overlay puts the person's values for the schema's declared keys over
// the model's arguments, dropping the model's values for those keys; any
// other key of the answer is ignored.
func overlay(args string, schema json.RawMessage, input map[string]any) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	m := map[string]any{}
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		m = map[string]any{}
	}
	for k := range s.Properties {
		delete(m, k)
		if v, ok := input[k]; ok {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}
