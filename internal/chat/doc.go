// Package chat is the backend AI chat: conversations of TYPO3 backend
// users, their turns, and the approvals and answers people give on them.
// It is a thin consumer of the agent runtime (package agent): it never
// reaches a tool or an MCP server itself; every turn is an agent run
// through the one gate.
//
// # Statuses
//
// A conversation (store.Conversation) is in one of six statuses:
//
//	idle               nothing to do; a message may be sent
//	processing         a turn, or a recorded decision or answer, waits for a consumer
//	locked             a consumer (Process, the Worker) runs it
//	awaiting_approval  the run waits for a person to approve or deny its writes
//	awaiting_input     the run waits for a person's answer to a question
//	failed             the last turn did not complete; Retry may run it again
//
// Every transition is a compare-and-set in the store (ChangeConversation
// with the statuses it starts from, and while locked the consumer's claim
// id too), so of two racing changes exactly one wins; a lost one answers
// 409 stateChanged to a person and is logged by a consumer.
//
// # Transitions
//
// Requests (the HTTP API calls these with the acting backend user):
//
//	Send, Edit   idle, failed, awaiting_* → processing (user message appended;
//	             leaving awaiting_* cancels the waiting run first)
//	Retry        failed, processing (no decision) → processing, run as resumeChatTurn
//	Decide       awaiting_approval → processing with decision approve/deny
//	Input        awaiting_input → processing with decision input and the answer
//
// Consumers: Process and ProcessNext claim processing → locked, then
// either carry out the recorded decision or answer, or run a new turn,
// and map the result (below). Reconcile and Cleanup repair rows nobody
// finished.
//
// # A turn
//
// The conversation's task (chosen at creation: the first GroupTasks
// mapping that matches one of the owner's groups, else Settings.Task) is
// resolved to its configuration, live. No task, or one that does not
// resolve, fails the turn with chatNotConfigured: the chat never falls
// back to a tool-less model. The row is written locked again, which
// refreshes the timestamp cleanup measures (never processing, which
// would let a second consumer in). The transcript is a system message —
// the identity and behaviour contract, then the task's prompt template
// with {{input}} replaced by nothing (the user's messages follow as
// messages of their own) — and the stored messages; the configuration's
// own system prompt is put first by the runtime. A message the model
// wrote beside a tool call is joined (blank line) with the assistant
// message that follows it, so one assistant turn stays one message. The
// run acts as the owner, looked up afresh, with caller source "chat" and
// operation chatTurn; a turn queued by Retry runs as resumeChatTurn
// (Retry marks the row with DecisionReason "resume" and no decision).
//
// # Outcome mapping
//
// The seed's mapping of agent.Result onto the conversation:
//
//	completed          beside texts, then the answer; idle; error and run cleared
//	awaiting_approval  beside texts; awaiting_approval with the run id; error
//	                   cleared; no sentence stored (clients render the notice
//	                   from the status, in the reader's language)
//	awaiting_input     beside texts, then the question (the input schema's
//	                   title, else its description); awaiting_input with the run id
//	anything else      failed with the sanitised Result.Error (or one derived
//	                   from the outcome) and code runFailed — a default arm, as
//	                   the runtime adds outcomes
//
// Beside texts are the text the model wrote beside its tool calls
// (Result.Beside), each its own assistant message marked BesideToolCall,
// in round order.
//
// # Decisions
//
// Decide and Input only record: the worker carries the decision out, as
// the person who made it (looked up afresh), through Runtime.Approve or
// Runtime.SubmitInput, and maps the result like a turn. When the runtime
// refuses (*agent.RefusedError), the conversation waits again on the same
// run with the decision cleared and a hand-back code (HandBackCode); a
// refused answer is dropped together with its message. The cause goes to
// the log only. Retry answers 409 decisionInFlight while a recorded
// decision is not carried out: a second turn beside an approved write is
// how writes came to happen twice.
//
// # Reconcile
//
// A recorded decision no worker picked up within ReconcileGrace (45 s) is
// repaired by Reconcile (every worker runs it periodically) and by
// Messages for the conversation it reads: by the run's status, waiting
// hands the card or question back (answer dropped), running or queued
// leaves it, finished fails the conversation with runFinishedOutside.
// Every write expects processing.
//
// # Cleanup
//
// Cleanup fails rows processing or locked for StaleAfter (timedOut; the
// claim, run and decision fields cleared, so a Retry cannot replay an old
// approval), archives idle rows after ArchiveAfter and deletes archived
// ones after DeleteAfter.
//
// # Errors
//
// Operations return *Error for refusals, with a Code for the client and
// the HTTP status; other errors are internal (500, cause to the log).
// Every error message stored on a conversation passes Sanitize first.
package chat
