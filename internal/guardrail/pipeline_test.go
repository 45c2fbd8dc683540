package guardrail_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
)

// fixed is an extra guardrail that gives one verdict when the text
// contains a trigger word; it stands for an operator's own guardrail.
type fixed struct {
	id      string
	trigger string
	verdict guardrail.Verdict
}

func (f fixed) Identifier() string { return f.id }
func (f fixed) Mandatory() bool    { return false }
func (f fixed) Screen(_ context.Context, s guardrail.Subject) guardrail.Result {
	if f.trigger != "" && strings.Contains(s.Text, f.trigger) {
		return guardrail.Result{Verdict: f.verdict, Text: s.Text, Guardrail: f.id, Reason: f.id + "_hit"}
	}
	return guardrail.Result{Verdict: guardrail.Allow, Text: s.Text}
}

func pipeline(t *testing.T, p guardrail.PipelineParams) *guardrail.Pipeline {
	t.Helper()
	pl, err := guardrail.NewPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestPipelineComposition(t *testing.T) {
	t.Parallel()
	if got := pipeline(t, guardrail.PipelineParams{}).Identifiers(); !slices.Equal(got, []string{guardrail.SecretRedaction}) {
		t.Errorf("an empty configuration runs %q, want only the mandatory secret-redaction", got)
	}
	all := pipeline(t, guardrail.PipelineParams{
		Enabled: []string{guardrail.ProviderContentFilter, guardrail.PIIRedaction, guardrail.SecretRedaction},
		Extra:   []guardrail.Guardrail{fixed{id: "custom"}},
	})
	want := []string{guardrail.SecretRedaction, guardrail.PIIRedaction, guardrail.ProviderContentFilter, "custom"}
	if got := all.Identifiers(); !slices.Equal(got, want) {
		t.Errorf("order = %q, want %q", got, want)
	}
	for _, bad := range []guardrail.PipelineParams{
		{Enabled: []string{"profanity"}},
		{Extra: []guardrail.Guardrail{fixed{id: guardrail.SecretRedaction}}},
		{Extra: []guardrail.Guardrail{nil}},
	} {
		if _, err := guardrail.NewPipeline(bad); err == nil {
			t.Errorf("NewPipeline(%+v) succeeded", bad)
		}
	}
	if !guardrail.Known(guardrail.PIIRedaction) || guardrail.Known("pii") {
		t.Error("Known is wrong")
	}
	for _, id := range guardrail.Identifiers() {
		g, ok := guardrail.New(id)
		if !ok || g.Identifier() != id || g.Mandatory() != (id == guardrail.SecretRedaction) {
			t.Errorf("New(%s) = %v, %v", id, g, ok)
		}
	}
}

// TestPipelineMatrix: stage × enabled guardrails × content → verdict and text.
func TestPipelineMatrix(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	key := "sk-" + "ant-api03-" + "Zq7vX2mN9pL4kR8sT1wY6uE3oI5aD0fG-hJ2"
	mail := "anna@example.org"
	cases := []struct {
		name    string
		enabled []string
		stage   guardrail.Stage
		text    string
		finish  llm.FinishReason
		verdict guardrail.Verdict
		by      string
		gone    []string
		kept    []string
	}{
		{"clean input", nil, guardrail.StageInput, "What is on page 5?", "", guardrail.Allow, "", nil, []string{"page 5"}},
		{"key in input", nil, guardrail.StageInput, "my key " + key, "", guardrail.Redact, guardrail.SecretRedaction, []string{key}, []string{"my key"}},
		{"key in system prompt", nil, guardrail.StageSystemPrompt, "Use " + key, "", guardrail.Redact, guardrail.SecretRedaction, []string{key}, nil},
		{"key in tool result", nil, guardrail.StageToolResult, `{"bodytext":"` + key + `"}`, "", guardrail.Redact, guardrail.SecretRedaction, []string{key}, []string{"bodytext"}},
		{"key in output", nil, guardrail.StageOutput, "here: " + key, llm.FinishStop, guardrail.Redact, guardrail.SecretRedaction, []string{key}, nil},
		{"mail without pii", nil, guardrail.StageToolResult, "mail " + mail, "", guardrail.Allow, "", nil, []string{mail}},
		{"mail with pii", []string{guardrail.PIIRedaction}, guardrail.StageToolResult, "mail " + mail, "", guardrail.Redact, guardrail.PIIRedaction, []string{mail}, []string{"mail "}},
		{"key and mail with pii", []string{guardrail.PIIRedaction}, guardrail.StageOutput, key + " " + mail, llm.FinishStop, guardrail.Redact, guardrail.SecretRedaction, []string{key, mail}, nil},
		{"content filter off", nil, guardrail.StageOutput, "partial", llm.FinishContentFilter, guardrail.Allow, "", nil, []string{"partial"}},
		{"content filter on", []string{guardrail.ProviderContentFilter}, guardrail.StageOutput, "partial " + key, llm.FinishContentFilter, guardrail.Deny, guardrail.ProviderContentFilter, []string{key}, nil},
		{"content filter ignores input", []string{guardrail.ProviderContentFilter}, guardrail.StageInput, "x", llm.FinishContentFilter, guardrail.Allow, "", nil, nil},
		{"content filter on a normal stop", []string{guardrail.ProviderContentFilter}, guardrail.StageOutput, "fine", llm.FinishStop, guardrail.Allow, "", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := pipeline(t, guardrail.PipelineParams{Enabled: c.enabled}).Screen(ctx, guardrail.Subject{Stage: c.stage, Text: c.text, FinishReason: c.finish})
			if r.Verdict != c.verdict || r.Guardrail != c.by {
				t.Errorf("verdict %s by %q, want %s by %q", r.Verdict, r.Guardrail, c.verdict, c.by)
			}
			for _, g := range c.gone {
				if strings.Contains(r.Text, g) {
					t.Errorf("text %q still holds %q", r.Text, g)
				}
			}
			for _, k := range c.kept {
				if !strings.Contains(r.Text, k) {
					t.Errorf("text %q lost %q", r.Text, k)
				}
			}
		})
	}
}

func TestPipelineStrongestVerdictWins(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := pipeline(t, guardrail.PipelineParams{Extra: []guardrail.Guardrail{
		fixed{id: "retry_on_r", trigger: "#retry", verdict: guardrail.Retry},
		fixed{id: "approve_on_a", trigger: "#approve", verdict: guardrail.RequireApproval},
		fixed{id: "deny_on_d", trigger: "#deny", verdict: guardrail.Deny},
		fixed{id: "never_reached", trigger: "#deny", verdict: guardrail.RequireApproval},
	}})
	for _, c := range []struct {
		text  string
		stage guardrail.Stage
		want  guardrail.Verdict
		by    string
	}{
		{"#retry", guardrail.StageOutput, guardrail.Retry, "retry_on_r"},
		{"#retry", guardrail.StageInput, guardrail.Allow, ""}, // nothing to retry before a call
		{"#retry #approve", guardrail.StageOutput, guardrail.RequireApproval, "approve_on_a"},
		{"#approve #retry #deny", guardrail.StageOutput, guardrail.Deny, "deny_on_d"},
		{"ghp_" + strings.Repeat("a1", 18) + " #approve", guardrail.StageInput, guardrail.RequireApproval, "approve_on_a"},
	} {
		r := p.Screen(ctx, guardrail.Subject{Stage: c.stage, Text: c.text})
		if r.Verdict != c.want || r.Guardrail != c.by {
			t.Errorf("%q at %s: %s by %q, want %s by %q", c.text, c.stage, r.Verdict, r.Guardrail, c.want, c.by)
		}
	}
	// Findings of every guardrail are kept even when another decides.
	r := p.ScreenInput(ctx, "ghp_"+strings.Repeat("a1", 18)+" #approve")
	if len(r.Findings) != 1 || r.Findings[0].Guardrail != guardrail.SecretRedaction || strings.Contains(r.Text, "ghp_") {
		t.Errorf("findings = %+v, text %q", r.Findings, r.Text)
	}
	if guardrail.Verdict("bogus").Strength() != guardrail.Deny.Strength() {
		t.Error("an unknown verdict does not rank as deny")
	}
}

func TestScreenMessages(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	key := "AKIA" + "IOSFODNN7EXAMPLE"
	in := []llm.Message{
		{Role: llm.RoleSystem, Content: "system " + key},
		{Role: llm.RoleUser, Content: "user anna@example.org " + key},
		{Role: llm.RoleAssistant, Content: "assistant " + key, ToolCalls: []llm.ToolCall{{ID: "1", Name: "t", Arguments: `{"k":"` + key + `"}`}}},
		{Role: llm.RoleTool, ToolCallID: "1", Content: "tool " + key},
	}
	orig := slices.Clone(in)
	out, r := pipeline(t, guardrail.PipelineParams{Enabled: []string{guardrail.PIIRedaction}}).ScreenMessages(ctx, in)
	if !slices.EqualFunc(in, orig, func(a, b llm.Message) bool { return a.Content == b.Content }) {
		t.Error("ScreenMessages modified its input")
	}
	if r.Verdict != guardrail.Redact || r.Text != "" {
		t.Errorf("result = %+v", r)
	}
	for i, want := range []string{"system [REDACTED:aws_access_key]", "user [REDACTED:email] [REDACTED:aws_access_key]",
		"assistant " + key, "tool [REDACTED:aws_access_key]"} {
		if out[i].Content != want {
			t.Errorf("message %d = %q, want %q", i, out[i].Content, want)
		}
	}
	if out[2].ToolCalls[0].Arguments != in[2].ToolCalls[0].Arguments || out[3].ToolCallID != "1" {
		t.Error("ScreenMessages changed more than content")
	}
	// A deny stops the screening.
	deny := pipeline(t, guardrail.PipelineParams{Extra: []guardrail.Guardrail{fixed{id: "stop", trigger: "user", verdict: guardrail.Deny}}})
	_, r = deny.ScreenMessages(ctx, in)
	if r.Verdict != guardrail.Deny || r.Guardrail != "stop" {
		t.Errorf("deny = %+v", r)
	}
}

func TestScreenOutputContentFilter(t *testing.T) {
	t.Parallel()
	p := pipeline(t, guardrail.PipelineParams{Enabled: []string{guardrail.ProviderContentFilter}})
	r := p.ScreenOutput(t.Context(), "", llm.FinishContentFilter)
	if r.Verdict != guardrail.Deny || r.Reason != "content_filter" || len(r.Findings) != 1 {
		t.Errorf("content filter = %+v", r)
	}
	if r := p.ScreenToolResult(t.Context(), "x"); r.Verdict != guardrail.Allow || r.Text != "x" {
		t.Errorf("tool result = %+v", r)
	}
	if r := p.ScreenSystemPrompt(t.Context(), "x"); r.Verdict != guardrail.Allow {
		t.Errorf("system prompt = %+v", r)
	}
}
