package guardrail

import (
	"context"
	"fmt"
	"slices"

	"github.com/t3agent/t3agent/internal/llm"
)

// Pipeline is the guardrails of one configuration, in a fixed order: the
// mandatory ones, then the enabled optional ones, then any extras. The
// loop builds one per run and screens every text through it. A Pipeline
// is immutable and safe for concurrent use.
type Pipeline struct {
	guardrails []Guardrail
}

// PipelineParams configure NewPipeline.
type PipelineParams struct {
	// Enabled names the optional built-in guardrails to apply (a
	// configuration's guardrails list). Mandatory ones may be listed and
	// apply either way; unknown names are refused.
	Enabled []string
	// Extra guardrails run after the built-ins, in order.
	Extra []Guardrail
}

// NewPipeline returns the pipeline of p.
func NewPipeline(p PipelineParams) (*Pipeline, error) {
	for _, id := range p.Enabled {
		if !Known(id) {
			return nil, fmt.Errorf("guardrail %q is unknown (known: %v)", id, Identifiers())
		}
	}
	pl := &Pipeline{}
	for _, id := range Identifiers() {
		g, _ := builtin(id)
		if g.Mandatory() || slices.Contains(p.Enabled, id) {
			pl.guardrails = append(pl.guardrails, g)
		}
	}
	for _, g := range p.Extra {
		if g == nil {
			return nil, fmt.Errorf("an extra guardrail is nil")
		}
		if slices.ContainsFunc(pl.guardrails, func(o Guardrail) bool { return o.Identifier() == g.Identifier() }) {
			return nil, fmt.Errorf("guardrail %q is in the pipeline twice", g.Identifier())
		}
		pl.guardrails = append(pl.guardrails, g)
	}
	return pl, nil
}

// Identifiers lists the pipeline's guardrails in the order they run.
func (p *Pipeline) Identifiers() []string {
	out := make([]string, len(p.guardrails))
	for i, g := range p.guardrails {
		out[i] = g.Identifier()
	}
	return out
}

// Screen runs every guardrail over the subject, each on the text the one
// before left, and returns the final text with the strongest verdict (the
// first guardrail to give it names it) and every finding. It stops at the
// first Deny. Before the output stage a Retry means nothing (there is no
// call to repeat) and counts as Allow.
func (p *Pipeline) Screen(ctx context.Context, s Subject) Result {
	out := Result{Verdict: Allow, Text: s.Text}
	for _, g := range p.guardrails {
		r := g.Screen(ctx, Subject{Stage: s.Stage, Text: out.Text, FinishReason: s.FinishReason})
		if r.Verdict == Retry && s.Stage != StageOutput {
			r.Verdict = Allow
		}
		out.Text = r.Text
		out.Findings = append(out.Findings, r.Findings...)
		if r.Verdict.Strength() > out.Verdict.Strength() {
			out.Verdict, out.Guardrail, out.Reason = r.Verdict, g.Identifier(), r.Reason
		}
		if out.Verdict == Deny {
			break
		}
	}
	return out
}

// ScreenInput screens a user's message.
func (p *Pipeline) ScreenInput(ctx context.Context, text string) Result {
	return p.Screen(ctx, Subject{Stage: StageInput, Text: text})
}

// ScreenSystemPrompt screens the assembled system prompt.
func (p *Pipeline) ScreenSystemPrompt(ctx context.Context, text string) Result {
	return p.Screen(ctx, Subject{Stage: StageSystemPrompt, Text: text})
}

// ScreenToolResult screens a tool's content before it reaches the provider.
func (p *Pipeline) ScreenToolResult(ctx context.Context, text string) Result {
	return p.Screen(ctx, Subject{Stage: StageToolResult, Text: text})
}

// ScreenOutput screens the model's answer with the finish reason it came with.
func (p *Pipeline) ScreenOutput(ctx context.Context, text string, finish llm.FinishReason) Result {
	return p.Screen(ctx, Subject{Stage: StageOutput, Text: text, FinishReason: finish})
}

// ScreenMessages screens what a transcript sends to the provider: system
// messages as the system prompt, user messages as input, tool messages as
// tool results. Assistant messages were screened as output when they
// arrived and pass unchanged. It returns a new slice (msgs is not
// modified) and the combined result, whose Text is empty. On Deny it
// stops and the returned messages must not be sent.
func (p *Pipeline) ScreenMessages(ctx context.Context, msgs []llm.Message) ([]llm.Message, Result) {
	out := slices.Clone(msgs)
	total := Result{Verdict: Allow}
	for i, m := range out {
		var stage Stage
		switch m.Role {
		case llm.RoleSystem:
			stage = StageSystemPrompt
		case llm.RoleUser:
			stage = StageInput
		case llm.RoleTool:
			stage = StageToolResult
		default:
			continue
		}
		r := p.Screen(ctx, Subject{Stage: stage, Text: m.Content})
		out[i].Content = r.Text
		total.Findings = append(total.Findings, r.Findings...)
		if r.Verdict.Strength() > total.Verdict.Strength() {
			total.Verdict, total.Guardrail, total.Reason = r.Verdict, r.Guardrail, r.Reason
		}
		if total.Verdict == Deny {
			break
		}
	}
	return out, total
}
