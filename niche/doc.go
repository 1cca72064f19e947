// The niche catalogue, in more detail.
//
// An Engine over a Store ingests signals (evidence), lets curators write
// evaluations (drafts of the interface document's NicheDraft shape),
// scores and publishes them, and serves the public reads: list, search,
// preview and the full evaluation. It knows nothing of HTTP; the server
// package maps its errors to statuses.
//
// # Inputs and their bounds
//
// The inputs that are also request shapes carry their bounds in validate
// tags, stated once: Draft (the NicheDraft), ListOptions and SearchOptions
// (the queries of GET /v1/niches and GET /v1/search), Op (the operation id,
// actor and reason the curator bodies embed) and ModerationRequest. The
// engine checks them on Go values with validator/v10, and the server
// decodes the same types from JSON and query strings with package shapes
// (Pydantic's errors), so a broken bound reads the same on both paths: the
// engine returns an *InvalidError with the field and Pydantic's message
// (q: "String should have at least 3 characters"). The engine's bounds
// are the routes': a search returns 1 to 20 results (0: DefaultLimit,
// 20) for a query of 3 to 150 characters, a list 1 to 100. Unset options
// take their defaults (sort by score, DefaultLimit). Draft's six criteria
// are pointers, since 0 is a valid score: a Go draft without one is
// refused as the JSON draft without the key is. Draft.Normalize trims the
// text before checking it, so a title of spaces is refused by the engine
// with the message of a title too short.
//
// # Choices where the interface document says "not shown"
//
// Evaluation object. Every key is camelCase, nested ones included
// (dimensions, scoreWeights, evidence). The full evaluation carries the
// draft's fields, dimensions, score, scoreVersion, scoreType
// ("editorial_hypothesis": the score is an editorial hypothesis from six
// criteria, not a market-size estimate), scoreWeights, confidence, an
// evidence summary, a trend, the linked evidence, status, revision and
// timestamps, the per-criterion rationale and the review status.
// Evidence is ordered newest observation first and includes the stored
// excerpt with its license and attribution and the page's capture;
// rejected signals are left out.
//
// Score. A Scorer computes an integer 0..100 when an evaluation is
// written; the score is stored with the scorer's version and weights and
// indexed. The default, "editorial-v1", weighs pain 25 %, frequency 20 %,
// willingness to pay 20 %, reachable buyers 15 %, feasibility 10 % and
// competition gap 10 %: score = 5·pain + 4·frequency + 4·wtp + 3·reach +
// 2·feasibility + 2·gap. A custom Scorer's weights must add up to 100
// (New refuses others); a score it returns outside 0..100 is clamped and
// logged rather than refused, so a faulty formula cannot block curation.
// After changing the scorer, Engine.Rescore recomputes every stored score
// (one "rescore" revision per changed evaluation).
//
// Confidence. "high" when the evaluation links at least twice the floor's
// demand pages (6) from at least one more independent domain than the
// floor (3) and one observation is less than 90 days old; "medium" when the
// publication floor is met; "low" otherwise.
//
// Trend. Demand signals observed in the last 30 days against the 30 days
// before, computed at read time. Below TrendMinSignals (10) in those 60
// days the direction is "insufficient_history"; otherwise "rising" when
// the recent count exceeds 1.5 × the previous one, "falling" in the
// opposite case, "stable" between. Only ObservedAt counts — when the
// source says the item happened — never the ingestion time.
//
// Signals. Kinds are complaint, question, review, job_post,
// feature_request, forum_post (demand) and news_report, regulatory_notice,
// recall_notice, market_report (context). A signal is deduplicated by
// (origin, externalId); externalId defaults to the source URL. Its
// sourceDomain is the registrable domain of the URL (public-suffix list),
// so www.example.com, forum.example.com and example.com are one source.
// Moderation states are pending, accepted and rejected; linking a pending
// signal to an evaluation accepts it, and rejected signals cannot be
// linked.
//
// Curation. Create, Revise, Publish and Withdraw take an Op: an operation
// id (same id and same input returns the stored result, same id and other
// input fails with ErrOperationConflict), the actor and a reason, all kept
// in the revision log. Revise, Publish and Withdraw take the expected
// revision (optimistic concurrency: ErrConflict when another write came
// first). Publishing requires at least 3 demand signals on distinct pages
// from at least 2 independent registrable domains (both configurable).
// Pages are compared by urlnorm.Key of the source URL — scheme, host
// case, "www.", default port, fragment, trailing slash, tracking
// parameters and query order do not matter — so one page collected twice,
// or by two origins, counts once (EvidenceSummary.DemandPageCount).
// Unknown or rejected signal ids are refused with an error naming them,
// checked again by the store when it commits (so a concurrent rejection
// cannot slip in). A published evaluation stays published through
// revisions (which must keep meeting the floor); only Withdraw hides it —
// or the engine itself: when a moderator rejects a signal, every published
// evaluation linking it whose remaining evidence no longer meets the floor
// is withdrawn at once, with a revision by SystemActor ("system") whose
// reason names the signal, the moderator and the remaining evidence (the
// behaviour a buyer expects: nothing stays on sale on evidence that was
// thrown out). Rejected signals never count: evidence summaries and the
// preview's signalCount count the linked signals that are not rejected.
// Accepting a signal again restores the counts but republishes nothing.
//
// Checkable evidence. With Options.Capturer (a *snapshot.Service, behind
// a small interface so that this package imports no HTTP code), the source
// page of every signal an evaluation links is captured when the
// evaluation is created, revised or published — "when a signal is added"
// is read as added to an evaluation, since collectors ingest far more
// signals than curators keep — once per distinct URL, and never again
// once captured (a failed capture is tried again at the next write). The
// capture record (the EvidenceSnapshot fields: snapshotId, requestedUrl,
// finalUrl, retrievedAt, status, httpStatus, contentType, contentLength,
// rawSha256, normalizedSha256, failureReason) is stored with the signal
// and listed with each evidence item (snapshotId, captureStatus,
// captureReason, snapshot); the snapshot routes serve its record,
// content and WARC. A page that cannot be captured is listed with its
// status and reason, not dropped, and by default does not count toward
// the publication floor (Options.CountUncaptured counts it). Captures
// follow the evaluation's lifecycle rather than the snapshot retention
// (30 days, for claims): the engine holds them (snapshot.HoldStore) while
// a draft or published evaluation links the signal, and releases them
// after a withdrawal, an unlinking revision or a rejection
// (ReleaseEvidence); the snapshot purger then removes them once older
// than its retention. The bulk import's up-front check of the floor
// counts every page (nothing is captured before the drafts are created);
// each draft's creation then applies the captured-only floor, a failure
// being reported in its line. Without a Capturer every evidence item says
// "not_captured" and the floor counts every page.
//
// Reviewable scores. A draft may carry a short rationale per criterion
// (Draft.Rationale, 10 to 300 characters each), stored with the
// evaluation, kept in every revision's state and shown with the score.
// Each evaluation shows its review: the time and actor of the last
// curator create, revise or publish (rescores and withdrawals are not
// reviews), "reviewed" until Options.ReviewInterval (180 days) has passed,
// then "review_due"; "unreviewed" when none is recorded.
//
// Access. The public reads (List, Search without Full, Preview) return
// Preview values: a separate type filled from an allow-list (id, title,
// buyer, category, score, scoreVersion, scoreType, signal count and a
// problem teaser cut at a word boundary). Stores serve them from a
// Listing, which holds only the allow-listed columns: the hypothesis,
// notes, criteria and evidence are not even read for a public read.
// Drafts and withdrawn evaluations are not found by any public read.
//
// Search. The query is normalised in Go (Language.SearchText: NFKC, lower
// case, diacritics removed, punctuation stripped, every word stemmed) into
// at most 16 distinct terms that must all match (AND). Stores index the
// same stemmed text, so word forms match each other on every store and at
// every level: landlord finds landlords, invoice finds invoicing. The
// rules are English (Snowball's Porter2 plus a short list of trade nouns
// folded into their trade: plumber matches plumbing) unless a host sets
// Options.Language and its store's language to another Snowball language
// or NoStemming; stemming is done in Go rather than by the databases'
// own dictionaries so that SQLite, PostgreSQL and nichemem index exactly
// the same terms. This is deliberately not a query language:
// quotes, minus signs and operators such as OR are punctuation and
// dropped ("-foo" requires foo), so SQLite's FTS5 and PostgreSQL receive
// the same plain list of words (FTS5 as quoted terms, PostgreSQL through
// plainto_tsquery of the normalised words rather than websearch_to_tsquery,
// whose phrase and exclusion semantics FTS5 does not share) and return
// exactly the same matches; phrases only raise relevance (see Relevance).
//
// Search levels. What a search may match depends on what the caller may
// read, so that the paid text can never be probed word by word. A
// preview-level search (List, Search without Full: anonymous callers)
// matches and ranks on what a preview shows — the title, the problem
// teaser (its first 160 characters, see Options.TeaserLength), the buyer
// and the category. A full-level search (Search with Full, ListOptions
// Full: subscribers and paid calls) matches the title, the whole problem,
// buyer, category and the solution hypothesis. The evaluation notes are
// never indexed. Stores index both levels (SearchFields).
//
// Ranking. Stores return the matching candidates; the engine ranks them
// here with Relevance (version "relevance-v1"), then the requested sort,
// then the id, so every store returns the same results in the same order.
// By default the engine answers from its own in-memory search index
// instead (SearchRow, Options.DisableSearchIndex), under the same
// contract, so that a search costs tens of microseconds and no database
// query whatever the backend: postings per word and level by age,
// each with the word's relevance; one pass over at most SearchWindow
// matches keeping the best page in a bounded sorted slice; a pointer-free
// layout the garbage collector does not scan; loaded in the background
// (searches ask the store until then); consistency with other instances
// through a change feed the store keeps (ChangeFeed: each change of a
// search row numbered in commit order, applied incrementally, announced
// by PostgreSQL's LISTEN/NOTIFY). The design and its trade-offs are
// written at the top of index.go.
// When more than SearchCandidates (300) evaluations match, the store ranks
// the newest SearchWindow (2000) matches itself, with the same Relevance
// formula written in SQL, then the sort, then the id, passes on the best
// of them (the page's worth: CandidateQuery.Top), and the result says
// truncated: the cost stays bounded however broad
// the query, SQLite and PostgreSQL still agree (the conformance suite
// compares truncated searches exactly), but older matches are not
// considered. Adding a word narrows such queries. How a store finds the
// matches is its own business as long as they are exactly the evaluations
// whose text of the search's level has every word (the SQLite store
// checks words found in most evaluations, such as "for" or "owners", on
// the candidates' text instead of intersecting their long index lists).
//
// Result cache. With Options.SearchCacheTTL set, List and Search results
// are kept for that long, keyed by the normalised query, category, sort,
// limit and access level, and concurrent identical reads share one store
// call. Every write through the engine (curation, ingestion, moderation)
// clears the cache at once; writes made by other instances sharing the
// database show after at most the TTL. It is off by default; a few
// seconds absorb bursts of the same popular queries.
//
// Unlock tokens. See UnlockSigner.
package niche
