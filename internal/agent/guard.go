package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// screen runs text of a stage through the configuration's guardrails on
// its way to the provider. A redaction is recorded and the redacted text
// returned; deny and require_approval end the run.
func (r *run) screen(ctx context.Context, round int, stage guardrail.Stage, callID, text string) (string, *ending) {
	res := r.pipeline.Screen(ctx, guardrail.Subject{Stage: stage, Text: text})
	if e := r.verdict(round, stage, callID, res); e != nil {
		return "", e
	}
	return res.Text, nil
}

// stageOf is the guardrail stage of a message the loop sends.
func stageOf(m llm.Message) (guardrail.Stage, bool) {
	switch m.Role {
	case llm.RoleSystem:
		return guardrail.StageSystemPrompt, true
	case llm.RoleUser:
		return guardrail.StageInput, true
	case llm.RoleTool:
		return guardrail.StageToolResult, true
	}
	// The model's own turns were screened as output when they arrived.
	return "", false
}

// verdict records a screening that did more than allow and turns deny and
// require_approval into the run's end: neither can be resumed. Unknown
// verdicts count as deny.
func (r *run) verdict(round int, stage guardrail.Stage, callID string, res guardrail.Result) *ending {
	if res.Verdict == guardrail.Allow {
		return nil
	}
	r.rec.emit(EventGuardrail, round, 0, GuardrailPayload{
		Stage: stage, Guardrail: res.Guardrail, Verdict: res.Verdict, Reason: res.Reason, CallID: callID, Findings: res.Findings,
	})
	switch res.Verdict {
	case guardrail.Redact, guardrail.Retry:
		return nil
	case guardrail.RequireApproval:
		return &ending{outcome: OutcomeGuardrailApprovalRequired, status: store.RunFailed, term: TerminationApprovalDenied,
			class: "guardrail", public: guardrailSentence(res, stage, "requires a person's approval for")}
	}
	return &ending{outcome: OutcomeGuardrailBlocked, status: store.RunFailed, term: TerminationPolicyDenied,
		class: "guardrail", public: guardrailSentence(res, stage, "blocked")}
}

func guardrailSentence(res guardrail.Result, stage guardrail.Stage, did string) string {
	name := res.Guardrail
	if name == "" {
		name = "a guardrail"
	}
	out := fmt.Sprintf("The guardrail %s %s the %s", name, did, stageWords(stage))
	if res.Reason != "" {
		out += " (" + res.Reason + ")"
	}
	return out + "."
}

func stageWords(s guardrail.Stage) string {
	switch s {
	case guardrail.StageSystemPrompt:
		return "system prompt"
	case guardrail.StageToolResult:
		return "result of a tool"
	case guardrail.StageOutput:
		return "model's answer"
	}
	return "input"
}

// redacted is text fit for an event at privacy level full: redacted, or
// left out when the guardrails would not let it through.
func (r *run) redacted(ctx context.Context, stage guardrail.Stage, text string) string {
	if text == "" {
		return ""
	}
	res := r.pipeline.Screen(ctx, guardrail.Subject{Stage: stage, Text: text})
	if res.Verdict.Strength() > guardrail.Retry.Strength() {
		return ""
	}
	return res.Text
}

// redactArtifacts screens artifacts for an event at privacy level full as
// one JSON text; if the redaction breaks the JSON they are left out.
func (r *run) redactArtifacts(ctx context.Context, arts []tool.Artifact) []tool.Artifact {
	if len(arts) == 0 {
		return nil
	}
	b, err := json.Marshal(arts)
	if err != nil {
		return nil
	}
	var out []tool.Artifact
	if err := json.Unmarshal([]byte(r.redacted(ctx, guardrail.StageToolResult, string(b))), &out); err != nil {
		return nil
	}
	return out
}
