package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Role of a message in a transcript.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn. An assistant message may carry tool calls (and
// text beside them); a tool message answers exactly one call by its id.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// ToolCall is a call the model asked for. Arguments is the raw JSON text
// the model produced; it may be malformed, and the gate decides.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Signature is an opaque token some providers attach to a call and
	// require back with it in later turns (Gemini's thought signature,
	// base64). Keep it with the call; only the adapter reads it.
	Signature string `json:"signature,omitempty"`
}

// ToolDef offers one tool to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one chat completion. Tools nil or empty means the request is
// sent without a tools field at all.
type Request struct {
	Model       string
	Messages    []Message
	Tools       []ToolDef
	Temperature *float64
	MaxTokens   int
}

// FinishReason says why the model stopped.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
	FinishOther         FinishReason = "other"
)

// Usage counts tokens as the provider reported them.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Response is a finished completion.
type Response struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason FinishReason
	Usage        Usage
	// Model is the model id the provider says answered.
	Model string
	// Attempts is how many HTTP attempts the call took (1 = no retry),
	// summed over every fallback entry tried.
	Attempts int
	// Provider is the Name of the provider that served the answer.
	Provider string
	// Entry is the fallback entry that served, "" when no Fallback was used.
	Entry string
	// FellBack lists the fallback entries that failed before Entry, in order.
	FellBack []EntryFailure
}

// EntryFailure records one fallback entry that failed and was passed over.
type EntryFailure struct {
	Entry    string       `json:"entry"`
	Provider string       `json:"provider"`
	Model    string       `json:"model"`
	Class    FailureClass `json:"class"`
	Status   int          `json:"status,omitempty"`
	Attempts int          `json:"attempts"`
}

// Provider is one configured endpoint. Implementations are safe for
// concurrent use; they hold no per-call state.
type Provider interface {
	// Chat sends one completion and waits for the whole answer. A failure
	// is an *Error with its class.
	Chat(ctx context.Context, req Request) (Response, error)
	// Name identifies the provider in telemetry ("openai", "anthropic", …).
	Name() string
}

// Streamer is a Provider that can also deliver the answer's text as it is
// generated. onDelta is called from the calling goroutine, in order, with
// each text fragment; the returned Response is the same as Chat's. Tool
// calls are delivered only in the Response. Use [Stream] to call any
// Provider this way.
type Streamer interface {
	Provider
	ChatStream(ctx context.Context, req Request, onDelta func(string)) (Response, error)
}

// ModelInfo describes a model an endpoint serves. A zero limit means the
// provider did not say (OpenAI-compatible lists give only ids).
type ModelInfo struct {
	ID              string `json:"id"`
	DisplayName     string `json:"displayName,omitempty"`
	ContextLength   int    `json:"contextLength,omitempty"`
	MaxOutputTokens int    `json:"maxOutputTokens,omitempty"`
}

// ModelLister is a Provider that can list its endpoint's models: a cheap
// authenticated call for "test connection" and for checking that a
// configured model exists. Failures are *Error like Chat's.
type ModelLister interface {
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// Stream calls p.ChatStream when p streams, and otherwise Chat followed by
// one onDelta with the whole text, so callers need only one code path.
func Stream(ctx context.Context, p Provider, req Request, onDelta func(string)) (Response, error) {
	if s, ok := p.(Streamer); ok {
		return s.ChatStream(ctx, req, onDelta)
	}
	resp, err := p.Chat(ctx, req)
	if err == nil && resp.Content != "" && onDelta != nil {
		onDelta(resp.Content)
	}
	return resp, err
}

// FailureClass classifies provider failures, shared by retries, the
// circuit breaker and the fallback chain.
type FailureClass string

const (
	FailConnection    FailureClass = "connection"    // retryable, trips the circuit
	FailRateLimit     FailureClass = "rateLimit"     // 429: retryable, trips
	FailServerError   FailureClass = "serverError"   // 5xx: retryable, trips
	FailCircuitOpen   FailureClass = "circuitOpen"   // retryable elsewhere, does not trip
	FailAuth          FailureClass = "auth"          // 401/403
	FailConfiguration FailureClass = "configuration" // unknown model, bad endpoint
	FailClientError   FailureClass = "clientError"   // other 4xx
	FailUnknown       FailureClass = "unknown"
	// FailCanceled is the caller's own context ending: not the provider's
	// fault, so it neither trips the circuit nor moves the fallback on.
	FailCanceled FailureClass = "canceled"
)

// Retryable reports whether another attempt (or the fallback) may help.
func (c FailureClass) Retryable() bool {
	switch c {
	case FailConnection, FailRateLimit, FailServerError, FailCircuitOpen:
		return true
	}
	return false
}

// TripsCircuit reports whether the failure counts against the breaker.
func (c FailureClass) TripsCircuit() bool {
	return c == FailConnection || c == FailRateLimit || c == FailServerError
}

// Error is a classified provider failure. Message is safe to show: it
// never holds the API key or the request body.
type Error struct {
	Provider   string
	Class      FailureClass
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from a 429's Retry-After, 0 when none
	Message    string
	Attempts   int
	// Timeout marks a connection failure that was our own HTTP timeout;
	// it is not retried in place (the call already waited its full time).
	Timeout bool
	// Entry is the fallback entry that failed last, "" without a Fallback.
	Entry string
	// FellBack lists the fallback entries that failed before Entry.
	FellBack []EntryFailure
	// Cause is the underlying error, for errors.Is (context.Canceled, …).
	// Error() never prints it: SDK errors may quote URLs or bodies.
	Cause error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s (HTTP %d): %s", e.Provider, e.Class, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", e.Provider, e.Class, e.Message)
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }
