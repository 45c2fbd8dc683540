// Package agentconfig is the configuration model of the agent runtime:
// which LLM answers a run, how, with which tools and within which limits.
//
// # The four levels
//
//	Provider       an endpoint: adapter (openai, openai_compatible,
//	               anthropic, gemini), endpoint URL, API key, trust zone,
//	               timeout, retries, extra headers
//	  └ Model      a model of that provider: model id, context length,
//	               output cap, capabilities, prices per million tokens
//	      └ Configuration
//	               a model with its system prompt, temperature, max tokens,
//	               allowed tool groups, optional guardrails, four-eyes flag,
//	               max rounds (default 5, ceiling 20), privacy level,
//	               budgets, and a fallback chain of other configurations
//	          └ Task
//	               a configuration with a prompt template
//
// Budgets per TYPO3 backend user are records of their own (UserBudget).
// Every record is keyed by an identifier (a budget by username) and may be
// switched off with active: false.
//
// # Declaring
//
// A Document is the declarative form, YAML for `t3agent apply -f` and the
// same keys as JSON for the API; docs/configuration.md has a complete
// example. ParseDocument reads it strictly: it refuses at once only what
// cannot be read at all, and records unknown keys (at every level) and
// values of the wrong type with their place. Service.Apply makes the store
// match it: records are created or updated by identifier, the rest is
// deleted only with Prune, and the whole document is refused, with every
// problem (those recorded by the parse, invalid values, dangling
// references, loops) named by item, line and key path, if anything is
// wrong. Re-applying a document reports every record
// unchanged and writes nothing. The UI and API edit records through the
// same Apply.
//
// # Keys
//
// An API key (or an extra header value) is either env:NAME, read from the
// environment each time it is used and never stored, or a literal, which
// Apply seals with the master key (package secret) bound to its provider
// ("llm_provider:<identifier>"). SecretRef carries the reference and
// prints only "env:NAME", "sealed" or "none"; Service.APIKey and
// Service.Headers produce the plaintext at the moment of use, and their
// errors never include it.
//
// # Resolving
//
// Service.Resolve turns a configuration identifier into a Resolved: the
// configuration with its model and provider, and its fallback chain
// expanded depth first, each configuration once, with missing or inactive
// entries skipped and loops refused. Resolved implements
// gate.Configuration: its allowed tool groups, and the least trusted zone
// of every provider on the chain, because whichever of them answers
// receives the run's tool output. A local configuration falling back to an
// externalGlobal one is offered only what externalGlobal may see.
package agentconfig
