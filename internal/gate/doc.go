// Package gate is the one place that decides whether a tool may be offered
// to a model or called, and the only way a tool runs. Every caller uses
// it: the agent loop at the start of a run and on every resume, the tools
// playground, the CLI and, later, the MCP facade. There is no other path
// to a tool and no allow-all variant, not even for tests.
//
// # Deciding
//
// Decide answers for one tool, Explain for every registered tool, and
// Offer for the set a turn may use. Each takes who acts (a TYPO3 backend
// user, or nil) and a Configuration, reads the operator's Enforcement mode
// with the overrides, and checks, in this order, reporting the first that
// fails:
//
//  1. not_registered: the registry has no such tool;
//  2. tool_disabled: its group is disabled, or its own override (else its
//     default) says off (see Availability);
//  3. requires_admin: an admin-only tool and no admin acting;
//  4. configuration_group: the configuration allows other groups only;
//  5. trust_zone: the tool's data class is above the ceiling of the zone
//     of the provider that will receive its output.
//
// A Decision carries the tool's data class (secretAdjacent for an unknown
// name), the zone and its ceiling. The trust-zone check is the only one
// Enforcement can relax: exactly "observe" lets the tool through as
// ObservedOnly; anything else, the empty string and near misses such as
// "OBSERVE" included, enforces, and remote tools always enforce.
//
// Decide records a governance event in the store for every denial and
// every observed-only decision: who, which tool, why, zone, ceiling,
// class, configuration and run, and never the call's arguments. Offer
// does the same for the tools it considers; Explain is a readout and
// records nothing. If the events cannot be stored, observed-only
// decisions turn into denials.
//
// Offer's requested list is a request, never a grant: every name passes
// the gate. nil asks for every enabled tool; an empty list, or nothing
// passing, gives an empty Offered, which is a legitimate answer (the loop
// then sends no tools field at all).
//
// The overrides and the enforcement mode are read from the store in one
// query per Decide, Explain or Offer, never once per tool, and the
// registry's View is taken once per batch too (it asks the MCP
// catalogue's generation, one small query, so a server changed by any
// process counts from the next batch). An Invoke within an Offered set
// reuses the offer's overrides and calls the tool the offer was decided
// on, reading nothing; a remote tool then checks its own declaration.
//
// # Calling
//
// Invoke runs one call: it asks the gate (reusing the turn's Offered set
// when given, and refusing names outside it), parses the arguments as one
// JSON object, validates them against the tool's input schema (compiled
// once per schema, with references outside the schema refused), runs the
// tool under a deadline, and bounds what comes back. Every failure is an
// error result the model can read; causes, panics and stacks go to the
// log only. OnCallFinished reports each call's outcome and duration (and
// whether the registry holds the tool) for metrics and traces; OnDenied
// reports each recorded denial with its reason and stage (offer, call,
// decide), for metrics.
//
// # Availability
//
// Availability reads and toggles the tool and group overrides in the
// store. A group without an override is enabled; a tool override replaces
// the tool's default but cannot re-enable a tool in a disabled group.
// Toggling is admin-only, which the callers enforce.
//
// # Concurrency
//
// A Gate, an Availability and an Offered are safe for concurrent use by
// any number of goroutines; Decision, Config, CallReport and Denial are
// plain values. The gate keeps no per-run state: a run keeps its Offered.
// Invoke returns when the tool returns, so tools must honour ctx.
package gate
