// Package corpus is an offline claims.SearchProvider over a local document
// collection, with an embedded demo collection and a loopback HTTP server
// that serves the documents under their own URLs, so that the claims
// engine's snapshots of them are real HTTP captures.
//
// It exists for demos, tests and air-gapped evaluation. It is labelled in
// everything it returns: provider "corpus", model "bm25-lexical-v1",
// sources "corpus_web_search", and the limitation "Results come from an
// offline demo corpus of N documents served on loopback, not the live
// web." It never invents: every source is a document of the collection,
// every excerpt is an exact sentence of that document's visible text, and
// when its rule cannot tell it answers insufficient_evidence or ambiguous.
//
// A search of the collection is a search call, but not a web search: the
// provider reports Capabilities().Offline, so the claims engine's
// provenance says searchedWeb false and webSearchCallCount 0 (its "search"
// and "open_page" actions still appear, with their ids and queries, in the
// providerSources), accounts no per-call search fee, and adds the
// limitation "The provider (corpus) searched a local document collection,
// not the web (N tool actions); searchedWeb is false and
// webSearchCallCount is 0." The interface document says searchedWeb is
// true only if a search call happened; it names no local search, so the
// stricter reading was chosen: a caller who sees searchedWeb true may
// assume the live web was consulted.
//
// # Collections
//
// Demo returns the embedded demo collection: 52 short documents written for
// assay on five topics (blockchain networks, HTTP standards, geography,
// physics, public health), of kinds official, academic, news, reference and
// forum. Some contradict each other, some are stale (superseded figures,
// obsoleted RFCs, old guidelines), several share a registrable domain
// (docs.base.example and blog.base.example; three RFCs on
// www.rfc-archive.example; two forum threads on forum.cryptochat.example),
// one forum post carries a prompt-injection line. All hosts are under the
// reserved .example top-level domain, so no capture can reach a real site;
// publishers named after real organisations carry "(demo)": the text is
// ours, not theirs.
//
// Load reads a user's own collection from an fs.FS: Markdown or HTML files
// with a front-matter block (url, title, publisher, publishedAt, kind); see
// Load for the format. URLs must be http:// on port 80 because the loopback
// server speaks plain HTTP.
//
// # Search
//
// One Search is one "search" action followed by "open_page" actions, never
// more than the query's tool budget (MaxToolActions, or the tier's; 1 when
// neither is set):
//
//  1. Atomic facts: the claim is split at ";" and at " and " when both sides
//     contain a linking verb (is, are, has, uses, defines, ...) or a digit;
//     a right side that starts with its verb borrows the left side's
//     subject. Each fact becomes one query of the search action.
//  2. Candidates: documents outside the allowed domains or inside the
//     blocked domains (host equal to or under the domain), documents
//     published after asOf, and, under sourcePolicy official_only,
//     documents not of kind official are not searched. authoritative and
//     open_web search everything (the kind weights below already prefer
//     official and academic sources).
//  3. Retrieval: BM25 (k1 1.2, b 0.75) over title (counted twice) and
//     body, terms lowercased, stop words removed, words truncated to five
//     letters ("vaccination" and "vaccine" are both "vacci"), a few
//     synonyms folded (tall, high, elevation → height). Each fact retrieves
//     6 documents; the lists are merged round-robin up to 10: the sources
//     of the search action.
//  4. Reading: of every result the provider first reads its search snippet,
//     the 2 sentences with the most query weight (idf). It then opens (one
//     open_page action each) up to MaxToolActions−1 results, those whose
//     snippet takes a stance on a fact first, then those whose snippet is
//     context, each group by rank, and reads every sentence of them. A
//     document quoted from its snippet alone appears only as a source of
//     the search action. Quick (1 action) therefore judges snippets only.
//  5. Stance: every sentence read is judged against every fact (see Stance
//     rule). Each document contributes at most its first supporting and
//     first contradicting sentence per fact, and otherwise its best context
//     sentence.
//  6. Verdict per fact, from every stance passage read (see Verdicts).
//  7. Evidence: at most maxSources items, chosen so that they show the
//     verdicts: for each fact the heaviest passage of its winning side
//     (both sides when ambiguous), then of its losing side, then the other
//     stance passages heaviest first, then one context passage per
//     remaining document. A fact none of whose stance passages fits is
//     reported as insufficient_evidence. qualityReason states the kind,
//     publisher, BM25 rank, whether the page was opened, the publication
//     date, staleness against freshnessHours and the rule that fired.
//
// # Stance rule
//
// The sentence is cut into clauses at ";", ", while", ", whereas", ", but",
// ", and". A clause bears on a fact only if it contains every key term of
// the fact: its words minus stop words, weak verbs (uses, has, means, ...),
// numbers, unit words after numbers and month names next to numbers; "RFC
// 9110" is the single key term "rfc9110", so RFC 7231 is another subject.
// Negation (not, no, never, none, false, myth, n't, ...) counts only when it
// stands in a comma-delimited segment together with a key term or a number
// of the fact, so "Canberra, not Sydney, is the capital" does not negate
// the capital. Numbers carry a unit: the first unit word after them
// (metres, km, %, °C, decimals, doses, minutes, ...), "year" for a bare
// 1800–2100, "dayofmonth" next to a month, or none.
//
//	fact without numbers, same polarity              supports
//	fact without numbers, opposite polarity          contradicts
//	every number present (same value, same unit)     supports; opposite polarity: contradicts
//	a number missing, another value in its unit      contradicts (not when negated)
//	clauses that support and contradict              context
//	no clause bears, sentence has ≥ 60 % of the keys context
//	otherwise                                        no stance
//
// Values are compared at the coarser precision (8,849 equals 8,848.86;
// 8,848 does not) or within 2 % when either is approximate ("about 97%"
// equals 96%).
//
// # Verdicts
//
// Official and academic sources weigh 3, reference and news 2, forum and
// other 1; a document more than five years older than the newest document
// taking a side on the fact weighs half. With the support weight ws and the
// contradiction weight wc of a fact:
//
//	ws > 0, wc = 0           confirmed
//	wc > 0, ws = 0           contradicted
//	ws ≥ 2·wc > 0            confirmed, with a conflict
//	wc ≥ 2·ws > 0            contradicted, with a conflict
//	both, neither twice      ambiguous, with a conflict
//	neither                  insufficient_evidence
//
// Confidence is 0.5 + 0.4·(win−lose)/(win+lose)·min(1, win/6) when decided,
// 0.3 when ambiguous, 0 without evidence. The claim's status: all facts
// confirmed → confirmed; some confirmed → partially_confirmed; otherwise
// any contradicted → contradicted; otherwise any ambiguous → ambiguous;
// otherwise insufficient_evidence.
//
// Each atomic fact carries timeSensitive, set by claims.TimeSensitive (the
// present-time cues current, latest, today, now, this year…): the claims
// engine then counts only evidence within the freshness window for it.
//
// Limitations always say that the corpus is not the live web and that the
// rule is lexical; they also report unopened results, evidence left out by
// maxSources, evidence older than the freshness window (freshnessHours is
// reported here and enforced by the claims engine), documents excluded by asOf, official_only,
// allowed domains matching nothing, a jurisdiction (not used) and a
// response language other than English (not honoured). Raw is a JSON trace
// of facts, key terms, BM25 scores, what was read and the weights.
// MaxOutputTokens is ignored. Usage is zero: no model is called.
//
// Known limits of the lexical rule: implicit subjects ("It is 8,849 m
// tall") and paraphrases ("stands" for "is tall") are not recognised, so
// such passages are at best context; a clause listing two values of
// related quantities in one unit can contradict wrongly; "A rather than B"
// is not understood.
//
// # Demo claims
//
// At every tier the demo collection answers (tested in TestDemoClaims and
// TestEveryTier; these are the provider's own verdicts: through the claims
// engine a verdict also needs minimumSources independent sources, admitted
// by the source policy, whose quotes were verified on their captured
// pages, so some of them end insufficient_evidence there; the README's
// "Demo claims" table lists engine verdicts, tested by examples/verify):
//
//	Base mainnet uses chain ID 8453.                                         confirmed (a forum post says 8543: conflict)
//	Base mainnet uses chain ID 8543.                                         contradicted
//	Base Sepolia uses chain ID 84532.                                        confirmed
//	USDC on Base has 6 decimals.                                             confirmed (a forum post says 18: conflict)
//	Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals.        partially_confirmed
//	HTTP status code 402 means Payment Required.                             confirmed (conflict with a forum answer)
//	RFC 9110 was published in June 2022.                                     confirmed
//	RFC 9110 was published in 2019.                                          contradicted
//	Mount Everest is 8,849 metres tall.                                      confirmed (8,848.86 m; stale 8,848 m and a forum 8,850 m disagree)
//	Mount Everest is 8,848 metres tall.                                      contradicted (only a 2012 atlas supports it)
//	Canberra is the capital of Australia.                                    confirmed
//	Sydney is the capital of Australia.                                      contradicted
//	The Nile is the longest river in the world.                              ambiguous (reference for, academic study against)
//	Lake Baikal has a maximum depth of 1,642 metres.                         confirmed (an old atlas says 1,620 m)
//	The speed of light in vacuum is 299,792,458 metres per second.           confirmed
//	The kilogram is defined by the international prototype kept near Paris.  contradicted (stale notes support it)
//	Water boils at 100 °C at sea level.                                      confirmed
//	Two doses of the MMR vaccine are about 97% effective against measles.    confirmed (a forum post says 50%)
//	Adults should do at least 150 minutes of moderate-intensity physical activity per week.  confirmed
//	Adults should consume less than 5 grams of salt per day.                 confirmed
//	The Eiffel Tower is 330 metres tall.                                     insufficient_evidence (not in the corpus)
//
// # Serving
//
// Collection.Handler serves each document by Host header and path
// (Markdown rendered to simple HTML in which every block is one element, so
// every sentence is found verbatim by any text extraction; HTML as
// written). It also answers the forms a URL canonicaliser may produce: the
// host with "www." dropped or added, the path with a trailing "/". Serve
// starts it on 127.0.0.1 at a free port and returns a LoopbackServer whose
// HostMap ("docs.base.example:80" and "www.docs.base.example:80" →
// "127.0.0.1:PORT") and AllowList ("127.0.0.1:PORT") configure the snapshot
// capturer to capture the corpus URLs for real.
package corpus
