// Package tool defines what a tool is in t3agent and holds the registry of
// all of them.
//
// # A tool
//
// A Tool declares itself with a Spec and runs with Execute. The Spec is
// fixed for the life of the tool and says everything the rest of t3agent
// decides on:
//
//   - Name, the wire name (NamePattern), and Description, written for the
//     model: what the tool returns, its limits, when to use it;
//   - InputSchema, a JSON Schema of type object for the arguments;
//   - Group (GroupContent … GroupFiles, GroupCode, or mcp_<server> for MCP tools),
//     which availability toggles and configurations grant by;
//   - Effect (ReadOnly, IdempotentWrite, NonIdempotentWrite), which
//     decides approval and retries;
//   - DataClass, how sensitive the output is, ranked against the
//     TrustZone of the provider that would receive it (Permits);
//   - AdminOnly, EnabledByDefault, RequiresApproval, InputRequest, Remote.
//
// Spec.Validate checks a declaration; the registry refuses what it
// rejects, including a data class left at its zero value, so a tool that
// forgets to classify its output cannot be offered at all.
//
// Execute receives the Call (the acting TYPO3 backend user, the run and
// the provider's call id) and the arguments as decoded JSON. It answers
// with a Result: Content, the only part that reaches the model, IsError,
// and Artifacts (tables and text for people, never for the model). A
// result with IsError set is an answer the model reads; a Go error means
// the runtime is broken and becomes a generic error result.
//
// # The registry
//
// NewRegistry takes the builtin tools and any number of Providers, such as
// the MCP catalogue. Builtins are validated at construction and a
// duplicate name is an error there, at start. Provider tools are merged
// into an immutable View on first lookup: a provider tool whose name a
// builtin (or an earlier provider tool) already has is dropped, an
// invalid one is skipped, and a failing provider contributes nothing;
// each case is logged.
//
// The view follows the providers live. A Versioned provider (the MCP
// catalogue) says with one small query whether its tools changed, through
// this process or any other: every lookup (View, Get, List, Len) asks it
// and loads the tools again only when the generation moved, so what an
// operator changes counts from the next lookup in every process. Other
// providers are loaded once and again on Refresh. A caller that looks up
// many tools together takes one View and asks it.
//
// # Where tools run
//
// A tool never runs by itself. Package gate decides whether a tool may be
// offered or called (availability, admin-only, the configuration's groups,
// data class against trust zone) and its Invoke is the only way a tool
// executes: it checks the gate, validates the arguments against
// InputSchema, sets a deadline, recovers panics and bounds the result.
// Tool implementations may therefore rely on arguments that match their
// schema, but must still treat them as untrusted data, authorise against
// Call.Actor only, and honour ctx.
package tool
