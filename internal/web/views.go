package web

import (
	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// The API's JSON shapes for the other front end: `t3agent … --json`
// prints the objects /api/v1 answers with, field for field, so a script
// reads both alike. Each value marshals to the shape its route documents
// in openapi.json.

// RunView is a run as GET /api/v1/runs lists it.
func RunView(r store.Run) any { return runOf(r) }

// InboxItemView is a waiting run with its pending turn, as GET
// /api/v1/inbox lists it.
func InboxItemView(it agent.InboxItem) any { return inboxItemOf(it) }

// ResultView is what a run or a decision led to, as the decision routes
// answer.
func ResultView(res agent.Result) any { return resultOf(res) }

// EventView is one event of a run's timeline, as GET
// /api/v1/runs/{id}/events lists it.
func EventView(e store.RunEvent) any { return eventOf(e) }

// ToolView is a tool with the gate's decision, as GET
// /api/v1/tools/{name} shows it (with its input schema); spec is nil for
// a tool that is not registered.
func ToolView(d gate.Decision, spec *tool.Spec) any { return toolView(d, spec, true) }
