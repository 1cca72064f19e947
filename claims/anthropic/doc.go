// Package anthropic is a claims.SearchProvider for the Anthropic Messages
// API with the server-side web search tool (web_search_20250305), through
// the official SDK (github.com/anthropics/anthropic-sdk-go/v2, built with
// option.WithoutEnvironmentDefaults so that no ANTHROPIC_* variable or
// profile is read). Its Name is "anthropic" and its sources are
// "anthropic_web_search" in provenance.
//
// # Request
//
// One Search is one streamed POST /v1/messages call. The system prompt is
// the instructions the OpenAI provider uses (claims/internal/analysis:
// untrusted page content, method, time sensitivity) plus the analysis JSON
// Schema, stated in the prompt: the Messages API's structured outputs
// cannot be combined with citations, and the citations are what this
// provider adds (below), so the answer is plain text that must hold one
// JSON object, validated against the same schema as OpenAI's (a code
// fence or a stray sentence around the object is ignored). The user
// message states today's date, asOf, jurisdiction, freshness window,
// source policy, source counts and the tool budget, with the claim inside
// a JSON block. max_tokens is the tier's output-token budget.
//
// The tool: max_uses is the tier's tool-action budget (MaxToolActions). The
// API accepts allowed_domains or blocked_domains, not both: the normalised
// allowed list is sent when there is one (up to MaxAllowedDomains; a longer
// list is trimmed and a limitation says so), otherwise the blocked list;
// when a request has both, the blocked domains are enforced only locally
// and a limitation says so. The claims engine re-checks every host in any
// case. user_location is sent only when Options.UserLocation is set. The
// tool choice is left to the model (auto) and the prompt requires a search.
//
// # Response
//
// The stream is accumulated with the SDK's Message.Accumulate. Each
// server_tool_use block gives a search's query; each web_search_tool_result
// block becomes a claims.SearchCall (action search, ID the tool_use_id) whose
// results (url, title) are the consulted sources, reported through
// claims.ProviderQuery.ReportSearchCall as soon as the block ends, so that
// captures start before the answer is written. A
// web_search_tool_result_error (max_uses_exceeded, too_many_requests,
// query_too_long, ...) is a search call without sources and a limitation.
// The text blocks are concatenated into the answer; their
// web_search_result_location citations (url, title, cited_text) become
// Citations and evidence excerpts: an evidence item the model left without
// an excerpt takes the first cited_text of its URL, and a cited URL that
// no evidence item names becomes a "context" evidence item (ID citeN)
// with the cited text as excerpt, since the answer did not say whether it
// supports or contradicts the claim. cited_text is a verbatim quote the
// API guarantees; the engine still checks every excerpt on its own
// snapshot.
//
// Usage: input tokens are input_tokens plus the cache read and cache
// creation tokens (Anthropic counts them apart; the engine's input count
// includes cached input, as OpenAI's does), cached input is the cache
// read, output tokens are output_tokens. The number of searches in
// provenance and accounting is the number of web_search_tool_result
// blocks; when usage.server_tool_use.web_search_requests is larger (a
// billed search without a result block) a limitation says so. Raw is the
// accumulated message JSON.
//
// A turn that stops with pause_turn (the server paused a long run of
// server-tool calls) is sent back as-is, the paused message appended as the
// assistant turn, and continued, at most MaxContinuations (2) times within
// the one deadline: the messages' content is joined, their usage summed
// (each request is billed), the response id is the first message's and Raw
// is the array of the messages. A turn still paused after that fails as
// stopped short.
//
// # Retries: the SDK's, configured
//
// As in claims/openai, the SDK's retry loop is kept and configured:
// MaxRetries 1 (the SDK's default is 2), its backoff (0.5 s·2^n, at most
// 8 s, minus jitter) or the server's retry-after-ms / Retry-After,
// AttemptTimeout per attempt (the SDK retries an attempt that timed out).
// The SDK decides on status alone and waits for any Retry-After, however
// long; a middleware vetoes its retry (x-should-retry: false) for billing
// and spend-limit failures, for a Retry-After longer than MaxRetryAfter
// (20 s), and when the wait would leave less than MinAttemptTime before
// the Search deadline.
//
// The defaults of the options both SDK providers take (API key, base URL,
// model, clock, timeouts, retries, HTTP client, logger) are applied in one
// place, claims/internal/sdkcall's Settings, which both share.
//
// # Failures
//
// Every failure is a *claims.ProviderError (errors.As for APIError,
// ResponseError and OutputError):
//
//	no API key; 401, 403                       ProviderNotConfigured
//	402 billing_error; 429 with error_code     ProviderQuotaExhausted, never retried, logged at error level
//	  *_spend_limit_reached; 400 "credit
//	  balance is too low"
//	429 rate_limit_error                       retried while retries and time remain, then ProviderRateLimited with RetryAfter
//	5xx, 529 overloaded_error, 408, 409,       retried up to MaxRetries (1), then ProviderFailed
//	  connection error, attempt timeout
//	error event in the stream                  by its type as above (overloaded_error: ProviderFailed)
//	context deadline                           ProviderTimeout
//	stop_reason max_tokens (truncated JSON),   ProviderBadOutput (ResponseError), with the partial response
//	  refusal, pause_turn after
//	  MaxContinuations, other
//	stream not JSON events or ended early,     ProviderBadOutput (OutputError)
//	  answer without a JSON object, schema
//	  violation
//
// # What the SDK does not cover
//
// Classifying errors by type and error_code into claims.ProviderError kinds
// (spend limits arrive as 429 like rate limits); a cap on Retry-After; a
// deadline-aware retry; validating the answer against the schema (no
// structured outputs with citations); continuing a pause_turn (the SDK
// converts the message back to a param, Message.ToParam, and the loop is
// ours).
package anthropic
