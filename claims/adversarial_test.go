package claims_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/snapshotstore"
)

// The adversarial table: provider answers an attacker (or a careless
// model) could produce, through the real claims/openai provider (Responses
// API payloads in the recorded shape, served over httptest) and the real
// engine, with the cited pages served on loopback through the snapshot
// service's public options (HostMap, AllowAddrs, Resolver, DialControl),
// as an embedder wires them. One row per rule of the verdict table: none
// may be confirmed, partially_confirmed or contradicted on evidence whose
// quote was not verified on a page captured from an address the snapshot
// service allows.

const (
	wageClaim   = "Exampleton's minimum wage is $18.00 per hour."
	wageQuote   = "The minimum wage in Exampleton is $18.00 per hour."
	wagePage    = "City of Exampleton. Notice. The minimum wage in Exampleton is $18.00 per hour. It applies to all employers."
	goodURL     = "http://www.exampleton.gov/wage"
	secondURL   = "http://www.wagecommission.gov/rates"
	oppositeURL = "http://www.labour-exampleton.gov/rates"
)

// adversarialSite serves the pages of the table on one loopback server;
// the capturer reaches it through HostMap for every public-looking host.
// Three hosts resolve to refused addresses (loopback not allow-listed,
// private, link-local behind a redirect).
type adversarialSite struct {
	srv  *httptest.Server
	wire *snapshottest.Tripwire
}

// mappedHosts are the hosts HostMap sends to the loopback site.
var mappedHosts = []string{
	"www.exampleton.gov", "www.wagecommission.gov", "www.labour-exampleton.gov", "www.treasury-exampleton.gov",
	"www.census-exampleton.gov", "www.courts-exampleton.gov", "www.redirector-exampleton.gov",
}

func newAdversarialSite(t *testing.T) *adversarialSite {
	t.Helper()
	mux := http.NewServeMux()
	page := func(text string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>Notice</title><p>%s</p>", text)
		}
	}
	mux.Handle("www.exampleton.gov/", page(wagePage))
	mux.Handle("www.wagecommission.gov/rates", page("Wage commission. The minimum wage in Exampleton is $18.00 per hour since November."))
	mux.Handle("www.labour-exampleton.gov/rates", page("Labour office. The minimum wage in Exampleton is $18.00 per hour for all employers."))
	mux.Handle("www.treasury-exampleton.gov/rates", page("Treasury. The minimum wage in Exampleton is $18.00 per hour."))
	mux.Handle("www.census-exampleton.gov/rates", page("Census bureau. The minimum wage in Exampleton is $18.00 per hour."))
	// The page the fourth, uncheckable source of a larger minimumSources
	// stands for: it says the opposite of the invented quote.
	mux.Handle("www.courts-exampleton.gov/ruling", page("Court ruling. The minimum wage in Exampleton remains $15.00 per hour; the $18.00 ordinance was struck down."))
	mux.HandleFunc("www.wagecommission.gov/missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("www.wagecommission.gov/forbidden", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	})
	mux.HandleFunc("www.wagecommission.gov/slow", func(w http.ResponseWriter, r *http.Request) {
		select { // answers only after the capture gave up
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("www.wagecommission.gov/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>%s</p>%s", wageQuote, strings.Repeat("<p>padding</p>", 2000))
	})
	mux.HandleFunc("www.wagecommission.gov/chart.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n" + wageQuote))
	})
	mux.HandleFunc("www.redirector-exampleton.gov/wage", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.exampleton-cloud.gov/latest/wage", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	wire := &snapshottest.Tripwire{}
	t.Cleanup(func() {
		if d := wire.Denied(); len(d) > 0 {
			t.Errorf("a capture tried to dial off loopback: %v", d)
		}
	})
	return &adversarialSite{srv: srv, wire: wire}
}

// snapshotOptions are the options an embedder serving pages on loopback
// uses: HostMap to the site, AllowAddrs for its one address, a table
// resolver (no DNS) and the tripwire.
func (s *adversarialSite) snapshotOptions() *snapshot.Options {
	addr := s.srv.Listener.Addr().String()
	hm := map[string]string{}
	for _, h := range mappedHosts {
		hm[h+":80"] = addr
	}
	return &snapshot.Options{
		HostMap:    hm,
		AllowAddrs: []string{addr},
		Resolver: snapshottest.Resolver(map[string][]string{
			"intranet.exampleton-city.gov":  {"127.0.0.1"},       // loopback, not allow-listed
			"files.exampleton-city.gov":     {"10.20.30.40"},     // private
			"metadata.exampleton-cloud.gov": {"169.254.169.254"}, // link-local, behind a redirect
		}),
		DialControl:    s.wire.Control,
		CaptureTimeout: 400 * time.Millisecond,
		Retries:        -1,
		MaxBytes:       8 << 10,
	}
}

// ev is an evidence item of a scripted analysis.
type ev struct {
	id, url, excerpt, rel string
	published             *string
}

// fact is an atomic fact of a scripted analysis; sensitive nil leaves the
// timeSensitive property out (an answer of an older model).
type fact struct {
	statement string
	ids       []string
	sensitive *bool
}

func date(s string) *string { return &s }

// responsesBody is a Responses API object in the recorded shape
// (testdata/responses/success.json of claims/openai): a search call whose
// sources are every evidence URL, then the assistant message with the
// analysis as output_text.
func responsesBody(t *testing.T, id string, evs []ev, facts []fact) []byte {
	t.Helper()
	type source struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	var sources []source
	seen := map[string]bool{}
	var evidence []map[string]any
	for _, e := range evs {
		if !seen[e.url] {
			seen[e.url] = true
			sources = append(sources, source{"url", e.url})
		}
		var pub any
		if e.published != nil {
			pub = *e.published
		}
		evidence = append(evidence, map[string]any{"id": e.id, "url": e.url, "title": "Notice", "publisher": "Exampleton",
			"publishedAt": pub, "excerpt": e.excerpt, "relationship": e.rel, "sourceType": "official", "qualityReason": "Official page."})
	}
	var atomic []map[string]any
	for _, f := range facts {
		m := map[string]any{"statement": f.statement, "status": "confirmed", "confidence": 0.9,
			"explanation": "The sources state it.", "evidenceIds": f.ids}
		if f.sensitive != nil {
			m["timeSensitive"] = *f.sensitive
		}
		atomic = append(atomic, m)
	}
	analysis, err := json.Marshal(map[string]any{"status": "confirmed", "conclusion": "Confirmed by official sources.",
		"atomicFacts": atomic, "evidence": evidence, "conflicts": []any{}, "limitations": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"id": id, "object": "response", "created_at": 1795336765, "status": "completed", "error": nil, "incomplete_details": nil,
		"model": "gpt-5-mini-2025-08-07",
		"output": []any{
			map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}},
			map[string]any{"type": "web_search_call", "id": "ws_1", "status": "completed",
				"action": map[string]any{"type": "search", "query": "exampleton minimum wage", "queries": []string{"exampleton minimum wage"}, "sources": sources}},
			map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": string(analysis)}}},
		},
		"usage": map[string]any{"input_tokens": 21480, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 1812, "output_tokens_details": map[string]any{"reasoning_tokens": 1104}, "total_tokens": 23292},
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// responsesAPI serves body on POST /v1/responses, as the stream the
// provider asks for (one response.completed event carrying it), and counts
// the calls.
func responsesAPI(t *testing.T, body []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatal(err)
	}
	body = []byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":0,\"response\":" + compact.String() + "}\n\n")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// advRow is one row of the adversarial table.
type advRow struct {
	name   string
	tier   string
	claim  string
	mutate func(*claims.Request)
	evs    []ev
	facts  []fact
	// want
	status    claims.Status
	maxConf   float64 // of the first fact
	limitIn   string
	e2Reason  string // prefix of e2's qualityReason ("" to skip)
	refused   string // the engine refuses before any provider call
	snapshots int    // records in the result
}

func TestAdversarialAnswers(t *testing.T) {
	site := newAdversarialSite(t)
	yes := true
	fresh := date("2026-11-20")
	good := ev{"e1", goodURL, wageQuote, "supports", fresh}
	second := func(url string) ev { return ev{"e2", url, wageQuote, "supports", fresh} }
	oneFact := []fact{{statement: wageClaim, ids: []string{"e1", "e2"}}}
	// unchecked is a row whose second page cannot be checked: e1 alone
	// counts, one independent source of the two required.
	unchecked := func(name, url, limitIn, e2Reason string) advRow {
		return advRow{name: name, evs: []ev{good, second(url)}, facts: oneFact, status: claims.StatusInsufficientEvidence,
			maxConf: 0.49, snapshots: 2, limitIn: limitIn, e2Reason: e2Reason}
	}
	const failedCapture = "not checked, because the capture in snapshot snap_"
	tests := []advRow{
		{name: "control: two verified pages", evs: []ev{good, second(secondURL)}, facts: oneFact,
			status: claims.StatusConfirmed, maxConf: 0.75, e2Reason: "quote verified on snapshot snap_", snapshots: 2},
		unchecked("404", "http://www.wagecommission.gov/missing", "failed (HTTP 404 Not Found); it was not counted.", failedCapture),
		unchecked("403", "http://www.wagecommission.gov/forbidden", "failed (HTTP 403 Forbidden); it was not counted.", failedCapture),
		unchecked("timeout", "http://www.wagecommission.gov/slow", "failed (timed out", failedCapture),
		unchecked("too_large", "http://www.wagecommission.gov/huge", "stopped: the page is too large", failedCapture),
		unchecked("unsupported", "http://www.wagecommission.gov/chart.png", "stopped: the content type is not supported", failedCapture),
		{name: "never captured: beyond the 3 pages standard checks",
			evs: []ev{good, {"e2", "http://www.exampleton.gov/wage-2", wageQuote, "supports", fresh},
				{"e3", "http://www.exampleton.gov/wage-3", wageQuote, "supports", fresh}, {"e4", secondURL, wageQuote, "supports", fresh}},
			facts:  []fact{{statement: wageClaim, ids: []string{"e1", "e2", "e3", "e4"}}},
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 3,
			limitIn: "The quote of evidence e4 was not checked, because the standard tier checks at most 3 pages and this page was not among them; it was not counted."},
		unchecked("SSRF: loopback address not allow-listed", "http://intranet.exampleton-city.gov/wage",
			"The quote of evidence e2 was not checked, because the capture guard refused the page (address 127.0.0.1 is loopback",
			"not checked, because the capture guard refused the page (address 127.0.0.1 is loopback"),
		unchecked("SSRF: private address", "http://files.exampleton-city.gov/wage",
			"refused the page (address 10.20.30.40 is private", "not checked, because the capture guard refused the page (address 10.20.30.40 is private"),
		unchecked("SSRF: redirect to a private address", "http://www.redirector-exampleton.gov/wage",
			"refused the page (redirect to http://metadata.exampleton-cloud.gov/latest/wage refused",
			"not checked, because the capture guard refused the page (redirect to http://metadata.exampleton-cloud.gov/latest/wage refused"),
		{name: "minimumSources 4 on standard, the fourth quote invented", mutate: func(r *claims.Request) { r.MinimumSources = 4 },
			evs: []ev{good, second(secondURL), {"e3", oppositeURL, wageQuote, "supports", fresh},
				{"e4", "http://www.courts-exampleton.gov/ruling", wageQuote, "supports", fresh}},
			facts:   []fact{{statement: wageClaim, ids: []string{"e1", "e2", "e3", "e4"}}},
			refused: "The standard tier checks quotes on at most 3 captured pages; minimumSources (4) cannot be met; the deep tier checks up to 8"},
		{name: "minimumSources 4 on deep, the fourth quote invented", tier: claims.Deep, mutate: func(r *claims.Request) { r.MinimumSources = 4 },
			evs: []ev{good, second(secondURL), {"e3", oppositeURL, wageQuote, "supports", fresh},
				{"e4", "http://www.courts-exampleton.gov/ruling", wageQuote, "supports", fresh}},
			facts:  []fact{{statement: wageClaim, ids: []string{"e1", "e2", "e3", "e4"}}},
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 4,
			limitIn: "The quote of evidence e4 was not found on its page; it was not counted."},
		{name: "future-dated source for a present-state claim", claim: "Exampleton's current minimum wage is $18.00 per hour.",
			evs: []ev{good, {"e2", secondURL, wageQuote, "supports", date("2027-03-01")}}, facts: oneFact,
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 2,
			limitIn:  "Evidence e2 carried a publication date more than a day in the future; the date was not trusted",
			e2Reason: "quote verified on snapshot snap_"},
		{name: "future-dated sources for a timeless claim",
			evs: []ev{{"e1", goodURL, wageQuote, "supports", date("2027-03-01")}, {"e2", secondURL, wageQuote, "supports", date("2027-03-01")}}, facts: oneFact,
			status: claims.StatusConfirmed, maxConf: 0.60, snapshots: 2, limitIn: "Atomic fact 1 rests only on evidence older than the freshness window; its confidence is capped at 0.60."},
		{name: "present-state claim, 400-day-old sources, freshnessHours 24 (unmarked answer)",
			claim:  "Exampleton's current minimum wage is $18.00 per hour.",
			mutate: func(r *claims.Request) { r.FreshnessHours = field.Value(24) },
			evs:    []ev{{"e1", goodURL, wageQuote, "supports", date("2025-10-18")}, {"e2", secondURL, wageQuote, "supports", date("2025-10-18")}},
			facts:  []fact{{statement: "The minimum wage is $18.00 per hour.", ids: []string{"e1", "e2"}}},
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 2,
			limitIn: "Atomic fact 1 concerns a state that changes over time and rests only on evidence older than the 24-hour freshness window (e1, e2); it is insufficient_evidence."},
		{name: "present-state fact marked by the provider, freshnessHours 24",
			mutate: func(r *claims.Request) { r.FreshnessHours = field.Value(24) },
			evs:    []ev{{"e1", goodURL, wageQuote, "supports", date("2025-10-18")}, {"e2", secondURL, wageQuote, "supports", date("2025-10-18")}},
			facts:  []fact{{statement: wageClaim, ids: []string{"e1", "e2"}, sensitive: &yes}},
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 2,
			limitIn: "rests only on evidence older than the 24-hour freshness window"},
		{name: "quick: quotes checked on pages fetched and not listed", tier: claims.Quick,
			evs: []ev{good, second(secondURL)}, facts: oneFact,
			status: claims.StatusConfirmed, maxConf: 0.75, snapshots: 0,
			limitIn:  "On the quick tier quotes are checked on pages fetched for this verification; they are not listed as snapshots",
			e2Reason: "quote verified on the page fetched for this check (not listed: the quick tier lists no snapshots; kept for the evidence bundle)"},
		{name: "quick: an invented quote does not count", tier: claims.Quick,
			evs: []ev{good, {"e2", "http://www.courts-exampleton.gov/ruling", wageQuote, "supports", fresh}}, facts: oneFact,
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 0,
			limitIn:  "The quote of evidence e2 was not found on its page; it was not counted.",
			e2Reason: "quote not found on the page fetched for this check"},
		{name: "quick: SSRF-blocked page", tier: claims.Quick,
			evs: []ev{good, second("http://files.exampleton-city.gov/wage")}, facts: oneFact,
			status: claims.StatusInsufficientEvidence, maxConf: 0.49, snapshots: 0,
			e2Reason: "not checked, because the capture guard refused the page (address 10.20.30.40 is private"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			api, calls := responsesAPI(t, responsesBody(t, fmt.Sprintf("resp_adv_%02d", i), tc.evs, tc.facts))
			provider, err := openai.New(&openai.Options{APIKey: "sk-test", BaseURL: api.URL + "/v1", HTTPClient: api.Client(),
				Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			db := emptyDB.Open(t, nil)
			records := snapshotstore.New(db)
			snaps, err := snapshot.NewService(records, records, site.snapshotOptions())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(snaps.Close)
			engine, err := claims.New(provider, claimsstore.New(db), snaps, &claims.Options{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			var req claims.Request
			req.SetDefaults()
			req.Claim = wageClaim
			if tc.claim != "" {
				req.Claim = tc.claim
			}
			if tc.mutate != nil {
				tc.mutate(&req)
			}
			tier := tc.tier
			if tier == "" {
				tier = claims.Standard
			}
			if tc.refused != "" {
				_, cerr := engine.Check(tier, &req)
				_, err := engine.Verify(ctx, tier, &req, nil)
				var re *claims.RequestError
				if !errors.As(cerr, &re) || re.Msg != tc.refused || !errors.As(err, &re) || calls.Load() != 0 {
					t.Fatalf("Check: %v; Verify: %v; provider calls %d; want %q before any call", cerr, err, calls.Load(), tc.refused)
				}
				t.Logf("refused before payment (422): %s", re.Msg)
				return
			}
			res, err := engine.Verify(ctx, tier, &req, nil)
			if err != nil {
				t.Fatal(err)
			}
			validate(t, res)
			conf := res.AtomicFacts[0].Confidence
			if res.Status != tc.status || conf > tc.maxConf || len(res.Snapshots) != tc.snapshots {
				t.Fatalf("status %s confidence %.2f snapshots %d, want %s ≤ %.2f %d; limitations %q",
					res.Status, conf, len(res.Snapshots), tc.status, tc.maxConf, tc.snapshots, res.Limitations)
			}
			if tc.limitIn != "" && !hasLimitation(res, tc.limitIn) {
				t.Errorf("no limitation %q in %q", tc.limitIn, res.Limitations)
			}
			byID := evidenceByID(res)
			if tc.e2Reason != "" && !strings.HasPrefix(byID["e2"].QualityReason, tc.e2Reason) {
				t.Errorf("e2 qualityReason %q, want it to start with %q", byID["e2"].QualityReason, tc.e2Reason)
			}
			checkCountedEvidence(t, tier, res)
			var note string
			for _, l := range res.Limitations {
				if tc.limitIn != "" && strings.Contains(l, tc.limitIn) {
					note = l
				}
			}
			t.Logf("%s, confidence %.2f; %s", res.Status, conf, note)
		})
	}
}

// checkCountedEvidence asserts the rule on every item: one that counted
// has its quote verified, on a captured snapshot on tiers that take them;
// every page the guard blocked is absent from the counting evidence; and
// the first clause of qualityReason agrees with Quote.
func checkCountedEvidence(t *testing.T, tier string, res *claims.Result) {
	t.Helper()
	snaps := map[string]snapshot.Snapshot{}
	for _, s := range res.Snapshots {
		snaps[s.ID] = s
	}
	tr, _ := claims.TierByName(tier)
	for _, e := range res.Evidence {
		prefix := map[claims.QuoteCheck]string{claims.QuoteVerified: "quote verified on ", claims.QuoteNotFound: "quote not found on ",
			claims.QuoteNotChecked: "not checked, because "}[e.Quote]
		if prefix == "" || !strings.HasPrefix(e.QualityReason, prefix) {
			t.Errorf("%s: Quote %q but qualityReason %q", e.ID, e.Quote, e.QualityReason)
		}
		if strings.HasSuffix(e.QualityReason, "; counted toward the verdict") != e.Counted {
			t.Errorf("%s: Counted %v but qualityReason %q", e.ID, e.Counted, e.QualityReason)
		}
		if !e.Counted {
			continue
		}
		if e.Quote != claims.QuoteVerified {
			t.Errorf("%s counted with quote %s", e.ID, e.Quote)
		}
		if tr.SnapshotMode == claims.SnapshotNone {
			continue
		}
		if e.SnapshotID == nil || !e.Snapshotted || snaps[*e.SnapshotID].Status != snapshot.StatusCaptured {
			t.Errorf("%s counted without a captured snapshot: %+v", e.ID, e)
		}
	}
	for _, s := range res.Snapshots {
		if s.Status != snapshot.StatusBlocked {
			continue
		}
		for _, e := range res.Evidence {
			if e.SnapshotID != nil && *e.SnapshotID == s.ID && e.Counted {
				t.Errorf("evidence %s on the blocked page %s counted", e.ID, s.RequestedURL)
			}
		}
	}
}

// The addresses the table relies on really are refused by the capturer,
// and the mapped hosts really reach the loopback site.
func TestAdversarialSiteWiring(t *testing.T) {
	site := newAdversarialSite(t)
	c, err := snapshot.NewCapturer(site.snapshotOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recs, err := c.CaptureAll(context.Background(), []string{goodURL, "http://intranet.exampleton-city.gov/wage",
		"http://files.exampleton-city.gov/wage", "http://www.redirector-exampleton.gov/wage"})
	if err != nil {
		t.Fatal(err)
	}
	want := []snapshot.Status{snapshot.StatusCaptured, snapshot.StatusBlocked, snapshot.StatusBlocked, snapshot.StatusBlocked}
	for i, r := range recs {
		if r.Status != want[i] {
			t.Errorf("%s: %s (%v), want %s", r.RequestedURL, r.Status, r.FailureReason, want[i])
		}
	}
	if _, _, err := net.SplitHostPort(site.srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
}
