package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
)

// suspendedState is what a waiting run keeps, sealed, so that a decision
// can resume it: the transcript through the tool-call turn, the pending
// calls and the counters. The caller source stays with it, so resumed
// calls are attributed like the first ones.
type suspendedState struct {
	Version       int             `json:"version"`
	Configuration string          `json:"configuration"`
	Messages      []llm.Message   `json:"messages"`
	Pending       []llm.ToolCall  `json:"pending"`
	Tools         []string        `json:"tools"`
	Caller        Caller          `json:"caller"`
	Progress      progressState   `json:"progress"`
	Calibration   float64         `json:"calibration"`
	InputTool     string          `json:"inputTool,omitempty"`
	InputSchema   json.RawMessage `json:"inputSchema,omitempty"`
	Previews      []CallPreview   `json:"previews,omitempty"`
	// Host marks an MCP host's call (SuspendHostCall): answered, it ends.
	Host bool `json:"host,omitempty"`
	// KeepAnswer is Request.KeepAnswer, for the segments that follow.
	KeepAnswer bool `json:"keepAnswer,omitempty"`
	// Asked is set when the first pending call asked a question while it
	// ran; the answer goes back to it (tool.Call.Answer).
	Asked *askedState `json:"asked,omitempty"`
}

// askedState is a question a running call asked (tool.Question).
type askedState struct {
	Message string          `json:"message"`
	URL     string          `json:"url,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
	// Approved: the turn was approved before the call ran, so the
	// pending calls after it run without another approval.
	Approved bool `json:"approved,omitempty"`
}

type progressState struct {
	Rounds       int       `json:"rounds"`
	ToolCalls    int       `json:"toolCalls"`
	Usage        llm.Usage `json:"usage"`
	Cost         int64     `json:"cost"`
	CostUnknown  bool      `json:"costUnknown"`
	RequestedMax int       `json:"requestedMax,omitempty"`
}

// suspendAAD binds a sealed state to its run, so a state copied to
// another row does not open there.
func suspendAAD(runID string) string { return "agent_run:" + runID }

// digestOf identifies a pending turn: SHA-256 over the calls, and for an
// input turn also the input tool and its schema. A decision must quote it.
func digestOf(calls []llm.ToolCall, inputTool string, schema json.RawMessage, asked *askedState) string {
	var b []byte
	switch {
	case inputTool == "":
		b, _ = json.Marshal(calls)
	case asked != nil:
		// The question and the call's continuation are part of the turn:
		// an answer quotes this very question.
		b, _ = json.Marshal(struct {
			Calls  []llm.ToolCall  `json:"pendingCalls"`
			Tool   string          `json:"inputToolName"`
			Schema json.RawMessage `json:"inputSchema"`
			Asked  *askedState     `json:"asked"`
		}{calls, inputTool, schema, asked})
	default:
		b, _ = json.Marshal(struct {
			Calls  []llm.ToolCall  `json:"pendingCalls"`
			Tool   string          `json:"inputToolName"`
			Schema json.RawMessage `json:"inputSchema"`
		}{calls, inputTool, schema})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// suspend ends the loop waiting for approval (pending.InputTool empty)
// or input, with the pending turn sealed. Without a keyring, or if
// sealing fails, the turn cannot be kept and the run fails instead.
func (r *run) suspend(msgs []llm.Message, pending *Pending) ending {
	outcome, status := OutcomeAwaitingApproval, store.RunWaitingForApproval
	if pending.InputTool != "" {
		outcome, status = OutcomeAwaitingInput, store.RunWaitingForInput
	}
	fail := failed(TerminationProviderFailed, "suspend", "The run needs a decision, but its pending turn cannot be kept: no master key is configured.")
	fail.outcome = OutcomeSuspendFailed
	if r.rt.keyring == nil {
		return fail
	}
	st := suspendedState{
		Version: 1, Configuration: r.conf.Identifier, Messages: msgs, Pending: pending.Calls, Tools: r.req.Tools,
		Caller: r.req.Caller, Calibration: r.cal, InputTool: pending.InputTool, InputSchema: pending.InputSchema,
		Previews: pending.Previews, Host: r.host, KeepAnswer: r.req.KeepAnswer, Asked: r.asked,
		Progress: progressState{
			Rounds: r.prog.Rounds, ToolCalls: r.prog.ToolCalls, Usage: r.usage, Cost: r.prog.Cost,
			CostUnknown: r.prog.CostUnknown, RequestedMax: r.req.MaxRounds,
		},
	}
	b, err := json.Marshal(st)
	if err != nil {
		fail.public = "The run needs a decision, but its pending turn cannot be encoded."
		return fail
	}
	sealed, err := r.rt.keyring.Seal(b, suspendAAD(r.id))
	if err != nil {
		fail.public = "The run needs a decision, but its pending turn cannot be sealed."
		return fail
	}
	return ending{outcome: outcome, status: status, pending: pending, state: sealed}
}
