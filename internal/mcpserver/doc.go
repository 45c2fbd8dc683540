// Package mcpserver is t3agent's MCP facade: the gated tool registry
// served to MCP hosts (Claude Code, Cursor, VS Code, Claude Desktop) at
// /mcp over Streamable HTTP with the official Go SDK's server.
//
// # Endpoints
//
// /mcp offers every enabled tool the gate allows the caller, at the
// strictest trust zone (externalGlobal); /mcp/{configuration} offers what
// that agent configuration allows: its tool groups, its trust zone (the
// least trusted along its fallback chain) and its approval rules. The
// server is stateless, so it serves protocol 2026-07-28 (server/discover,
// input_required) and, through the SDK, the earlier revisions.
//
// # Tools
//
// tools/list is exactly the gate's offer (gate.Offer) for the caller on
// the endpoint's configuration, sorted by name, plus t3agent_run_status
// and t3agent_run_result. tools/call goes through gate.Invoke as the
// caller; the result is redacted (guardrail.RedactSecrets) and bounded as
// every tool result is. An approval-bound call (a declared write, or an
// MCP server's approval flag) never runs at once: it becomes a run
// waiting for approval (agent.Runtime.SuspendHostCall), the call returns
// at once with the run id, and t3agent runs it once a person approves it
// in the inbox, the API or `t3agent runs approve`. A tool that needs a
// person's typed input answers input_required (2026-07-28) or, for older
// hosts, an error naming the fields it needs.
//
// # Who calls
//
// Every request carries a bearer token, checked by Params.Verify: a
// service token (scope agent:run to call, agent:read to follow runs) or
// an OAuth access token of t3agent's own authorization server bound to
// the endpoint (its resource). Without one the answer is 401 with a
// WWW-Authenticate challenge naming the protected-resource metadata
// (RFC 9728), served at /.well-known/oauth-protected-resource/mcp[/…].
//
// # Record and limits
//
// Every tools/call is recorded (store.MCPServerState.RecordMCPCall): who,
// client, credential, configuration, tool, decision, outcome, duration,
// never arguments or results. Calls and lists are limited per credential
// and per user in fixed one-minute windows.
//
// # Concurrency
//
// A Server is safe for concurrent use; it keeps no per-host state but the
// rate windows.
package mcpserver
