// Package guardrail screens what an agent run sends to a provider and what
// comes back.
//
// # The contract
//
// A Guardrail has a stable Identifier, says whether it is Mandatory, and
// Screens a Subject (a text, the Stage it comes from and, for output, the
// provider's finish reason) into a Result: a Verdict, the text (rewritten
// when the verdict is Redact) and Findings that count what was found by
// kind, never the found text itself. Verdicts rank
//
//	allow < redact < retry < require_approval < deny
//
// and the agent loop maps them to run outcomes as the reference does:
// deny ends a run guardrail_blocked (failed, policy_denied),
// require_approval ends it guardrail_approval_required (failed,
// approval_denied), retry repeats an output's provider call once, redact
// goes on with the rewritten text.
//
// # The built-ins
//
//   - secret-redaction, mandatory: t3agent's own catalogue of credential
//     shapes (RedactSecrets): vendor keys (OpenAI sk-…, Anthropic sk-ant-…,
//     AWS AKIA…, GitHub ghp_…, Slack xox…, Google AIza…, Stripe, GitLab,
//     Hugging Face, SendGrid, npm), JWTs, bearer tokens and Authorization
//     headers, the password of user:pass@ URLs, credential query
//     parameters, PEM/PGP private key blocks, and values assigned to
//     credential names anywhere in a text: PHP arrays, JSON (also JSON
//     inside a JSON string), .env, YAML, INI, TypoScript, keyword
//     arguments and attributes, mid-line as well as on a line of their
//     own, since tools collapse line breaks. Which name and value make a
//     credential is package credential's rule, which the TypoScript tools
//     share: "apiKey = nlp-demo-7f3c…" is one, "showForgotPassword = 0",
//     "split.token = pagets__" and "Password: must be changed" are not.
//   - pii-redaction, optional: e-mail addresses, phone numbers, IBANs with
//     their mod-97 check, card numbers with their Luhn check (RedactPII).
//   - provider-content-filter, optional: deny an answer the provider
//     stopped with finish reason content_filter.
//
// Redaction replaces a match with a marker such as [REDACTED:openai_key],
// keeping the context around it ("Bearer ", "password=") so the model
// still reads what was there. It is idempotent, and a part already
// redacted keeps its first kind.
//
// # The pipeline
//
// NewPipeline builds the guardrails of one configuration from its list of
// enabled optional guardrails: mandatory first, then the optional ones in
// a fixed order, then extras. The loop calls ScreenSystemPrompt,
// ScreenInput and ScreenToolResult (or ScreenMessages over a whole
// transcript) before every provider call, and ScreenOutput on every
// answer. Each returns the rewritten text and the strongest verdict.
//
// Screening is pure computation over compiled, immutable patterns; no
// state is kept between calls.
package guardrail
