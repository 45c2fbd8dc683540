package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// A host call is a tool call an MCP host (an IDE agent) made through
// t3agent's MCP facade that needs approval. It never runs at once: it
// becomes a run waiting for approval whose pending turn is the host's
// call, decided like any other (Approve: digest, four-eyes, the
// approver's gate, previews) and executed by t3agent under its write
// fence. No model takes part: once the turn is answered the run ends,
// and its result is kept sealed in a host_result event for the host to
// fetch (HostResult), whatever the run's privacy level, because it is
// the answer the host asked for.

// EventHostResult carries the sealed result of a host call.
const EventHostResult EventKind = "host_result"

// HostResultPayload is the result of a host call: the tool's content,
// screened by the guardrails, sealed with the master key and bound to
// the run; the event itself shows only its size.
type HostResultPayload struct {
	Tool    string `json:"tool"`
	IsError bool   `json:"isError"`
	Bytes   int    `json:"bytes"`
	Sealed  string `json:"sealed"`
}

func hostResultAAD(runID string) string { return "agent_host_result:" + runID }

// hostCallID is the call id of a host call's one pending call.
const hostCallID = "host_call_1"

// HostCallParams are the parameters of SuspendHostCall.
type HostCallParams struct {
	// Config is the configuration whose tool groups, trust zone and
	// approval rules apply; required.
	Config *agentconfig.Resolved
	// Actor is who the host acts for; the run's owner.
	Actor *typo3.BackendUser
	// Caller names the facade (Source "mcp") and the host's client
	// (Operation).
	Caller Caller
	Tool   string
	// Arguments are the host's arguments, a JSON object.
	Arguments json.RawMessage
}

// SuspendHostCall records a host's approval-bound call as a run waiting
// for approval and returns at once (Outcome awaiting_approval with the
// run id and the pending turn). The tool must be offered to the actor on
// the configuration and be approval-bound; otherwise the run fails and
// nothing waits. It never runs the call.
func (rt *Runtime) SuspendHostCall(ctx context.Context, p HostCallParams) (res Result) {
	r := &run{rt: rt, cfg: p.Config, cal: InitialCalibration, owner: rt.owner, host: true,
		req: Request{Config: p.Config, Actor: p.Actor, Caller: p.Caller, Tools: []string{p.Tool}}}
	defer r.guard(ctx, &res)
	if e := r.start(ctx); e != nil {
		return r.finish(ctx, *e)
	}
	if e := r.offer(ctx); e != nil {
		return r.finish(ctx, *e)
	}
	spec, ok := r.specs[p.Tool]
	if !ok {
		return r.finish(ctx, failed(TerminationPolicyDenied, "not_offered", fmt.Sprintf("Tool %q is not available.", bounded(p.Tool))))
	}
	if !spec.ApprovalBound() {
		return r.finish(ctx, failed(TerminationPolicyDenied, "not_approval_bound", fmt.Sprintf("Tool %q does not wait for approval; call it directly.", spec.Name)))
	}
	args := string(p.Arguments)
	if args == "" {
		args = "{}"
	}
	calls := []llm.ToolCall{{ID: hostCallID, Name: spec.Name, Arguments: args}}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: fmt.Sprintf("The MCP host %s calls %s.", bounded(p.Caller.Operation), spec.Name)},
		{Role: llm.RoleAssistant, ToolCalls: calls},
	}
	digest := digestOf(calls, "", nil, nil)
	ap := ApprovalPayload{Pending: refs(calls), Digest: digest}
	if r.rec.full {
		ap.RequestedToolCalls = calls
	}
	r.rec.emit(EventApproval, 0, 0, ap)
	return r.finish(ctx, r.suspend(msgs, &Pending{Calls: calls, Digest: digest, Previews: r.previews(ctx, calls)}))
}

// hostEnding ends a host run once its turn is answered: the result is
// sealed into a host_result event; a denied turn fails approval_denied.
func (r *run) hostEnding(mode answerMode, msgs []llm.Message) ending {
	if mode == answerDeny {
		return failed(TerminationApprovalDenied, "denied", "The call was denied by the operator.")
	}
	content := ""
	if last := msgs[len(msgs)-1]; last.Role == llm.RoleTool {
		content = last.Content
	}
	sealed, err := r.rt.keyring.Seal([]byte(content), hostResultAAD(r.id))
	if err != nil {
		return failed(TerminationProviderFailed, "seal", "The call ran, but its result could not be kept.")
	}
	tool := ""
	if len(r.state.Pending) > 0 {
		tool = bounded(r.state.Pending[0].Name)
	}
	r.rec.emit(EventHostResult, r.base, 0, HostResultPayload{Tool: tool, IsError: r.lastIsError, Bytes: len(content), Sealed: sealed})
	return ending{outcome: OutcomeCompleted, status: store.RunCompleted, term: TerminationCompleted, content: content}
}

// HostOutcome is where a host call stands.
type HostOutcome struct {
	Run store.Run
	// Done: the run ended. Result is set when it ended with a kept result.
	Done   bool
	Result *HostCallResult
}

// HostCallResult is the kept result of an executed host call.
type HostCallResult struct {
	Tool    string
	Content string
	IsError bool
}

// HostResult reads a host call's run and, once it ran, its result. It
// is read under the rule of Status (the owner or an admin; a service
// token with agent:read).
func (rt *Runtime) HostResult(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (HostOutcome, error) {
	row, err := rt.Status(ctx, actor, access, id)
	if err != nil {
		return HostOutcome{}, err
	}
	out := HostOutcome{Run: row, Done: row.Status.Terminal()}
	if row.Status != store.RunCompleted {
		return out, nil
	}
	if rt.keyring == nil {
		return out, errors.New("agent: reading a host call's result needs the master key")
	}
	for after := int64(-1); ; {
		evs, err := rt.st.RunEvents(ctx, store.ListRunEventsParams{RunID: id, FromSeq: after + 1})
		if err != nil {
			return out, err
		}
		for _, ev := range evs {
			if ev.Kind != string(EventHostResult) {
				continue
			}
			var p HostResultPayload
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				return out, fmt.Errorf("agent: the result of run %s is not readable: %w", id, err)
			}
			plain, err := rt.keyring.Open(p.Sealed, hostResultAAD(id))
			if err != nil {
				return out, fmt.Errorf("agent: the result of run %s does not open: %w", id, err)
			}
			out.Result = &HostCallResult{Tool: p.Tool, Content: string(plain), IsError: p.IsError}
			return out, nil
		}
		if len(evs) < store.DefaultRunEventLimit {
			return out, nil
		}
		after = evs[len(evs)-1].Seq
	}
}
