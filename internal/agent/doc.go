// Package agent is t3agent's one agent loop: every agent turn, from the
// CLI, the chat or the API, runs through Runtime.Run.
//
// # A run
//
// Run takes a Request (a resolved Config, the transcript, the acting TYPO3
// backend user, the caller, the tools asked for, a round cap) and returns
// a Result. It is synchronous, never panics and never returns a Go error:
// how a run ended is a value, its Outcome (completed, awaiting_approval,
// awaiting_input, suspend_failed, guardrail_blocked,
// guardrail_approval_required, failed, cancelled) with a Termination
// reason and, when it did not complete, a public-safe Error sentence.
//
// Every run is first a row in the store (store.Runs), status running and
// leased to this process, and every step is an event in its ordered log.
// A run that cannot be recorded does not run.
//
// # The loop
//
//  1. Assemble: one leading system message with the configuration's
//     prompt and then the caller's system text; the system prompt, user
//     input and any tool results in the transcript pass the input
//     guardrails (secret redaction is mandatory) before anything is sent.
//  2. Offer tools through the gate, once, for the actor and the
//     configuration (whose trust zone is the least trusted along its
//     fallback chain). The requested names are a request, never a grant.
//     An empty offer means requests without a tools field at all.
//  3. Up to the round cap (default 5, ceiling 20): fit the context window
//     (a context event), record the request (a request event), check the
//     budget, call the provider through its fallback chain, record the
//     answer and its telemetry (an llm event) and screen it with the
//     output guardrails. No tool calls: the run completes. Tool calls: the
//     assistant turn is appended and the whole turn scanned before any call
//     runs. An approval-bound call stops the run awaiting_approval, a call
//     that needs a person's input stops it awaiting_input; the pending turn
//     is sealed with the master key in the run row and its digest recorded.
//     Otherwise the calls run in the model's order through gate.Invoke with
//     the offered set; each result is screened and goes back as a tool
//     message with its content only (a tool event). Malformed arguments, an
//     unknown or refused tool, a failing tool: all are error results the
//     model reads, and the loop goes on.
//  4. When the cap is reached with calls still pending, one last call
//     without tools gives the answer, and the run is truncated
//     (max_iterations).
//
// The budget, the context floor, a provider that fails after its retries
// and fallbacks, and a guardrail's deny or require_approval end the run
// failed with their termination reasons (budget_exhausted,
// context_truncated, provider_failed, policy_denied, approval_denied). A
// context that ends stops the run at the next step boundary, cancelled.
//
// # Context window
//
// Fit estimates tokens without a tokenizer (prose 3.5 bytes a token,
// dense text such as tool results, call ids, arguments and schemas 2.5,
// plus 8 a message and 12 a call) times a calibration that starts at 1.15
// and only grows as the provider reports real prompt sizes. The budget is
// the window minus the reserved answer minus a 3 % margin. The head
// (through the first user message) is always kept; the oldest whole turns
// are dropped, never orphaning a tool result; each tool result is capped
// at 50 000 bytes. The context event's breakdown adds up exactly. If even
// the last turn does not fit, the run ends context_truncated.
//
// # Events and privacy
//
// Events are numbered from 0. They are written with the run's progress
// in one guarded update that also renews the lease, once a round before
// the provider call (so the request in flight is on record) and at the
// end; a run that lost its row (cancelled or taken over elsewhere) stops
// there without writing more. Request.OnEvent sees each event as it
// happens. At privacy level metadata, the default, events hold names,
// counts, tokens, costs and timings only; at full they also hold the
// (already redacted) messages, answers, arguments and results. Describe
// renders an event for people.
//
// # Durable runs
//
// Every executing segment holds a lease on its row (owner
// "interactive:", "resume:" or "worker:" plus host and pid), renewed by
// each guarded step write; a segment whose lease is gone stops before its
// next side effect and writes nothing more. The write fence: before a
// write tool runs, its effect is stamped on the leased row in the same
// guarded update; the step that records the write clears it, and a write
// step that cannot be stored fails the run. A write that started is
// recorded whatever happens next: a cancel that comes while it is in
// flight leaves the fence to the segment running it, which stores the
// write's step on the cancelled row and stops.
//
// A waiting run is decided with Approve or SubmitInput. Approve checks,
// in order: the run waits for approval; the approver is an admin or the
// owner; the configuration still exists; four-eyes
// (require_second_approver: the initiator may deny, never approve); the
// sealed state opens; the atomic claim; the turn digest (constant-time,
// missing is stale); for an approval, the approver's own gate for every
// write call; the decision event stored before anything runs. A refusal
// (a RefusedError with its code) after the claim puts the run back to
// waiting with a refused event. The turn then runs as the run's owner,
// re-gated on the live configuration; denied calls are answered "denied
// by the operator" and the loop goes on with a fresh round cap.
// SubmitInput validates the answer against the input schema before the
// claim and overlays only the keys the schema declares. Cancel wins only
// from a non-terminal state; a running loop stops at its next step.
//
// Enqueue stores a queued run with its request sealed; RunQueued (a
// Worker's slots) claims one with a guarded update, so no two workers run
// the same run. A retryable provider failure requeues it with backoff
// min(30 s·2^n, 600 s), at most MaxRequeues times. Reap handles runs
// whose process died (expired lease): a fenced non-idempotent write or a
// run without a stored request is dead-lettered not_retryable, the
// others are requeued. The step of every write of a queued run (in its
// resumed segments too) replaces the stored request with a sealed
// continuation, the transcript through the write's result, in the same
// guarded update: a run taken over after a crash goes on from its last
// recorded write, the model sees that write's result, and the calls of
// that turn that were not recorded are answered as interrupted, never
// run again unasked. A run never starts over once a write of it was
// recorded; when its continuation cannot be kept, it stops instead.
//
// # Host calls
//
// SuspendHostCall keeps an MCP host's approval-bound call (through the
// MCP facade) as a run waiting for approval whose pending turn is that
// one call, with its digest and previews, and returns at once. It is
// decided by Approve like any other run (four-eyes included); once
// answered no model is asked: the run ends, completed with the call's
// screened result sealed in a host_result event (HostResult reads it
// back for the host), or failed approval_denied.
//
// # What it is built on
//
// A Request carries an agentconfig.Resolved: the configuration whose
// prompt, sampling, tool groups, guardrails, rounds, privacy and budget
// apply, and its fallback chain. Providers builds one resilient stack per
// provider record (a circuit breaker over retries over the openai-go,
// anthropic-sdk-go or genai adapter), shared by every run; a run walks
// its chain with an llm.Fallback whose entries are metered, so telemetry
// has one row per entry called, with the run id as correlation. The
// budget is checked once per provider call, before the chain. The
// guardrail pipeline (package guardrail) is built per run from the
// configuration's optional guardrails; secret redaction is always in it.
//
// Runtime holds no per-run state and is safe for concurrent use.
package agent
