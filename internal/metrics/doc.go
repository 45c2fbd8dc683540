// Package metrics is what t3agent tells Prometheus beyond HTTP: what an
// operator alerts on. It has two halves, both prometheus.Collectors that
// the web server registers on its own registry (there is no package-level
// registry and no global state):
//
// Events counts what happens in this process, as it happens: provider
// calls with their tokens, cost and latency (fed by telemetry's OnCall,
// so every call the ledger sees), tool calls with their latency and
// outcome (the gate's OnCallFinished, so the loop, the playground and the
// MCP facade alike), and the gate's denials by reason (OnDenied). Each
// process that serves /metrics reports its own; Prometheus sums them. The
// hooks are methods on a *Events and do nothing on a nil one.
//
// Store reads, at scrape time, what is true of the whole database,
// whichever process wrote it: runs by status, finished runs by outcome
// and termination, the queue's depth and the age of its oldest ready run,
// conversations by status, and each MCP server's health from the
// catalogue. Its queries are aggregates on indexed columns, bounded by a
// timeout; the finished runs by outcome, whose count reads every finished
// run, are counted again at most once a minute (FinishedEvery). When the
// store does not answer, t3agent_store_up is 0 and the store's series are
// left out of that scrape rather than reported stale.
//
// The worker commands, which serve no web UI, expose their own Events on
// --metrics-listen.
//
// # Labels
//
// Every label has a bounded set of values: statuses, outcomes, reasons
// and failure classes are closed vocabularies (anything else is counted
// as "other"); providers, models and MCP servers are the operator's
// records; a tool is a registered tool's name, and a name the registry
// does not hold (a model may call anything) is "other". No run id, user
// name or conversation is ever a label.
package metrics
