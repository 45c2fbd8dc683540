// Package mcp is t3agent's client for external MCP servers (SPEC §3,
// ADR-116): it keeps their records, imports their tools into a
// catalogue, and runs remote calls, so MCP tools reach a model only
// through the registry and the one gate, exactly like builtins.
//
// # A tour
//
// A Service (New) holds everything. An operator adds a server (Add) with
// an identifier, a URL, optional auth (a bearer token or a named header,
// sealed with the master key and never shown again; or OAuth 2.1, whose
// per-server handler Params.OAuth supplies — package mcpauth) and, most
// importantly, a data class. Without a data class the server is inert:
// its tools are never registered, so never offered. Its effect defaults
// to non_idempotent_write (a remote tool is a write until declared
// otherwise), approval is required and the server starts disabled.
//
// Import lists the server's tools over a fresh session, within the caps
// (MaxImportPages, MaxImportTools; past them nothing changes), names each
// mcp_<server>_<remote> (LocalName: refused, never rewritten), keeps only
// schemas NormalizeSchema accepts, and reconciles the catalogue in the
// store: vanished tools are orphaned, returning ones restored. Ping does
// the handshake only and reports the protocol version, server name and
// latency.
//
// Provider turns the catalogue into registry tools: group mcp_<server>,
// the server's data class, the effect of the server or the tool's
// override, approval from the server flag, admin-only by default, usable
// once the server is enabled (a tool or group override can still switch
// them off), the description prefixed with the server's name, and Remote
// set so the trust zone is always enforced. The registry follows the
// catalogue live: Provider is a tool.Versioned provider whose generation
// is a counter in the store that triggers move with every change of a
// server's declaration or of the catalogue, by any process, so every
// offer sees the servers as they are (one small query), and a change
// through `t3agent mcp …` beside a running serve counts from its next run.
//
// Each tool keeps the server record its registry view was built from.
// When the gate admits a call (gate.Invoke is the only way a tool runs),
// the tool, which may come from an offer made before a change, checks
// that its declaration still holds — reading the store only when the
// server was changed through the Service since, or when its last read is
// older than Params.Recheck (a second by default; changes made by another
// process are seen that late) — and refuses for the rest of the turn if
// it does not. Then it spends one unit of the run segment's
// CallBudget (which the loop passes in the context, WithCallBudget) and
// calls the server on its pooled session. MapResult turns the answer into
// what the model reads; every failure becomes an error result. The last
// contact is stored at most once a second per server, off the call's
// path (Flush and Close store what is pending).
//
// # The wire
//
// The protocol is the official Go SDK's: Streamable HTTP with JSON or
// event-stream answers and every revision it negotiates (the stateless
// 2026-07-28 down to 2025-03-26 with sessions). Nothing else: no stdio,
// no process is ever started from configuration, no standalone event
// stream. Each operation has one deadline (DefaultTimeout unless
// configured) shared by all its requests; a request after it is not
// sent. Answers are capped at MaxAnswerBytes, redirects are never
// followed, and every URL and address passes the egress.Guard before a
// credential is attached, again at dial time. A failure is an *Error
// whose message is safe to show.
//
// A dropped answer stream (the connection ends before the answer, after
// the server gave event ids) is resumed the way the protocol says: a GET
// with Last-Event-ID, after the delay of the server's retry field (the
// SDK's backoff when there is none), at most resumeAttempts times without
// progress, and all within the operation's deadline, which the GETs carry
// like every other request. A call is never sent twice for it: a
// session the server forgot while resuming fails the call instead of
// replacing the session. When resuming fails the error says so
// (KindStreamLost: refused with its HTTP status, or the attempts that
// failed; KindTimeout names the resumes when the deadline ran out).
//
// # Questions from servers
//
// The client declares one capability, elicitation (form and URL mode),
// and answers every other request of a server at once with a JSON-RPC
// error that names it (sampling and roots are not offered; nothing is
// left waiting). A server asks in one of two ways, and both end the call
// with a tool.Question in its Result; the agent suspends the run for
// input exactly as for a builtin that needs input, the person answers
// (chat form, inbox, `t3agent runs input`), and the call is made again
// with tool.Call.Answer:
//
//   - A 2026-07-28 server answers input_required (MRTR, SEP-2322) with
//     its questions and an opaque request state. The SDK's automatic
//     retry is off; the questions are asked one at a time, and when all
//     are answered the call is sent again with inputResponses and the
//     request state. This is durable by design: the run's sealed state
//     holds everything, so the answer can come days later, to another
//     process, after a restart.
//   - An older, stateful server sends elicitation/create on the call's
//     stream and waits for the answer on its live session. t3agent does
//     not hold that session open for a person: a run must outlive the
//     operation's deadline and the process. The handler answers "cancel"
//     at once, notes the question, and the call ends with it (whatever
//     the server made of "cancel" is discarded). The answer is then armed:
//     the call is sent again, and when the server asks the same question
//     (same mode, message and schema) the armed answer goes back at once;
//     a new question is asked in turn (at most maxQuestions per call).
//     After a restart nothing changes, since nothing lived in memory. The
//     cost: the server runs the tool once more, so a server that acted
//     before it asked would act twice; servers ask before they act, which
//     is what elicitation is for. A question arriving while more than one
//     call is open on the pooled session cannot be told apart and is
//     answered with an error.
//
// Declined and cancelled answers are passed back as such. A URL-mode
// question carries the page (tool.Question.URL) the person opens; its
// form is empty and "accept" says they did. The answer's state is bound
// to the question: the agent seals it with the run, and the turn digest
// a decision quotes covers it. A diagnostic Call has nobody to ask: it
// declines, or with ElicitDefaults accepts the schema's defaults.
//
// # Concurrency
//
// A Service, its egress.Guard and a CallBudget are safe for concurrent use. The
// Service keeps one session per server, keyed by its URL and credential;
// sessions are never shared between servers. Close ends them.
package mcp
