// Package claims verifies factual claims against web sources.
//
// An Engine takes a ClaimVerificationRequest (Request) on one of four tiers (quick,
// standard, deep, research: see Tiers), asks a SearchProvider to search and
// analyse, and turns what the provider reported into a ClaimVerificationResult
// by deterministic rules: the provider reports, the engine decides. Nothing
// a provider returns is trusted; URLs, domains, dates, excerpts and statuses
// are all re-checked here.
//
//	e, err := claims.New(provider, db, snapshotter, nil)
//	req := &claims.Request{Claim: "USDC on Base has 6 decimals."} // every other field: its default
//	eff, err := e.Check("deep", req)          // before payment: bounds and tier rules only
//	res, err := e.Verify(ctx, "deep", req, &claims.Call{IdempotencyKey: key, Scope: "payer:0x…"})
//
// # The request
//
// Request is the document's ClaimVerificationRequest and its bounds are
// its validate tags, stated once: Check and Verify check them with
// validator/v10 (Request.Validate), and the HTTP, MCP and A2A layers
// decode JSON with package shapes from the same tags, with Pydantic's
// errors. A broken bound gets the same message on every path: Go callers
// get a *RequestError whose Msg is the field and Pydantic's message
// ("claim: String should have at least 3 characters"), JSON callers a 422
// with that message at loc ["body", "claim"]. The rules between fields and
// tiers (below) come after the bounds, with their own messages.
//
// Unset fields take the documented defaults in the engine, so the zero
// value works: Request{Claim: "…"} is verified exactly as the body
// {"claim": "…"} (freshnessHours 168, sourcePolicy authoritative,
// minimumSources 2, maxSources 8, no asOf, jurisdiction or domain lists,
// includeConflicts true, language auto; the Default* constants).
// SetDefaults writes them into a Request (shapes calls it before reading a
// body) and is never needed for correctness. An explicit value that is
// also a zero value is written with the field's type: IncludeConflicts:
// new(false); FreshnessHours: field.Null[int]() for the document's null (no
// freshness requirement), field.Value(24) for 24 hours. A zero
// minimumSources, maxSources, sourcePolicy or language is outside the
// document's bounds, so in Go it can only mean unset.
//
// # Choices where the interface document is silent
//
//   - maxSources and the tier cap: the effective maxSources is
//     min(request maxSources, tier cap) (the default 8 becomes 3 on quick).
//     minimumSources must not exceed the request's maxSources nor the
//     tier cap; otherwise the request is refused before any work
//     (RequestError, HTTP 422), e.g. "The quick tier supports at most 3
//     cited sources; minimumSources (4) cannot be met".
//   - minimumSources and the pages a tier checks: only evidence whose
//     quote was verified on its page counts (see Verdicts), and a tier
//     checks quotes on at most Tier.CheckablePages pages (its maxSnapshots
//     when it takes snapshots: standard 3, deep 8, research 20; quick 3,
//     fetched and not listed). A larger minimumSources could never be met,
//     so it is refused by the same check before payment, naming the tier
//     that can: "The standard tier checks quotes on at most 3 captured
//     pages; minimumSources (4) cannot be met; the deep tier checks up to
//     8". The alternative, fetching pages beyond the snapshot cap without
//     archiving them, was not chosen: a verdict on a snapshotting tier
//     rests only on pages anyone can re-check from their snapshots.
//   - maxSources counts distinct pages among the evidence, not evidence
//     items: several excerpts of one page are one source.
//   - allowedDomains and blockedDomains hold host names, as their tags
//     state (the domainname pattern, at most 253 characters): ASCII
//     labels of letters, digits and inner hyphens, an optional leading
//     "*." and final dot; internationalised names in their xn-- form. A
//     URL, a port, an IP address, whitespace or user information is
//     refused with the pattern's error, on Go values (Validate) and JSON
//     alike, so the published JSON Schemas state the whole rule. Entries
//     are lowercased, stripped of "*." and the final dot, and
//     deduplicated; a domain covers its subdomains. A domain in both lists
//     is accepted and blocked: blocking wins for every host within it
//     (refusing it would be a rule no JSON Schema can state).
//     official_only requires at least one allowedDomains entry.
//   - freshnessHours is enforced on publishedAt (see Freshness) and bounds
//     the optional result cache; null means no freshness requirement.
//   - The deadline of one verification is 120 s (Options.Timeout): the
//     provider must answer by then. A call whose provider did not answer
//     in time stores nothing (ErrTimeout). See Deadline budget for the
//     checks of an answer that arrives just before it.
//   - Results are kept 30 days (Options.Retention, PurgeExpired).
//
// # Deadline budget
//
// A provider answer that arrives before the deadline is never thrown away
// for lack of time to check it. The interface document left two ways open:
// reserve checking time inside the deadline (end every provider call
// early enough), or give the checks a bounded grace past it, as storing
// has. The grace is chosen (Options.CheckGrace, 15 s: a capture's budget):
// the provider call is the slow and costly part, and a reserve would cut
// short, and waste, every answer that comes late in the deadline (on a 60 s
// deadline with a 15 s reserve, an answer streamed at 59.5 s would be
// cancelled at 45 s, its cost spent for nothing), while a grace only
// lengthens the few calls that answer late, by at most the grace. So the
// providers end at the deadline; the captures (early ones included) and
// quote checks of an answer in by then may run until the deadline plus the
// grace; a caller whose deadline passes while its answer is being checked
// waits for the checks (a caller that went away does not); and if the
// checks still do not finish, the answer is delivered with the pages it
// could not fetch unchecked (a limitation says so) instead of failing.
// A host therefore gives a verification Timeout plus CheckGrace
// (Engine.CheckGrace): sell's claim offers take that long as their work
// timeout, so that payment challenges stay valid through it. Lookups and
// connects of the captures are bounded well below a capture's budget by
// the snapshot package (a dropped DNS query is asked again after 1 s).
// bench/deadline measures it.
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
//  8. Quote checks (see Snapshots): the pages of cited evidence are
//     captured (or, on quick, fetched) and each excerpt is compared with
//     its page's text.
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
// limitation say so. A date more than a day after the provider answered is
// not trusted as fresh: with a window the item is treated as stale (worse
// than undated, since the date is false), without one as undated. Undated
// items are neither fresh nor stale (their page was fetched during this
// verification and says what it says now); a limitation lists them. Items
// published after asOf are listed in a limitation. Limitations name the
// window by its length ("the 168-hour freshness window"), never by the
// clock, so identical calls give identical prose.
//
// freshnessHours is the caller's target for facts whose truth changes over
// time. A fact is time-sensitive when the provider marks it
// (ProviderFact.TimeSensitive: claims/openai asks the model for the mark,
// claims/corpus sets it), or, when the provider did not say (an older
// model, another provider), when the claim's wording has a present-time cue
// (TimeSensitive: current, latest, today, now, this year…); a fact whose own
// statement has such a cue is time-sensitive whatever the mark says.
//
//	| fact           | counting evidence                   | used for the verdict                         |
//	| time-sensitive | fresh or undated, and stale         | the fresh and undated; stale is named, unused |
//	| time-sensitive | stale only                          | none: insufficient_evidence, with a limitation naming the window |
//	| timeless       | fresh or undated, none on the side of a stale item | fresh and undated; the stale item is superseded (limitation) |
//	| timeless       | fresh or undated agreeing with stale | all                                         |
//	| timeless       | stale only                          | all; confidence at most 0.60 (limitation)    |
//
// So the default of 168 hours makes a historical fact on old pages
// confirmed at 0.60 at most, not inconclusive, while "the current rate"
// resting on a 400-day-old page is insufficient_evidence.
//
// # Snapshots
//
// Only evidence whose quote was compared with its page and found there
// counts (see Verdicts), so the engine fetches the pages of cited evidence
// and checks each excerpt against the page's normalised text with
// snapshot.Snapshot.Contains. Per tier mode, deduplicated by page:
//
//   - none (quick) lists no snapshots: when the Snapshotter is a
//     PageFetcher (snapshot.Service is), the pages of evidence referenced by
//     a fact (or a conflict) and matched to a provider source, at most
//     maxSources, are fetched under the same safety rules and checked; the
//     result lists no snapshots and links none, and a limitation says so.
//     The pages are kept (snapshot.Service.FetchAll stores them) and their
//     ids recorded in Record.PageIDs, so that the verification's evidence
//     bundle carries them. Without a PageFetcher quick-tier quotes stay
//     unchecked and do not count.
//   - cited (standard, deep) captures the pages of evidence referenced by a
//     fact (or a conflict) and matched, those that could count first
//     (admitted by the policy, supporting or contradicting, with an
//     excerpt), cut to the tier's maxSnapshots;
//   - all_sources (research) captures those first, then every other
//     provider source, up to maxSnapshots.
//
// The Snapshotter captures them concurrently under the call's deadline.
// Evidence and provider sources get the snapshotId of the record for their
// page (failed records included); snapshotted is true only for captured
// pages. "Captured" means the snapshot service fetched the page under its
// address policy: a page its SSRF guard refused (loopback, private, a
// redirect to one, a port not allowed) is "blocked" and is evidence of
// nothing. An embedder's HostMap and AllowAddrs (the demo corpus on
// loopback) are that policy, so pages they admit are captured.
//
// Each evidence item's qualityReason starts with exactly one of these
// clauses (Evidence.Quote carries the same, typed), goes on with why its
// source has its type and its dates, and ends with "counted toward the
// verdict" or "not counted: <reasons>" (Evidence.Counted):
//
//	| page                                             | first clause of qualityReason                                  | Quote       |
//	| captured, excerpt found                          | quote verified on snapshot snap_…                              | verified    |
//	| quick: fetched, excerpt found                    | quote verified on the page fetched for this check (not listed…) | verified |
//	| captured (or fetched), excerpt not in its text   | quote not found on the captured page (snapshot snap_…)         | not_found   |
//	| failed (404, 403, timeout, connection)           | not checked, because the capture in snapshot snap_… failed (HTTP 404 Not Found) | not_checked |
//	| blocked by the SSRF guard                        | not checked, because the capture guard refused the page (…)    | not_checked |
//	| too_large / unsupported                          | not checked, because the capture … stopped: the page is too large / the content type is not supported (…) | not_checked |
//	| captured without text (PDF, empty page)          | not checked, because snapshot snap_… has no text to compare with: text not extractable (PDF) | not_checked |
//	| beyond the tier's pages                          | not checked, because the standard tier checks at most 3 pages and this page was not among them | not_checked |
//	| not cited by a fact or conflict / not matched    | not checked, because no atomic fact or conflict cites it / its URL is not among the sources the provider consulted, so its page was not captured | not_checked |
//	| the item has no excerpt                          | not checked, because the item has no excerpt                   | not_checked |
//	| no Snapshotter, or snapshots failed              | not checked, because no snapshotter is configured / the pages could not be fetched (…) | not_checked |
//
// A cited item that would have counted but for its quote is also named in
// a limitation ("The quote of evidence e2 was not checked, because …; it
// was not counted." / "…was not found on its page…"); failure records are
// counted in another ("2 requested source snapshots could not be
// captured; their failure records are included.").
//
// retrievedAt of an evidence item is when its page was fetched, or, when it
// was not, when the provider call returned (observedAt).
//
// # Verdicts
//
// An item counts toward a fact when it is matched to a provider source,
// admitted by the source policy, supports or contradicts (not context), its
// quote was verified on its page (see Snapshots: captured from an address
// the snapshot service allows, or fetched so on quick), and the freshness
// rules let it (see Freshness). Nothing else counts: a page that failed
// (404, 403, time-out), was blocked by the SSRF guard, was too large, of an
// unsupported type, without extractable text, or was never captured, leaves
// its item in the result, uncounted, with a qualityReason and a limitation
// that say why. So no result is confirmed, partially_confirmed or
// contradicted unless at least minimumSources independent sources have
// quotes verified on pages fetched during the call. Independent sources
// are distinct registrable domains (public suffix list: news.bbc.co.uk and
// www.bbc.co.uk are one source). For each fact, with S and C the
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
// Confidence: confirmed and contradicted 0.55 + 0.1 × n (n = the deciding
// independent sources), at most 0.95; partially_confirmed 0.45 + 0.1 × n,
// at most 0.75; ambiguous 0.40; insufficient_evidence at most 0.49; at most
// 0.60 when a timeless fact rests on stale evidence only; never above the
// model's confidence when the model gave the same status. A fact whose
// status differs from the model's says so in its explanation.
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
// # Captures as sources arrive
//
// A provider that streams reports each tool action through
// ProviderQuery.OnSearchCall as soon as it ends. On tiers that take
// snapshots the engine starts capturing the pages of the reported sources
// at once, one Snapshotter.CaptureAll call per page, while the model is
// still writing: on research (all_sources) they are pages the tier captures
// anyway; on standard and deep (cited) the captures are speculative. Either
// way at most the tier's maxSnapshots are started, in the order reported,
// and never for a source on a blocked domain or outside allowedDomains.
// When the answer is in, the pages to check are planned as above; early
// captures of those pages are waited for, the rest are captured in one
// batch, and every early capture the answer does not need is cancelled
// (a snapshot.Service keeps the failure record of a cancelled capture, and
// the record of one that finished before it was cancelled: neither is
// referenced by the result). The result is the one a provider that does
// not stream gets. Quick takes no snapshots and starts nothing early.
//
// # Corroboration
//
// With more than one provider (New's and Options.Providers), the deep and
// research tiers ask every provider concurrently, under the one deadline
// of the call, with the same query; quick and standard ask only the first.
// Each provider call then ends at three quarters of the time left, so that
// one that hangs leaves the others' answer time for its quote checks (it
// fails as timed out, see rule 6).
// No provider's facts are matched to another's (two models word and split
// a claim differently): each answer is reconciled and judged on the
// evidence reached through it, by the rules above (quote checks share the
// tier's snapshot cap, split evenly between the answers, and every answer
// is checked against every captured page). The rules that merge them:
//
//  1. A provider's judgement of the claim is on the supporting side when
//     its status is confirmed or partially_confirmed, on the contradicting
//     side when contradicted, on neither otherwise.
//  2. A fact stays confirmed only when every other answer is on the
//     supporting side (counting evidence reached through each provider
//     supports the claim); otherwise it becomes partially_confirmed. A
//     fact stays contradicted only when every other answer is on the
//     contradicting side; otherwise it becomes insufficient_evidence.
//  3. When one answer is on the supporting side and another on the
//     contradicting side, the providers disagree: every confirmed,
//     partially_confirmed or contradicted fact becomes ambiguous, and (with
//     includeConflicts) a Conflict "Providers disagree: …" lists the
//     counting evidence of both sides.
//  4. Confidence is capped as for the status reached (0.75, 0.40, 0.49),
//     and each fact's explanation ends with the provider its evidence was
//     reached through and, when its status changed, why.
//  5. The facts of every answer are listed (the first provider's first);
//     the top-level status comes from the merged facts by the table above,
//     with independent sources counted over all answers. When it differs
//     from an answer's own status the conclusion says which provider gave
//     what.
//  6. A provider that fails while another answers is not an error: a
//     limitation names it and its failure, and the result rests on the
//     others (with one left, the single-provider rules alone). Its call is
//     still reported to the Observer and accounted. When every provider
//     fails, Verify returns the first one's error.
//
// Provenance names every provider without new properties: provider, model
// and providerResponseId join the answering providers' values with "+"
// ("openai+anthropic"); token and webSearchCallCount counters are summed;
// the source counters count the merged sources once. Evidence ids and
// search-call ids of the answers after the first start with "<provider>:"
// ("anthropic:e1"), so every id stays unique and says where it came from; a
// page reported by several providers is one provider source whose
// searchCallIds name the calls of each (its provider is the first that
// reported it). A limitation "Corroboration: … were asked" lists each
// provider's own verdict; a limitation of one answer that the others do
// not share starts with "<provider>: ". The usage carried in Call.Usage is the sum of the
// calls, with provider and model names joined by "+"; the Observer gets
// every call on its own. The result cache and the collapse of identical
// requests key on the joined provider names.
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
// start-up (claimsstore.Store.ReleaseIdempotencyLeases; the example server does so on
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
