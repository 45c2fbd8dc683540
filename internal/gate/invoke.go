package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/t3agent/t3agent/internal/tool"
)

// MaxArgumentBytes caps the raw JSON arguments of one call.
const MaxArgumentBytes = 1 << 20

// Outcome says how a call ended, for metrics and traces.
type Outcome string

const (
	OutcomeOK               Outcome = "ok"                // the tool answered
	OutcomeToolError        Outcome = "tool_error"        // the tool answered with an error result
	OutcomeDenied           Outcome = "denied"            // the gate refused the call
	OutcomeInvalidArguments Outcome = "invalid_arguments" // arguments not an object or against the schema
	OutcomeFailed           Outcome = "failed"            // a Go error from the tool, or the store failed
	OutcomePanic            Outcome = "panic"             // the tool panicked
	OutcomeTimeout          Outcome = "timeout"           // the call's deadline passed
	OutcomeCanceled         Outcome = "canceled"          // the caller's context ended
)

// CallReport describes one finished Invoke for Params.OnCallFinished. It
// holds no arguments and no content.
type CallReport struct {
	// Tool is the name the caller gave, registered or not.
	Tool string
	// Registered reports whether the registry held Tool when the call was
	// decided, so that metrics can fold unknown names into one.
	Registered bool
	CallID     string
	RunID      string
	Outcome    Outcome
	IsError    bool
	Duration   time.Duration
}

// InvokeParams are the parameters of Invoke.
type InvokeParams struct {
	// Name is the tool to call, as the model named it.
	Name string
	// Args are the call's arguments as the provider sent them: a JSON
	// object. Empty means {}. They are untrusted until validated.
	Args json.RawMessage
	// Call is who calls (Actor) within which run; the gate decides for
	// Call.Actor and records Call.RunID.
	Call   tool.Call
	Config Configuration
	// Offered, when set, is the set offered at the start of the turn: a
	// name outside it is refused, and the decision reuses the overrides
	// and the enforcement mode the offer was made on instead of loading
	// them again. Without it the gate decides afresh (the playground and
	// the CLI).
	Offered *Offered
	// Timeout overrides the gate's deadline for this call when > 0.
	Timeout time.Duration
}

// Invoke is the only way a tool runs. It
//
//  1. asks the gate (a denied call gets a neutral error result and never
//     executes; a denied or observed-only call is a governance event);
//  2. parses the arguments, which must be one JSON object, and validates
//     them against the tool's input schema, compiled once per schema; a
//     violation gets an error result naming the field;
//  3. executes the tool under a deadline, turning a panic or a Go error
//     into the generic `Error: tool "X" failed.` with the cause only in
//     the log;
//  4. bounds the result: UTF-8 coerced, content capped at
//     MaxContentBytes with a marker, artifacts checked, and the result
//     rebuilt from its known fields.
//
// Invoke always returns a result the model may read; failures never
// escape as panics or errors. It returns when the tool does, so tools
// must honour ctx.
func (g *Gate) Invoke(ctx context.Context, p InvokeParams) tool.Result {
	ctx, span := g.startCall(ctx, p)
	start := time.Now()
	res, outcome, registered := g.invoke(ctx, p)
	res = bound(res)
	endCall(span, outcome, res)
	if g.finished != nil {
		g.finished(ctx, CallReport{
			Tool: p.Name, Registered: registered, CallID: p.Call.CallID, RunID: p.Call.RunID,
			Outcome: outcome, IsError: res.IsError, Duration: time.Since(start),
		})
	}
	return res
}

// invoke runs the call and says how it ended and whether the registry
// held the tool.
func (g *Gate) invoke(ctx context.Context, p InvokeParams) (tool.Result, Outcome, bool) {
	name := displayName(p.Name)
	s := scope{actor: p.Call.Actor, cfg: configOf(p.Config), runID: p.Call.RunID}
	e, found, allowed, err := g.admit(ctx, p, s)
	if err != nil {
		g.log.ErrorContext(ctx, "tool call refused: the gate cannot decide", "tool", name, "call_id", p.Call.CallID, "run_id", p.Call.RunID, "error", err.Error())
		return failed(name), OutcomeFailed, found
	}
	if !allowed {
		// Neutral: the model learns neither the reason nor whether the
		// tool exists; the reason is in the log and the governance event.
		return tool.Errorf("Error: tool %q is not available.", name), OutcomeDenied, found
	}
	res, outcome := g.checked(ctx, e, p)
	return res, outcome, true
}

// checked validates the arguments of an admitted call and executes it.
func (g *Gate) checked(ctx context.Context, e tool.Entry, p InvokeParams) (tool.Result, Outcome) {
	name := displayName(p.Name)

	args, problem := parseArgs(p.Args)
	if problem != "" {
		return tool.Errorf("Error: the arguments for tool %q %s.", name, problem), OutcomeInvalidArguments
	}
	sch, err := g.schemas.get(e.Spec.Name, e.Spec.InputSchema)
	if err != nil {
		g.log.ErrorContext(ctx, "tool call refused: the tool's input schema does not compile", "tool", name, "error", err.Error())
		return failed(name), OutcomeFailed
	}
	if err := sch.Validate(args); err != nil {
		return tool.Errorf("Error: invalid arguments for tool %q: %s.", name, describeViolation(err)), OutcomeInvalidArguments
	}
	return g.execute(ctx, e, p, args)
}

// admit is the gate check of a call. With an offered set it reuses the
// offer's overrides and the tool as the offer's view held it, so the
// loop's calls read nothing (a remote tool checks its own declaration),
// and refuses names outside the set; otherwise it takes the registry's
// view and loads the overrides. Denials and observed-only calls are
// recorded.
func (g *Gate) admit(ctx context.Context, p InvokeParams, s scope) (e tool.Entry, found, allowed bool, err error) {
	if p.Offered != nil {
		e, found = p.Offered.entries[p.Name]
	}
	if !found {
		// Outside an offer, or a name it did not offer: the registry says
		// which denial to record.
		e, found = g.reg.View(ctx).Get(p.Name)
	}
	var ov Overrides
	switch {
	case p.Offered != nil:
		ov = p.Offered.ov
	case found:
		if ov, err = g.avail.Load(ctx); err != nil {
			return e, found, false, err
		}
	}
	s.enforcement = ov.Enforcement()
	d := decide(p.Name, e, found, ov, s)
	if d.Allowed && p.Offered != nil && !p.Offered.Has(p.Name) {
		d.Allowed, d.ObservedOnly, d.Reason = false, false, ReasonNotOffered
	}
	d = g.record(ctx, StageCall, s, []Decision{d})[0]
	traceDecision(ctx, d)
	return e, found, d.Allowed, nil
}

// parseArgs decodes the arguments, keeping numbers as json.Number so no
// precision is lost, and says what is wrong in words that follow "the
// arguments for tool X".
func parseArgs(raw json.RawMessage) (map[string]any, string) {
	if len(raw) > MaxArgumentBytes {
		return nil, fmt.Sprintf("are %d bytes, more than the %d allowed", len(raw), MaxArgumentBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, ""
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, "are not valid JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "must be a JSON object, not " + jsonKind(v)
	}
	return obj, ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// execute runs the tool under its deadline and turns every way it can
// fail into a result.
func (g *Gate) execute(ctx context.Context, e tool.Entry, p InvokeParams, args map[string]any) (res tool.Result, outcome Outcome) {
	name := e.Spec.Name
	timeout := g.timeout
	if p.Timeout > 0 {
		timeout = p.Timeout
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logAttrs := []any{"tool", name, "call_id", p.Call.CallID, "run_id", p.Call.RunID}
	defer func() {
		if v := recover(); v != nil {
			g.log.ErrorContext(ctx, "tool panicked", append(logAttrs, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
			res, outcome = failed(name), OutcomePanic
		}
	}()

	r, err := e.Tool.Execute(callCtx, p.Call, args)
	switch {
	case err == nil && r.IsError:
		return r, OutcomeToolError
	case err == nil:
		return r, OutcomeOK
	case ctx.Err() != nil:
		g.log.InfoContext(ctx, "tool call stopped: the caller's context ended", append(logAttrs, "error", err.Error())...)
		return tool.Errorf("Error: tool %q was stopped before it finished.", name), OutcomeCanceled
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		g.log.WarnContext(ctx, "tool call timed out", append(logAttrs, "timeout", timeout.String(), "error", err.Error())...)
		return tool.Errorf("Error: tool %q did not finish within %s.", name, timeout), OutcomeTimeout
	default:
		g.log.ErrorContext(ctx, "tool failed", append(logAttrs, "error", err.Error())...)
		return failed(name), OutcomeFailed
	}
}

// failed is the generic result of a broken call; the cause is logged only.
func failed(name string) tool.Result {
	return tool.Errorf("Error: tool %q failed.", name)
}

// displayName bounds a model-chosen name before it is echoed back.
func displayName(name string) string {
	if len(name) > 64 || !tool.NamePattern.MatchString(name) {
		return cutRunes(storable(name), 64)
	}
	return name
}
