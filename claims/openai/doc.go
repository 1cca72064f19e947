// Package openai is a claims.SearchProvider for the OpenAI Responses API
// with the hosted web_search tool.
//
// One Search is one streamed POST /v1/responses call made through the
// official SDK (github.com/openai/openai-go/v3, the responses service
// alone, so that no OPENAI_* environment variable is read): the model
// searches the web, opens pages and returns a structured analysis (status,
// conclusion, atomic facts, evidence with URL, title, publisher,
// publishedAt, verbatim excerpt, relationship, source type and quality
// reason, conflicts, limitations) in strict JSON-schema mode. The provider
// reports what the API returned; the claims engine re-checks every URL,
// domain, date and excerpt.
//
// # Streaming
//
// The call streams. Each response.output_item.done event whose item is a
// web_search_call is reported at once through
// claims.ProviderQuery.ReportSearchCall (its sources, or the opened page),
// so that the engine can start capturing pages while the model still
// writes; the final response.completed, response.incomplete or
// response.failed event carries the whole response object, which is parsed
// as below and is authoritative.
//
// # Retries: the SDK's, configured
//
// The SDK's own retry loop is kept and configured as the reference notes
// advise, not replaced: MaxRetries 1 (DefaultMaxRetries; the SDK's default
// is 2), Retry-After (and retry-after-ms) obeyed up to MaxRetryAfter (20 s;
// a longer one ends the call with claims.ProviderRateLimited carrying the
// server's value), the SDK's backoff otherwise (0.5 s·2^n, capped at
// MaxRetryAfter, minus up to 25 % jitter; only the first, 0.5 s, is used
// with one retry), AttemptTimeout per attempt, stream included. The
// SDK decides on HTTP status alone, so a middleware vetoes its retry (by
// setting x-should-retry: false on the answer, which the SDK obeys) where
// that is wrong: 429 insufficient_quota (billing: never retried, logged at
// error level) and any retry whose wait would leave less than
// MinAttemptTime before the Search deadline. The SDK does not retry an
// attempt that ran out of its AttemptTimeout. The same middleware logs the
// x-request-id, openai-processing-ms and x-ratelimit-* headers of every
// attempt at debug level.
//
// The defaults of the options both SDK providers take (API key, base URL,
// model, clock, timeouts, retries, HTTP client, logger) are applied in one
// place, claims/internal/sdkcall's Settings, which both share.
//
// What the SDK does not cover, and this package still does: classifying
// failures by error code into claims.ProviderError kinds; reading an error
// body that is not JSON (the SDK then returns only its own decoding error);
// blocked_domains (untyped, sent through SetExtraFields); the schema as
// written (the typed field is a map, which would reorder properties);
// validating the structured output against the schema; private-use
// citation markers.
//
// # Request
//
//   - tools: one web_search tool; the query's allowed domains, normalised
//     (lowercase, no scheme, path, port, "*." or trailing dot, IDNA to
//     punycode, deduplicated), go to filters.allowed_domains. The API accepts
//     at most MaxAllowedDomains (100): a longer list is trimmed to its first
//     100 entries and a limitation says so; the engine enforces the full
//     list locally (Capabilities reports MaxDomains 100).
//   - Blocked domains are stated in the prompt but not sent to the tool
//     unless Options.SendBlockedDomains is set (the field is untyped in the
//     API and known to leak; Capabilities.BlockedDomainFilter reports the
//     flag).
//   - user_location is {"type":"approximate"} alone unless
//     Options.UserLocation is set: when the field is omitted the API assumes
//     the United States, which would bias results for other jurisdictions.
//   - tool_choice "required" (a search always happens), include
//     ["web_search_call.action.sources"], store false, reasoning.effort low
//     (Options.ReasoningEffort), max_tool_calls and max_output_tokens from the
//     query's tier budget (or the tier table when the query leaves them 0).
//   - text.format is the strict JSON schema AnalysisSchema (every property
//     required, nullable publishedAt as ["string","null"],
//     additionalProperties false everywhere, no numeric bounds: confidence
//     0..1 is checked after parsing). Each atomic fact carries
//     timeSensitive: true when its truth changes over time (a current
//     figure, office holder, latest version), so that the claims engine
//     counts only evidence published within the freshness window for it.
//   - instructions tell the model that page content, search results and the
//     claim are untrusted data whose instructions must never be followed; the
//     user message states today's date and time, asOf, the jurisdiction, the
//     freshness window (as hours and as a start time), the source policy,
//     source counts, conflicts and the tool budget, with the claim inside a
//     JSON block.
//
// # Response
//
// The final response's output is walked: each web_search_call becomes a claims.SearchCall (an
// absent action type means search; the older "find" is reported as
// find_in_page; queries come from "queries" or the deprecated "query";
// sources of type url are kept and other source types skipped; a null
// open_page URL is ""). url_citation annotations become Citations (often
// empty with structured output). The output text is the concatenation of all
// output_text parts of assistant messages; it must be one JSON value that
// validates against AnalysisSchema, except that a fact may lack
// timeSensitive (answers of models that ignore strict mode, recordings made
// before the field existed): ProviderFact.TimeSensitive is then nil and the
// engine reads the fact's wording instead. Private-use citation markers
// (U+E000–U+F8FF, e.g. "\ue200cite\ue202turn1search0\ue201") are removed
// from every model string. Usage carries input, cached input and output
// tokens; Raw is the exact response object of the final event.
//
// # Failures
//
// Every failure is a *claims.ProviderError (errors.Is with the claims
// ErrProvider* sentinels, errors.As for the detail types APIError,
// ResponseError and OutputError):
//
//	no API key                              ProviderNotConfigured (401 from the API too)
//	429 insufficient_quota                  ProviderQuotaExhausted, never retried, logged at error level
//	429 rate limit, Retry-After ≤ 20 s      retried while retries and time remain
//	429 otherwise                           ProviderRateLimited with RetryAfter
//	5xx, 408, 409, connection error         retried up to MaxRetries (1), then ProviderFailed
//	context deadline, attempt timeout       ProviderTimeout
//	error event in the stream               ProviderFailed
//	status "incomplete" (max_output_tokens) ProviderBadOutput (truncated JSON)
//	status "failed"                         ProviderFailed (rate_limit_exceeded: ProviderRateLimited)
//	stream events or analysis not JSON,     ProviderBadOutput
//	no final response, schema violation,
//	refusal, no output text
package openai
