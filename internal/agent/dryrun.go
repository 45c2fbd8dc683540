package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
)

// DryRun is what a run of a request would send in its first round,
// without starting it: the chain entry that would answer, the tools the
// gate would offer the actor and the assembled transcript.
type DryRun struct {
	Configuration string `json:"configuration"`
	Model         string `json:"model"`
	Provider      string `json:"provider"`
	// Fallbacks are the configurations tried after it, in order.
	Fallbacks []string `json:"fallbacks"`
	MaxRounds int      `json:"maxRounds"`
	// Tools are offered (the gate allows them for the actor through the
	// configuration's groups and zone); Denied are the tools asked for by
	// name that the gate would not offer, with the reason.
	Tools  []DryRunTool `json:"tools"`
	Denied []DryRunTool `json:"denied,omitempty"`
	// Messages are the transcript as assembled, before the input
	// guardrails screen it.
	Messages []llm.Message `json:"messages"`
}

// DryRunTool is one tool of a dry run.
type DryRunTool struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Group       string      `json:"group,omitempty"`
	Reason      gate.Reason `json:"reason,omitempty"`
}

// DryRun answers what req would offer and send, calling no provider and
// recording nothing: no run row, no events, no governance events (the
// gate's readout decides the tools).
func (rt *Runtime) DryRun(ctx context.Context, req Request) (DryRun, error) {
	if req.Config == nil {
		return DryRun{}, errors.New("agent: a dry run needs a configuration")
	}
	cfg := req.Config
	out := DryRun{
		Configuration: cfg.Configuration.Identifier, Model: cfg.Model.Identifier, Provider: cfg.Provider.Identifier,
		Fallbacks: []string{}, Tools: []DryRunTool{},
		Messages: joinSystem(cfg.Configuration.SystemPrompt, req.Messages),
	}
	for _, f := range cfg.Fallbacks {
		out.Fallbacks = append(out.Fallbacks, f.Configuration.Identifier)
	}
	r := run{req: req, conf: cfg.Configuration}
	out.MaxRounds = r.maxRounds()
	ds, err := rt.gate.Explain(ctx, gate.ExplainParams{Actor: req.Actor, Config: cfg})
	if err != nil {
		return DryRun{}, fmt.Errorf("agent: dry run: %w", err)
	}
	reg := rt.gate.Registry()
	for _, d := range ds {
		asked := req.Tools == nil || slices.Contains(req.Tools, d.Tool)
		if !asked {
			continue
		}
		t := DryRunTool{Name: d.Tool}
		if e, ok := reg.Get(ctx, d.Tool); ok {
			t.Description, t.Group = e.Spec.Description, e.Spec.Group
		}
		switch {
		case d.Allowed:
			out.Tools = append(out.Tools, t)
		case req.Tools != nil:
			t.Reason = d.Reason
			out.Denied = append(out.Denied, t)
		}
	}
	return out, nil
}
