// Package claims verifies factual claims against web sources.
//
// An Engine takes a ClaimVerificationRequest on one of four tiers (quick,
// standard, deep, research: see Tiers), asks a SearchProvider to search and
// analyse, and turns what the provider reported into a ClaimVerificationResult
// by deterministic rules: the provider reports, the engine decides. Nothing
// a provider returns is trusted; URLs, domains, dates, excerpts and statuses
// are all re-checked here.
//
//	e, err := claims.New(provider, db, snapshotter, nil)
//	eff, err := e.Check("deep", req)          // before payment: tier rules only
//	res, err := e.Verify(ctx, "deep", req, &claims.Call{IdempotencyKey: key, Scope: "payer:0x…"})
//
// # Choices where the interface document is silent
//
//   - maxSources and the tier cap: the effective maxSources is
//     min(request maxSources, tier cap) (the default 8 becomes 3 on quick).
//     minimumSources must not exceed the request's maxSources nor the
//     tier cap; otherwise the request is refused before any work
//     (RequestError, HTTP 422), e.g. "The quick tier supports at most 3
//     cited sources; minimumSources (4) cannot be met".
//   - maxSources counts distinct pages among the evidence, not evidence
//     items: several excerpts of one page are one source.
//   - Domains in allowedDomains and blockedDomains are normalised
//     (lowercase, IDNA to punycode, trailing dot removed; a scheme, port,
//     path or leading "*." is removed) and deduplicated; user information,
//     IP addresses, whitespace and invalid names are refused. A domain in
//     both lists is refused; official_only requires allowedDomains. A
//     domain covers its subdomains.
//   - freshnessHours is enforced on publishedAt (see Freshness) and bounds
//     the optional result cache; null means no freshness requirement.
//   - The deadline of one verification is 120 s (Options.Timeout); provider
//     and snapshots share it. A timed-out call stores nothing (ErrTimeout).
//   - Results are kept 30 days (Options.Retention, PurgeExpired).
//
// # Reconciliation
//
// In this order:
//
//  1. Every model string (conclusion, facts, evidence, conflicts,
//     limitations, queries, titles) loses private-use characters
//     (U+E000–U+F8FF), citation markup ("\ue200cite\ue202turn0search1\ue201",
//     leftovers such as "citeturn0search1", "【3†source】") and control
//     characters.
//  2. Provider sources come only from the search calls (their sources and
//     the URL of open_page and find_in_page actions), never from citations
//     or the model's evidence, so an invented URL never becomes a source.
//     URLs are canonicalised (internal/urlnorm: lowercase scheme and host,
//     IDNA, default port, fragment, tracking parameters utm_*, gclid, fbclid,
//     msclkid…, percent-encoding) and two URLs are the same page when their
//     keys agree (also ignoring "www.", http versus https, a trailing slash
//     and the order of query parameters). sourceId is "src_" and the first
//     20 hex digits of the SHA-256 of the key. Sources on a blocked domain,
//     or outside allowedDomains when it is set, are removed, whatever the
//     provider did.
//  3. Evidence: items without a valid http(s) URL, on a blocked domain or
//     outside allowedDomains are removed. A reused evidence id keeps its
//     first item; later items are renamed id_2, id_3… and are referenced by
//     nothing. Items with the same page, relationship and excerpt are merged
//     into the first. An unknown relationship becomes context.
//  4. Each item is matched to the provider sources by page key
//     (providerSourceMatched; consulted is the same flag: the provider read
//     the page) and classified (sourceType, qualityReason: see
//     Classification). The model's own sourceType and qualityReason are not
//     used.
//  5. The maxSources cap is applied after 3 and 4: at most maxSources
//     distinct pages are kept, chosen in this order: referenced by a fact of
//     the model, matched, admitted by the source policy, then the provider's
//     order.
//  6. Freshness is checked (see Freshness).
//  7. Facts and conflicts keep only the ids of surviving items (a merged
//     item's id is replaced by the id it was merged into); a conflict left
//     with fewer than two items is dropped; without includeConflicts all
//     conflicts are dropped. A response with no atomic facts is judged as one
//     fact: the claim, resting on all surviving evidence.
//  8. Snapshots (see Snapshots); each captured page is checked for its
//     evidence excerpts.
//  9. Verdicts (see Verdicts), then provenance.
//
// Every removal is reported in limitations; the provider's own limitations
// come first.
//
// # Classification
//
// First match wins:
//
//	| # | rule                                                                        | sourceType |
//	| 1 | official_only policy and the host is within allowedDomains                 | official   |
//	| 2 | gov, mil or int TLD; a government label in the public suffix (gov.uk,       | official   |
//	|   | gouv.fr, gob.mx, go.jp, govt.nz…); europa.eu, un.org, who.int, oecd.org,    |            |
//	|   | canada.ca…; Options.OfficialDomains                                          |            |
//	| 3 | edu TLD; ac./edu. in the public suffix (ac.uk, edu.au); arxiv.org, doi.org,  | academic   |
//	|   | nature.com, scholarly publishers; Options.AcademicDomains                    |            |
//	| 4 | a known news publisher (reuters.com, apnews.com, bbc.co.uk…);                | news       |
//	|   | Options.NewsDomains                                                          |            |
//	| 5 | reference works and standards bodies (wikipedia.org, britannica.com,         | reference  |
//	|   | ietf.org, w3.org, iso.org…)                                                  |            |
//	| 6 | forums and social sites (reddit.com, quora.com, stackexchange.com, x.com,    | forum      |
//	|   | medium.com…), forum./community./discuss./answers. subdomains, /forum paths  |            |
//	| 7 | Options.VendorDomains, or the site's name (the first label of the            | vendor     |
//	|   | registrable domain, ≥ 3 letters) is a word of the claim and the domain is   |            |
//	|   | under com, net, org or a country code (co.uk, .de…) of the ICANN section    |            |
//	|   | of the public suffix list, or under the reserved .example or .test: a        |            |
//	|   | first-party source about itself                                              |            |
//	| 8 | anything else                                                                | other      |
//
// Rule 7's name match is a presumption that the site belongs to the name the
// claim mentions (docs.stripe.com for a claim about Stripe). A name is cheap
// to register, so the presumption is refused where look-alike and fan sites
// live: newer generic TLDs (tesla.fan, stripe.xyz), shared-hosting suffixes
// where anyone can take a name (tesla.github.io, tesla.vercel.app,
// tesla.blogspot.com) and unknown TLDs. Such a source is classified other,
// with a qualityReason that says why and that listing it in
// Options.VendorDomains makes it vendor; under the authoritative policy it
// does not count. The reserved documentation and test TLDs .example and
// .test (RFC 2606), under which nobody can register a name, keep the
// presumption (the demo corpus lives there).
//
// # Source policy
//
//   - official_only: only sources within allowedDomains exist at all (the
//     others are removed); all of them count and are classified official.
//   - authoritative (default): official, academic, news, reference and
//     vendor sources count. Forum and other sources are kept in the result
//     with their relationship, but do not count toward any verdict; their
//     qualityReason says "not counted under the authoritative policy".
//   - open_web: every source counts.
//
// # Freshness
//
// The window ends at asOf (the end of that day) or, without asOf, when the
// provider answered, and spans freshnessHours before it. publishedAt is read
// as RFC 3339, a date-time without zone (UTC), a date, a year-month or a
// year; a partial date counts as its latest instant. An item whose latest
// possible publication precedes the window is stale: its qualityReason and a
// limitation say so. Stale evidence is superseded when the same fact has
// fresh (or undated) counting evidence and none of it takes the stale
// item's side; when a fact has only stale counting evidence, that evidence
// is used and the fact's confidence is capped at 0.60 (with a limitation).
// Undated items count and are listed in a limitation; dates more than a day
// in the future are treated as undated; items published after asOf are
// listed in a limitation.
//
// # Snapshots
//
// Per tier mode, cut to the tier's maxSnapshots, deduplicated by page:
// none (quick) captures nothing; cited (standard, deep) captures the pages
// of evidence that is referenced by a fact (or a conflict) and matched;
// all_sources (research) captures those first, then every other provider
// source. The Snapshotter captures them concurrently under the call's
// deadline. Evidence and provider sources get the snapshotId of the record
// for their page (failed records included); snapshotted is true only for
// captured pages. Each excerpt is checked against its page's normalised
// text with snapshot.Snapshot.Contains; the item's weight follows (an item
// counts toward a verdict at weight 0.5 or more):
//
//	| page                                                  | excerpt       | weight | counts |
//	| captured, excerpt found                               | verified      | 1.00   | yes    |
//	| captured, excerpt not found, or the item has none     | not found     | 0.25   | no     |
//	| captured, no text to search: no normalised form (PDF, | not checked   | 0.75   | yes    |
//	| images: normalizedSha256 null), empty text, or a      |               |        |        |
//	| record without its text                               |               |        |        |
//	| not captured (failed, not requested, no snapshots)    | not checked   | 0.75   | yes    |
//
// Found and not found are said in the item's qualityReason, not found also
// in a limitation. A captured page without text is not evidence that the
// quote is absent: the item's qualityReason and a limitation say "page
// captured; text not extractable (PDF); excerpt not checked".
//
// retrievedAt of an evidence item is when its page was captured, or, when it
// was not captured, when the provider call returned (observedAt).
//
// # Verdicts
//
// An item counts toward a fact when it is matched to a provider source,
// admitted by the source policy, supports or contradicts (not context), and
// its excerpt was not refuted by its snapshot (weight ≥ 0.5). Independent
// sources are distinct registrable domains (public suffix list: news.bbc.co.uk
// and www.bbc.co.uk are one source). For each fact, with S and C the
// independent supporting and contradicting sources and m = minimumSources:
//
//	| S   | C   | rule status           |
//	| ≥ 1 | ≥ 1 | ambiguous (+ a Conflict "Sources disagree on: …" when includeConflicts) |
//	| ≥ m | 0   | confirmed             |
//	| 0   | ≥ m | contradicted          |
//	| < m | 0   | insufficient_evidence |
//	| 0   | < m | insufficient_evidence |
//
// The model's own fact status can only make a decisive rule status more
// cautious:
//
//	| rule         | model says                          | fact status            |
//	| confirmed    | partially_confirmed / insufficient  | the model's            |
//	| confirmed    | contradicted                        | ambiguous              |
//	| contradicted | insufficient_evidence               | insufficient_evidence  |
//	| contradicted | confirmed / partially_confirmed     | ambiguous              |
//	| any other    | anything                            | the rule status        |
//
// Confidence: confirmed and contradicted 0.55 + 0.1 × W (W = sum over the
// deciding independent sources of their best weight), at most 0.95;
// partially_confirmed 0.45 + 0.1 × W, at most 0.75; ambiguous 0.40;
// insufficient_evidence at most 0.49; at most 0.60 when the fact rests on
// stale evidence only; never above the model's confidence when the model
// gave the same status. A fact whose status differs from the model's says so
// in its explanation.
//
// The top-level status, first matching row:
//
//	| # | facts                                                          | status                |
//	| 1 | no facts, or fewer than m independent sources used by all facts | insufficient_evidence |
//	| 2 | all confirmed                                                   | confirmed             |
//	| 3 | all contradicted                                                | contradicted          |
//	| 4 | at least one confirmed or partially_confirmed                   | partially_confirmed   |
//	| 5 | at least one contradicted                                       | contradicted          |
//	| 6 | at least one ambiguous                                          | ambiguous             |
//	| 7 | otherwise                                                       | insufficient_evidence |
//
// A response without atomic facts is judged as one fact (see
// Reconciliation), so through the engine row 1 applies by too few
// independent sources, never by zero facts. Row 7 is reached when the facts
// together use enough independent sources but none is settled by them. Every
// row of the three tables is reached through the engine from a recorded
// claimstest fixture (TestVerdictTableRowsThroughEngine).
//
// So a result is never confirmed without evidence. When the top-level
// status differs from the model's, the model's conclusion is not used: the
// conclusion is a sentence derived from the facts, and a limitation quotes
// the provider's status and conclusion.
//
// # Provenance
//
// Every counter is computed from the result: providerSourceCount (sources
// after filtering), consultedSourceCount (sources opened by an open_page or
// find_in_page action or matched by an evidence item), citedSourceCount
// (distinct pages of evidence referenced by a fact or a conflict),
// matchedEvidenceCount, snapshottedSourceCount (captured records only),
// webSearchCallCount (all search-call items), searchedWeb (true only when a
// search action happened) and the provider's token counts. A provider that
// searches a local collection instead of the web
// (ProviderCapabilities.Offline: claims/corpus) made no web search:
// searchedWeb is false and webSearchCallCount 0 although its search and
// open_page actions appear in providerSources, and a limitation says so. cacheHit is true
// for idempotent replays and result-cache answers.
//
// # Idempotency, collapsing, caching, storage
//
// An Idempotency-Key (at most 255 characters) is scoped to the payer or
// customer (Call.Scope) and the tier. The same key with the same effective
// request (Effective.Hash: every field with defaults applied, domains
// normalised and sorted, maxSources capped) returns the stored result with
// the same verificationId, cacheHit true and no provider call, and lets the
// new order read it; a different request gives ErrIdempotencyConflict. A
// request in flight holds a lease in the Store (so instances sharing
// PostgreSQL agree): a duplicate waits up to Options.IdempotencyWait for it,
// then gets an *InFlightError with a retry hint. A failed call releases its
// lease; a lease whose holder died expires after the timeout plus 30 s. A
// process that holds the database alone may free every pending lease at
// start-up (store.DB.ReleaseIdempotencyLeases; the example server does so on
// SQLite), so a retry after a crash does not wait for that expiry.
//
// Concurrent identical requests (same tier, effective-request hash and
// provider) share one provider call (singleflight); the shared work runs
// under its own deadline, detached from the first caller's cancellation,
// and every caller gets and stores its own verification. The provider call
// reports its usage to Options.Observer itself, once, when it ends (also
// when it failed, with the tokens a partial response says it cost, and
// when its first caller has gone); one caller carries the usage in its
// Call for the order's cost accounting (Call.ProviderCalled).
//
// Options.ResultCache (off by default) answers from a stored result of the
// same tier, request hash and provider observed within freshnessHours, as a
// new verification with cacheHit true.
//
// A result is stored in one transaction after everything succeeded,
// together with the grant of the paying order and the completion of its
// idempotency lease; snapshot records captured before a failure may remain
// (they are immutable).
package claims
