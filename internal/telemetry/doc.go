// Package telemetry records what every LLM provider call used and keeps
// users and configurations within their budgets.
//
// # One row per call
//
// The loop calls Recorder.RecordCall after every provider call, success or
// failure, with the run id as correlation, the caller's source and
// operation, the user, the configuration asked for and the chain entry
// that was called (configuration, model, provider, its place in the
// fallback chain), the provider's usage, the latency, the attempts and
// the error. The row keeps the error's class (ErrorClass), never its
// message, and no prompt or answer: there is nowhere to put them. The cost
// is the model's prices (dollars per million tokens, in exact picodollars,
// see agentconfig.USD) times the tokens; a model without prices leaves it
// unmeasured rather than zero.
//
// # The ledger
//
// The same transaction adds the call to a daily ledger row keyed by day,
// user, configuration, provider, model and source: requests, errors,
// tokens, cost, and requests of unknown cost. Days and months are taken in
// the Recorder's time zone (UTC by default) from its clock, which tests
// inject to cross midnight and month ends. `t3agent usage` sums the ledger
// by one key (Recorder.Usage); budgets read it too.
//
// # Budgets
//
// Recorder.CheckBudget runs before a provider call (once per call, outside
// the fallback walk). Per-user budgets are records of their own
// (agentconfig.UserBudget); per-configuration budgets are part of the
// configuration. Each limits requests, tokens and cost per day and per
// calendar month; 0 is unlimited. The check counts the call itself, looks
// at the day before the month, and fails with a *BudgetError that matches
// ErrBudgetExhausted, which the loop maps to budget_exhausted.
package telemetry
