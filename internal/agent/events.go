package agent

import (
	"encoding/json"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// EventKind names a step of a run.
type EventKind string

const (
	// EventContext is the context fit before a provider call.
	EventContext EventKind = "context"
	// EventRequest is a provider call about to be made.
	EventRequest EventKind = "request"
	// EventLLM is the provider's answer, or its failure.
	EventLLM EventKind = "llm"
	// EventTool is one tool call and its result.
	EventTool EventKind = "tool"
	// EventGuardrail is a guardrail that did more than allow.
	EventGuardrail EventKind = "guardrail"
	// EventApproval is a turn stopped for approval.
	EventApproval EventKind = "approval"
	// EventInput is a turn stopped for a person's input.
	EventInput EventKind = "input"
)

// Event is one step of a run, in seq order from 0. Payload is one of the
// XxxPayload types of its kind. At privacy level metadata the payloads'
// content fields (marked "full only") are empty.
type Event struct {
	RunID    string
	Seq      int64
	Kind     EventKind
	Round    int
	Duration time.Duration
	At       time.Time
	Payload  any
}

// CallRef names a tool call without its arguments.
type CallRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func refs(calls []llm.ToolCall) []CallRef {
	out := make([]CallRef, len(calls))
	for i, c := range calls {
		out[i] = CallRef{ID: bounded(c.ID), Name: bounded(c.Name)}
	}
	return out
}

// bounded keeps a name or id the model chose to what a name may be, so
// an event never carries text smuggled in one.
func bounded(s string) string {
	if tool.NamePattern.MatchString(s) {
		return s
	}
	return cutUTF8(s, 64)
}

// ContextPayload is the fit before a call. The breakdown adds up.
type ContextPayload struct {
	Breakdown
	Messages      int     `json:"messages"`
	Sent          int     `json:"sent"`
	Pruned        bool    `json:"pruned"`
	DroppedTurns  int     `json:"droppedTurns"`
	KeptTurns     int     `json:"keptTurns"`
	CappedResults int     `json:"cappedResults"`
	Overflow      bool    `json:"overflow"`
	Calibration   float64 `json:"calibration"`
}

// RequestPayload is a provider call about to be made.
type RequestPayload struct {
	Configuration string   `json:"configuration"`
	Model         string   `json:"model"`
	Messages      int      `json:"messages"`
	Tools         []string `json:"tools"`
	// Final marks the call without tools that ends a truncated run.
	Final bool `json:"final,omitempty"`
	// MessagesSent is the transcript sent (full only).
	MessagesSent []llm.Message `json:"messagesSent,omitempty"`
}

// LLMPayload is the provider's answer or failure.
type LLMPayload struct {
	Entry        string             `json:"entry,omitempty"`
	Provider     string             `json:"provider"`
	Model        string             `json:"model"`
	FinishReason llm.FinishReason   `json:"finishReason,omitempty"`
	Usage        llm.Usage          `json:"usage"`
	Cost         *agentconfig.USD   `json:"cost,omitempty"`
	Attempts     int                `json:"attempts"`
	FellBack     []llm.EntryFailure `json:"fellBack,omitempty"`
	ToolCalls    []CallRef          `json:"toolCalls,omitempty"`
	ErrorClass   string             `json:"errorClass,omitempty"`
	Error        string             `json:"error,omitempty"`
	// Content and RequestedToolCalls (with arguments) are full only.
	Content            string         `json:"content,omitempty"`
	RequestedToolCalls []llm.ToolCall `json:"requestedToolCalls,omitempty"`
}

// ToolPayload is one tool call through the gate.
type ToolPayload struct {
	Tool    string `json:"tool"`
	CallID  string `json:"callId"`
	IsError bool   `json:"isError"`
	// Bytes is the length of the result the model reads.
	Bytes int `json:"bytes"`
	// ToolArguments, ToolResult and ToolArtifacts are full only.
	ToolArguments string          `json:"toolArguments,omitempty"`
	ToolResult    string          `json:"toolResult,omitempty"`
	ToolArtifacts []tool.Artifact `json:"toolArtifacts,omitempty"`
}

// GuardrailPayload is a guardrail that redacted, blocked or asked for
// approval. Findings count what was found by kind; the matched text is
// never recorded.
type GuardrailPayload struct {
	Stage     guardrail.Stage     `json:"stage"`
	Guardrail string              `json:"guardrail"`
	Verdict   guardrail.Verdict   `json:"verdict"`
	Reason    string              `json:"reason,omitempty"`
	CallID    string              `json:"callId,omitempty"`
	Findings  []guardrail.Finding `json:"findings,omitempty"`
}

// ApprovalPayload is a turn stopped for approval.
type ApprovalPayload struct {
	Pending []CallRef `json:"pending"`
	Digest  string    `json:"digest"`
	// RequestedToolCalls (with arguments) is full only.
	RequestedToolCalls []llm.ToolCall `json:"requestedToolCalls,omitempty"`
}

// InputPayload is a turn stopped for a person's input.
type InputPayload struct {
	Tool    string          `json:"tool"`
	CallID  string          `json:"callId"`
	Digest  string          `json:"digest"`
	Schema  json.RawMessage `json:"schema"`
	Pending []CallRef       `json:"pending"`
	// Message and URL are an MCP server's question (see Pending).
	Message string `json:"message,omitempty"`
	URL     string `json:"url,omitempty"`
}

// recorder numbers a run's events and holds them until the next write.
type recorder struct {
	runID   string
	seq     int64
	full    bool
	now     func() time.Time
	onEvent func(Event)
	pending []store.RunEventParams
}

// emit numbers an event, shows it to the live view and queues it for the
// next write. An unencodable payload is stored as {} rather than lost.
func (r *recorder) emit(kind EventKind, round int, d time.Duration, payload any) {
	ev := Event{RunID: r.runID, Seq: r.seq, Kind: kind, Round: round, Duration: d, At: r.now(), Payload: payload}
	r.seq++
	if r.onEvent != nil {
		r.onEvent(ev)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		b = []byte("{}")
	}
	r.pending = append(r.pending, store.RunEventParams{Seq: ev.Seq, Kind: string(kind), Round: round, Duration: max(d, 0), Payload: b, At: ev.At})
}

// take hands the queued events to a write.
func (r *recorder) take() []store.RunEventParams {
	evs := r.pending
	r.pending = nil
	return evs
}

// untake puts events back after a failed write.
func (r *recorder) untake(evs []store.RunEventParams) {
	r.pending = append(evs, r.pending...)
}
