// Package playground calls one tool by hand, through the gate, as a
// logged-in person: the console's tool playground and the API's
// POST /api/v1/tools/{name}/call share it, as the CLI's `tools call`
// does the same through the gate.
//
// A playground call is not a model's call: no run holds it, so a write
// runs at once without the approval a run's call waits for. It is
// therefore refused unless the caller confirmed it (Params.ConfirmWrite),
// and the callers let only TYPO3 admins make one.
package playground

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// ErrConfirmWrite refuses an unconfirmed call of a tool that writes or
// needs approval.
var ErrConfirmWrite = errors.New("playground: this tool writes or needs approval, and a playground call runs at once; confirm the write to call it")

// NeedsConfirmation reports whether calling the tool by hand must be
// confirmed: it writes, or a run's call of it waits for approval.
func NeedsConfirmation(spec tool.Spec) bool { return spec.RequiresApproval || spec.Effect.IsWrite() }

// Params are the parameters of Call.
type Params struct {
	Name string
	// Args are the arguments as a JSON object; empty means {}.
	Args  json.RawMessage
	Actor *typo3.BackendUser
	// Config is the configuration the gate decides for (its groups and
	// zone); nil is the strictest (externalGlobal).
	Config gate.Configuration
	// Source names the caller in the call's id ("console", "api").
	Source string
	// ConfirmWrite confirms a call NeedsConfirmation asks for.
	ConfirmWrite bool
}

// Outcome is what a call did.
type Outcome struct {
	// Decision is the gate's decision for the caller before the call.
	Decision gate.Decision `json:"decision"`
	Result   tool.Result   `json:"result"`
	Duration time.Duration `json:"durationNs"`
}

// Call calls the tool through gate.Invoke as p.Actor: the gate decides
// (a denial is a governance event and a neutral error result),
// validates the arguments against the schema and bounds the result. One
// call may ask one remote server once.
func Call(ctx context.Context, g *gate.Gate, p Params) (Outcome, error) {
	// A name the registry does not hold goes to the gate all the same,
	// which denies it neutrally and records the denial.
	if e, ok := g.Registry().Get(ctx, p.Name); ok && NeedsConfirmation(e.Spec) && !p.ConfirmWrite {
		return Outcome{}, ErrConfirmWrite
	}
	ds, err := g.Explain(ctx, gate.ExplainParams{Actor: p.Actor, Config: p.Config})
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Decision: gate.Decision{Tool: p.Name, Reason: gate.ReasonNotRegistered}}
	if i := slices.IndexFunc(ds, func(d gate.Decision) bool { return d.Tool == p.Name }); i >= 0 {
		out.Decision = ds[i]
	}
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(1))
	start := time.Now()
	out.Result = g.Invoke(ctx, gate.InvokeParams{
		Name: p.Name, Args: p.Args, Call: tool.Call{Actor: p.Actor, CallID: p.Source}, Config: p.Config,
	})
	out.Duration = time.Since(start)
	return out, nil
}
