package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/t3agent/t3agent/internal/typo3"
)

// NamePattern is the wire-name rule every provider accepts.
var NamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Effect says what a tool does to the world.
type Effect string

const (
	ReadOnly           Effect = "read_only"
	IdempotentWrite    Effect = "idempotent_write"
	NonIdempotentWrite Effect = "non_idempotent_write"
)

// IsWrite reports whether the effect changes anything.
func (e Effect) IsWrite() bool { return e != ReadOnly }

// SafeToRetry reports whether running the call twice is harmless.
func (e Effect) SafeToRetry() bool { return e != NonIdempotentWrite }

// Valid reports whether e is one of the three effects.
func (e Effect) Valid() bool {
	return e == ReadOnly || e == IdempotentWrite || e == NonIdempotentWrite
}

// Builtin groups. MCP tools get "mcp_<server identifier>".
const (
	GroupContent       = "content"
	GroupStructure     = "structure"
	GroupConfiguration = "configuration"
	GroupSystem        = "system"
	GroupAccounts      = "accounts"
	GroupRAG           = "rag"
	GroupFiles         = "files"
	GroupCode          = "code"
)

// Spec declares a tool. It is fixed for the life of the tool.
type Spec struct {
	// Name is the wire name (NamePattern).
	Name string
	// Description is written for the model: what the tool returns, its
	// limits, and when to use it.
	Description string
	// InputSchema is a JSON Schema of type object.
	InputSchema json.RawMessage
	Group       string
	Effect      Effect
	DataClass   DataClass
	// AdminOnly tools are offered to TYPO3 admins only.
	AdminOnly bool
	// EnabledByDefault applies when no override exists.
	EnabledByDefault bool
	// RequiresApproval marks a call as approval-bound even when the
	// effect alone would not.
	RequiresApproval bool
	// InputRequest, when not nil, is the JSON Schema (object) of input a
	// person must give before the call runs.
	InputRequest json.RawMessage
	// Remote marks tools whose output comes from outside t3agent (MCP).
	// The trust-zone check is always enforced for them.
	Remote bool
}

// Validate checks a spec's declaration; the registry refuses bad specs.
func (s Spec) Validate() error {
	if !NamePattern.MatchString(s.Name) {
		return fmt.Errorf("tool name %q does not match %s", s.Name, NamePattern)
	}
	if s.Description == "" {
		return fmt.Errorf("tool %s has no description", s.Name)
	}
	if s.Group == "" {
		return fmt.Errorf("tool %s has no group", s.Name)
	}
	if !s.Effect.Valid() {
		return fmt.Errorf("tool %s has effect %q, not one of read_only, idempotent_write, non_idempotent_write", s.Name, s.Effect)
	}
	if !s.DataClass.Valid() {
		return fmt.Errorf("tool %s has no valid data class", s.Name)
	}
	var schema struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(s.InputSchema, &schema); err != nil || schema.Type != "object" {
		return fmt.Errorf("tool %s: the input schema must be a JSON object schema (type object)", s.Name)
	}
	if s.InputRequest != nil {
		if err := json.Unmarshal(s.InputRequest, &schema); err != nil || schema.Type != "object" {
			return fmt.Errorf("tool %s: the input request schema must be a JSON object schema", s.Name)
		}
		if s.RequiresApproval || s.Effect.IsWrite() {
			// The approval scan runs before the input scan, so a tool that
			// needs both would wait for approval forever.
			return fmt.Errorf("tool %s cannot both require input and be approval-bound", s.Name)
		}
	}
	return nil
}

// ApprovalBound reports whether a call of this tool needs a person's
// approval before it runs: an explicit marker, or a declared write.
func (s Spec) ApprovalBound() bool { return s.RequiresApproval || s.Effect.IsWrite() }

// Call is the context of one tool call.
type Call struct {
	// Actor is the TYPO3 backend user the call acts as. Tools authorise
	// against it only; a nil Actor means no data.
	Actor *typo3.BackendUser
	// RunID correlates the call with its agent run ("" outside runs).
	RunID string
	// CallID is the provider's id of this call.
	CallID string
	// Answer, when set, is a person's answer to the Question this call
	// returned before: the call goes on from where it asked.
	Answer *Answer
}

// Question is what a running tool asks a person before it can finish
// (an MCP server's elicitation or input_required result). A Result that
// carries one is an error result for every caller that does not suspend:
// its Content says a person must answer.
type Question struct {
	// Message is the question, as the server put it (remote text).
	Message string `json:"message"`
	// Schema is the JSON Schema (type object) of the answer in form mode.
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL, in URL mode, is the page the person opens instead of a form;
	// the answer then only says whether they did.
	URL string `json:"url,omitempty"`
	// State is the tool's own continuation, opaque to everyone else; it
	// is kept sealed with the waiting run and handed back in Answer.
	State json.RawMessage `json:"state,omitempty"`
}

// Answer actions.
const (
	AnswerAccept  = "accept"
	AnswerDecline = "decline"
	AnswerCancel  = "cancel"
)

// Answer is a person's answer to a Question.
type Answer struct {
	// Action is AnswerAccept, AnswerDecline or AnswerCancel.
	Action string
	// Content is the accepted form's values (nil otherwise).
	Content map[string]any
	// State is Question.State, handed back.
	State json.RawMessage
}

// Tool is a callable tool. Implementations must be safe for concurrent use.
//
// Execute has two error channels, like MCP: a Result with IsError set is an
// answer the model reads ("no such page", "not permitted"); a Go error
// means the runtime is broken (database down) and becomes a generic error
// result, with the cause only in the log.
//
// args is the decoded JSON object, already validated against
// Spec.InputSchema: strings, bools, nil, []any, map[string]any, and
// numbers as json.Number, so that large integers such as uids keep their
// precision (use Int64 or Float64 on them). Execute runs under a deadline
// and must return when ctx is done.
type Tool interface {
	Spec() Spec
	Execute(ctx context.Context, call Call, args map[string]any) (Result, error)
}

// Result is what a tool returns. Only Content reaches the provider;
// artifacts go to the run's events and the UI.
type Result struct {
	Content   string     `json:"content"`
	IsError   bool       `json:"isError"`
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// Question, when set, stops the call until a person answers it; the
	// call is then made again with Call.Answer.
	Question *Question `json:"-"`
}

// Text returns a successful result.
func Text(content string, artifacts ...Artifact) Result {
	return Result{Content: content, Artifacts: artifacts}
}

// Errorf returns an error result the model reads.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Artifact kinds.
const (
	ArtifactTable = "table"
	ArtifactText  = "text"
)

// Artifact is structured output for people, never sent to the model.
type Artifact struct {
	Kind    string     `json:"kind"`
	Title   string     `json:"title,omitempty"`
	Columns []string   `json:"columns,omitempty"`
	Rows    [][]string `json:"rows,omitempty"`
	Text    string     `json:"text,omitempty"`
}
