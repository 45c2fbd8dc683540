// Package llm is t3agent's one small interface to chat models. The agent
// loop speaks only these types; wire formats stay in the adapters.
//
// # The contract
//
// A [Provider] sends a [Request] (model, transcript of [Message]s, offered
// [ToolDef]s, temperature, token limit) and returns a [Response]: text,
// [ToolCall]s with ids, a [FinishReason], [Usage] and the model that
// actually served. A [Streamer] can also hand out the text as it arrives;
// [Stream] calls any Provider that way. A [ModelLister] lists an
// endpoint's models. Every failure is an [*Error] carrying a
// [FailureClass]: the one vocabulary shared by retries, the circuit
// breaker, the fallback chain, telemetry and requeueing. An Error's text
// never holds the API key or a request body.
//
// # Adapters
//
// Subpackages adapt the official SDKs, with the SDKs' own retries and
// environment lookups switched off:
//
//   - llm/openai: OpenAI and every OpenAI-compatible endpoint (Ollama,
//     vLLM, llama.cpp, LM Studio, OpenRouter, Mistral, Groq, Azure OpenAI);
//   - llm/anthropic: Anthropic messages;
//   - llm/gemini: Google Gemini;
//   - llm/endpoint: builds the right one from a provider record's kind
//     (openai, ollama, vllm, llamacpp, lmstudio, openrouter, mistral,
//     groq, azure, custom, anthropic, gemini).
//
// Each maps the request faithfully (no tools field at all without tools;
// empty tool arguments as {}; empty schema properties as {}, never []),
// maps the answer back (a call without an id gets call_<index>; malformed
// arguments pass through verbatim for the gate to judge) and classifies
// failures: connection, 429 rateLimit with Retry-After, 5xx serverError,
// 401/403 auth, 404 configuration, other 4xx clientError, the caller's
// own cancellation canceled. [NewHTTPClient] gives each adapter its own
// transport and timeouts.
//
// # Resilience
//
// Decorators, each itself a Provider and Streamer, stack per endpoint and
// per configuration:
//
//	endpoint := llm.Resilient(adapter, llm.RetryParams{MaxRetries: 3}, llm.BreakerParams{})
//	chain := &llm.Fallback{Entries: []llm.Entry{
//		{Name: "main", Provider: endpoint, Model: "gpt-4.1"},
//		{Name: "local", Provider: ollamaEndpoint, Model: "qwen3"},
//	}}
//
// [Retry] repeats connection failures, 5xx and 429 in place with exact
// counts and an injectable [SleepFunc]; [Breaker] stops calling an
// endpoint after consecutive tripping failures and probes it again after
// a cooldown, on an injectable clock; [Fallback] walks its entries on
// retryable failures and reports which entry served, which were passed
// over and how many HTTP attempts it all took. See each type for the
// precise policy.
//
// # Tests
//
// llm/llmtest runs scripted provider servers (real HTTP, real SDK
// clients) for tests anywhere in the repository.
//
// # Concurrency
//
// Adapters, Retry, Breaker and Fallback are safe for concurrent use and
// keep no per-call state (the Breaker's state is shared on purpose).
// Request, Response and Error are plain values owned by the caller.
package llm
