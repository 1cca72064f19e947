// Package openai is a claims.SearchProvider for the OpenAI Responses API
// with the hosted web_search tool.
//
// One Search is one POST /v1/responses call: the model searches the web,
// opens pages and returns a structured analysis (status, conclusion, atomic
// facts, evidence with URL, title, publisher, publishedAt, verbatim excerpt,
// relationship, source type and quality reason, conflicts, limitations) in
// strict JSON-schema mode. The provider reports what the API returned; the
// claims engine re-checks every URL, domain, date and excerpt.
//
// # Why a hand-written client
//
// The official SDK (github.com/openai/openai-go/v3) is a generated client for
// the whole API surface; assay needs one endpoint and a handful of fields.
// The SDK decides retries on HTTP status alone, so it retries 429
// insufficient_quota (a billing failure that must fail fast) like a rate
// limit, and its retry budget does not look at the caller's deadline. This
// package is a small client over net/http and go-retryablehttp whose retry
// policy classifies by error code first, waits only when time remains under
// the context deadline, caps Retry-After, and keeps the exact request bytes
// assertable in tests. It adds no dependency beyond go-retryablehttp (which
// assay uses anyway) and golang.org/x/net/idna for domain normalisation.
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
// Search walks output: each web_search_call becomes a claims.SearchCall (an
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
// tokens; Raw is the exact response body.
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
//	5xx, 408, connection error              retried up to MaxRetries (1), then ProviderFailed
//	context deadline, attempt timeout       ProviderTimeout
//	status "incomplete" (max_output_tokens) ProviderBadOutput (truncated JSON)
//	status "failed"                         ProviderFailed (rate_limit_exceeded: ProviderRateLimited)
//	body or analysis not JSON, schema       ProviderBadOutput
//	violation, refusal, no output text
//
// By default a failed attempt is retried at most once (DefaultMaxRetries 1,
// not the SDK's 2): the verification has one deadline, and the reference
// notes advise retrying once and only when enough time remains; a second
// retry would mostly spend the caller's deadline on an overloaded API. A
// retry is made only if the context deadline leaves MinAttemptTime after
// the wait; each attempt has its own timeout (AttemptTimeout); when the
// context has no deadline, Options.Timeout (120 s) applies. The x-request-id,
// openai-processing-ms and x-ratelimit-* headers of every attempt are logged
// at debug level.
package openai
