package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Round limits.
const (
	// DefaultMaxRounds is the round cap when neither the request nor the
	// configuration sets one.
	DefaultMaxRounds = 5
	// MaxRounds is the ceiling; larger requests are clamped to it.
	MaxRounds = 20
	// LeaseDuration is how long a run's lease lasts between steps.
	LeaseDuration = 15 * time.Minute
)

// Outcome is how a run stopped. Consumers must keep a default arm: the
// durable-runs work adds outcomes.
type Outcome string

const (
	OutcomeCompleted                 Outcome = "completed"
	OutcomeAwaitingApproval          Outcome = "awaiting_approval"
	OutcomeAwaitingInput             Outcome = "awaiting_input"
	OutcomeSuspendFailed             Outcome = "suspend_failed"
	OutcomeGuardrailBlocked          Outcome = "guardrail_blocked"
	OutcomeGuardrailApprovalRequired Outcome = "guardrail_approval_required"
	OutcomeFailed                    Outcome = "failed"
	OutcomeCancelled                 Outcome = "cancelled"
)

// Termination is why a run ended, stored in its own column.
type Termination string

const (
	TerminationCompleted        Termination = "completed"
	TerminationMaxIterations    Termination = "max_iterations"
	TerminationBudgetExhausted  Termination = "budget_exhausted"
	TerminationPolicyDenied     Termination = "policy_denied"
	TerminationApprovalDenied   Termination = "approval_denied"
	TerminationProviderFailed   Termination = "provider_failed"
	TerminationCancelled        Termination = "cancelled"
	TerminationContextTruncated Termination = "context_truncated"
)

// Caller names who started a run, for telemetry and the run row; it is
// never sent to the provider.
type Caller struct {
	Source    string // e.g. "cli", "chat", "api"
	Operation string // e.g. "run", "chatTurn"
}

// Request is one run.
type Request struct {
	// Config is the resolved configuration: its own entry, whose
	// prompt, sampling, tools, guardrails, rounds, privacy and budget
	// apply, and its fallback chain.
	Config *agentconfig.Resolved
	// Messages is the transcript: the caller's system message (if any),
	// then user and assistant turns. The run does not change it.
	Messages []llm.Message
	// Actor is the TYPO3 backend user the run and every tool call act as;
	// nil means no data.
	Actor  *typo3.BackendUser
	Caller Caller
	// Tools narrows the offered tools: nil asks for every enabled tool,
	// an empty slice for none. A request, never a grant.
	Tools []string
	// MaxRounds overrides the configuration's cap when > 0, clamped to
	// MaxRounds.
	MaxRounds int
	// OnEvent, when set, sees every event before it is persisted, on the
	// run's goroutine (a live view). It must be quick.
	OnEvent func(Event)
	// KeepAnswer keeps the run's Answer with its row when it completes,
	// whoever carries out its last segment, for a caller that follows
	// runs decided elsewhere (the chat). Other runs keep no content
	// beyond what their privacy level records.
	KeepAnswer bool
}

// Answer is what a completed run keeps for a caller that asked
// (Request.KeepAnswer): the final text and the text the model wrote
// beside its tool calls in the last segment.
type Answer struct {
	Content string   `json:"content"`
	Beside  []string `json:"beside,omitempty"`
}

// encodeAnswer is the stored form of an answer, within
// store.MaxRunAnswer: the beside texts go first, then the content is cut.
func encodeAnswer(a Answer) string {
	for {
		b, err := json.Marshal(a)
		if err != nil {
			return ""
		}
		if len(b) <= store.MaxRunAnswer {
			return string(b)
		}
		if len(a.Beside) > 0 {
			a.Beside = nil
			continue
		}
		a.Content = cutUTF8(a.Content, len(a.Content)-(len(b)-store.MaxRunAnswer)-16)
	}
}

// Result is how a run ended. Run never fails with a Go error: every
// outcome, failures included, is a Result.
type Result struct {
	Outcome Outcome
	// RunID is the run's row; "" only when the run could not be recorded
	// and therefore did not run.
	RunID string
	// Content is the final answer (completed runs).
	Content string
	// Rounds counts provider calls: one a round, plus the final call of
	// a truncated run (and a call a guardrail asked to repeat).
	Rounds    int
	ToolCalls int
	Usage     llm.Usage
	// Cost is the estimated cost; CostUnknown when a model without prices
	// answered.
	Cost        agentconfig.USD
	CostUnknown bool
	// Truncated reports that the round cap forced the final answer.
	Truncated   bool
	Termination Termination
	// Error is a public-safe sentence for runs that did not complete.
	Error string
	// Pending is the turn a waiting run waits on.
	Pending *Pending
	// Beside is the text the model wrote beside its tool calls in this
	// segment's rounds, in round order (blank texts left out). Content
	// holds only the last round's text; a chat shows these before it.
	Beside []string
}

// Pending is the suspended turn of a run waiting for approval or input.
type Pending struct {
	Calls []llm.ToolCall
	// Digest is the SHA-256 (hex) of the pending calls, which a decision
	// must quote back.
	Digest string
	// InputTool and InputSchema name the call that waits for input and
	// the schema of that input.
	InputTool   string
	InputSchema json.RawMessage
	// InputMessage and InputURL are set when the call itself asked, while
	// it ran (an MCP server's question): the question as the server put
	// it (remote text) and, in URL mode, the page the person opens.
	InputMessage string
	InputURL     string
	// Previews are what the tools that can preview say the calls would
	// do, made as the run's actor when the turn was suspended.
	Previews []CallPreview
}

// Store is what the runtime needs from the store: runs and their events.
type Store interface {
	store.Runs
}

// ProviderSource builds the llm.Provider of a chain entry; Providers is
// the implementation.
type ProviderSource interface {
	Provider(ctx context.Context, e agentconfig.Entry) (llm.Provider, error)
}

// ConfigSource resolves a configuration by identifier, live: a decision
// resumes a run with the configuration as it is now.
// *agentconfig.Service is the implementation.
type ConfigSource interface {
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
}

// UserSource finds a backend user who can act; *typo3.Site is the
// implementation. A resumed run executes as its owner, looked up afresh.
type UserSource interface {
	BackendUserByName(ctx context.Context, username string) (*typo3.BackendUser, error)
}

// Params configure New.
type Params struct {
	Gate  *gate.Gate // required
	Store Store      // required
	// Providers builds the provider of each chain entry; required.
	Providers ProviderSource
	// Telemetry records every provider call and checks the budgets
	// before it; required, so that no call goes unrecorded or unchecked.
	Telemetry *telemetry.Recorder
	// Keyring seals a suspended run's pending turn. Without one a run that
	// must wait for approval or input ends suspend_failed.
	Keyring *secret.Keyring
	// Now is the clock for durations and the event log; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// LeaseOwner names this process in the runs it executes; "" means
	// "interactive:<host>:<pid>". Resumed segments hold
	// "resume:<host>:<pid>:<segment>", workers "worker:…".
	LeaseOwner string
	// Configs and Users let decisions and workers rebuild a run; without
	// them Approve, SubmitInput and RunQueued refuse.
	Configs ConfigSource
	Users   UserSource
	// TracerProvider makes the spans of run segments, rounds and provider
	// calls; nil makes none. TraceContent puts prompts and completions on
	// the provider spans, redacted by the run's guardrails first.
	TracerProvider trace.TracerProvider
	TraceContent   bool
}

// Runtime runs agent turns. It is safe for concurrent use; each Run keeps
// its own state.
type Runtime struct {
	gate    *gate.Gate
	st      Store
	prov    ProviderSource
	keyring *secret.Keyring
	tel     *telemetry.Recorder
	now     func() time.Time
	log     *slog.Logger
	owner   string
	node    string // "<host>:<pid>" in lease owners
	configs ConfigSource
	users   UserSource
	spans   spans
}

// New returns a runtime.
func New(p Params) (*Runtime, error) {
	if p.Gate == nil || p.Store == nil || p.Providers == nil || p.Telemetry == nil {
		return nil, errors.New("agent: a gate, a store, providers and telemetry are required")
	}
	rt := &Runtime{gate: p.Gate, st: p.Store, prov: p.Providers, keyring: p.Keyring, tel: p.Telemetry, now: p.Now, log: p.Logger, owner: p.LeaseOwner,
		configs: p.Configs, users: p.Users, spans: newSpans(p.TracerProvider, p.TraceContent)}
	if rt.now == nil {
		rt.now = time.Now
	}
	if rt.log == nil {
		rt.log = slog.Default()
	}
	host, _ := os.Hostname()
	rt.node = fmt.Sprintf("%s:%d", host, os.Getpid())
	if rt.owner == "" {
		rt.owner = "interactive:" + rt.node
	}
	return rt, nil
}
