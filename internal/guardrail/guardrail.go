package guardrail

import (
	"context"
	"slices"

	"github.com/t3agent/t3agent/internal/llm"
)

// Verdict is a guardrail's decision, ordered from weakest to strongest;
// a pipeline reports the strongest verdict of its guardrails.
type Verdict string

const (
	// Allow: the text passes unchanged.
	Allow Verdict = "allow"
	// Redact: the text passes with parts replaced.
	Redact Verdict = "redact"
	// Retry: the provider call should be made once more (output only).
	Retry Verdict = "retry"
	// RequireApproval: a person must approve before the text is used;
	// in a run this ends it guardrail_approval_required.
	RequireApproval Verdict = "require_approval"
	// Deny: the text must not be used; in a run this ends it
	// guardrail_blocked.
	Deny Verdict = "deny"
)

var verdictOrder = []Verdict{Allow, Redact, Retry, RequireApproval, Deny}

// Strength ranks a verdict, 0 for Allow up to 4 for Deny; unknown verdicts
// rank as Deny, so a typo fails closed.
func (v Verdict) Strength() int {
	if i := slices.Index(verdictOrder, v); i >= 0 {
		return i
	}
	return len(verdictOrder) - 1
}

// Stage is where in a run a text is screened.
type Stage string

const (
	StageInput        Stage = "input"         // a user's message
	StageSystemPrompt Stage = "system_prompt" // the assembled system prompt
	StageToolResult   Stage = "tool_result"   // a tool's content, before the provider sees it
	StageOutput       Stage = "output"        // the model's answer
)

// Subject is what a guardrail screens.
type Subject struct {
	Stage Stage
	Text  string
	// FinishReason is the provider's, on StageOutput only.
	FinishReason llm.FinishReason
}

// Finding counts what a guardrail found of one kind. It never holds the
// text it found.
type Finding struct {
	Guardrail string `json:"guardrail"`
	Kind      string `json:"kind"` // e.g. "openai_key", "email", "content_filter"
	Count     int    `json:"count"`
}

// Result is a guardrail's (or a pipeline's) answer.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Text is the subject's text, rewritten when the verdict is Redact.
	// After Deny or RequireApproval it must not be sent or shown.
	Text string `json:"-"`
	// Guardrail is the identifier that gave the verdict ("" for Allow).
	Guardrail string `json:"guardrail,omitempty"`
	// Reason is a short code for the verdict, never the matched text.
	Reason   string    `json:"reason,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
}

// Guardrail screens text. Implementations must be safe for concurrent
// use, must not keep what they screen, and must return the subject's text
// (rewritten or not) in Result.Text.
type Guardrail interface {
	// Identifier is a stable slug, shared by every stage.
	Identifier() string
	// Mandatory guardrails apply to every configuration.
	Mandatory() bool
	Screen(ctx context.Context, s Subject) Result
}

// The built-in guardrails.
const (
	// SecretRedaction replaces credentials (vendor API keys, bearer
	// tokens, URL passwords, credential parameters, private keys, JWTs,
	// password assignments) with a marker. Mandatory.
	SecretRedaction = "secret-redaction"
	// PIIRedaction replaces e-mail addresses, phone numbers, IBANs (mod-97
	// checked) and card numbers (Luhn checked). Optional.
	PIIRedaction = "pii-redaction"
	// ProviderContentFilter denies an answer the provider stopped with
	// finish reason content_filter. Optional.
	ProviderContentFilter = "provider-content-filter"
)

// Identifiers lists the built-in guardrails, mandatory first.
func Identifiers() []string {
	return []string{SecretRedaction, PIIRedaction, ProviderContentFilter}
}

// Known reports whether id names a built-in guardrail, for validating a
// configuration's list.
func Known(id string) bool { return slices.Contains(Identifiers(), id) }

// builtin returns the built-in guardrail id.
func builtin(id string) (Guardrail, bool) {
	switch id {
	case SecretRedaction:
		return secretRedaction{}, true
	case PIIRedaction:
		return piiRedaction{}, true
	case ProviderContentFilter:
		return contentFilter{}, true
	}
	return nil, false
}

// New returns the built-in guardrail id, for callers that screen outside
// a pipeline.
func New(id string) (Guardrail, bool) { return builtin(id) }

type secretRedaction struct{}

func (secretRedaction) Identifier() string { return SecretRedaction }
func (secretRedaction) Mandatory() bool    { return true }
func (secretRedaction) Screen(_ context.Context, s Subject) Result {
	return redactResult(SecretRedaction, s.Text, RedactSecrets)
}

type piiRedaction struct{}

func (piiRedaction) Identifier() string { return PIIRedaction }
func (piiRedaction) Mandatory() bool    { return false }
func (piiRedaction) Screen(_ context.Context, s Subject) Result {
	return redactResult(PIIRedaction, s.Text, RedactPII)
}

func redactResult(id, text string, redact func(string) (string, []Finding)) Result {
	out, findings := redact(text)
	if len(findings) == 0 {
		return Result{Verdict: Allow, Text: text}
	}
	for i := range findings {
		findings[i].Guardrail = id
	}
	return Result{Verdict: Redact, Text: out, Guardrail: id, Reason: "redacted", Findings: findings}
}

type contentFilter struct{}

func (contentFilter) Identifier() string { return ProviderContentFilter }
func (contentFilter) Mandatory() bool    { return false }
func (contentFilter) Screen(_ context.Context, s Subject) Result {
	if s.Stage == StageOutput && s.FinishReason == llm.FinishContentFilter {
		return Result{
			Verdict: Deny, Text: s.Text, Guardrail: ProviderContentFilter, Reason: "content_filter",
			Findings: []Finding{{Guardrail: ProviderContentFilter, Kind: "content_filter", Count: 1}},
		}
	}
	return Result{Verdict: Allow, Text: s.Text}
}
