package mcp

import (
	"context"
	"sync/atomic"
)

// CallsPerSegment is the remote-call budget of one run segment (SPEC §3).
const CallsPerSegment = 20

// CallBudget counts the remote calls one run segment may still make.
// The agent loop makes one per segment (each entry: start, resume) and
// passes it down in the context with WithCallBudget; every MCP tool call
// takes one unit after the gate admitted it and before the server is
// asked. A call without a budget in its context is refused, so a caller
// that forgets it fails closed.
//
// A CallBudget is safe for concurrent use.
type CallBudget struct{ left atomic.Int64 }

// NewCallBudget returns a budget of n calls (n < 0 counts as 0).
func NewCallBudget(n int) *CallBudget {
	b := &CallBudget{}
	b.left.Store(int64(max(n, 0)))
	return b
}

// Remaining is how many calls are left.
func (b *CallBudget) Remaining() int { return int(max(b.left.Load(), 0)) }

// take spends one call; false when none is left.
func (b *CallBudget) take() bool { return b.left.Add(-1) >= 0 }

type budgetKey struct{}

// WithCallBudget returns ctx carrying b for the MCP tool calls made under it.
func WithCallBudget(ctx context.Context, b *CallBudget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// CallBudgetFrom returns the budget ctx carries, if any.
func CallBudgetFrom(ctx context.Context) (*CallBudget, bool) {
	b, ok := ctx.Value(budgetKey{}).(*CallBudget)
	return b, ok && b != nil
}
