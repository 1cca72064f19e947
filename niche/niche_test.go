package niche

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultScorer(t *testing.T) {
	s := DefaultScorer()
	if s.Weights().Sum() != 100 || s.Version() != "editorial-v1" {
		t.Fatalf("weights %+v version %s", s.Weights(), s.Version())
	}
	tests := []struct {
		d    Dimensions
		want int
	}{
		{Dimensions{4, 4, 2, 3, 3, 2}, 63},
		{Dimensions{3, 2, 1, 2, 3, 1}, 41},
		{Dimensions{0, 0, 0, 0, 0, 0}, 0},
		{Dimensions{5, 5, 5, 5, 5, 5}, 100},
		{Dimensions{5, 0, 0, 0, 0, 0}, 25},
		{Dimensions{0, 0, 0, 0, 0, 5}, 10},
		{Dimensions{9, -3, 5, 5, 5, 5}, 80}, // clamped to 5 and 0
	}
	for _, tc := range tests {
		if got := s.Score(tc.d); got != tc.want {
			t.Errorf("Score(%+v) = %d, want %d", tc.d, got, tc.want)
		}
		// The documented integer formula.
		d := tc.d
		c := func(v int) int { return min(max(v, 0), 5) }
		formula := 5*c(d.Pain) + 4*c(d.Frequency) + 4*c(d.WillingnessToPay) + 3*c(d.ReachableBuyers) + 2*c(d.Feasibility) + 2*c(d.CompetitionGap)
		if formula != tc.want {
			t.Errorf("documented formula gives %d for %+v, want %d", formula, d, tc.want)
		}
	}
	// Every combination agrees with the documented formula.
	for p := 0; p <= 5; p++ {
		for f := 0; f <= 5; f++ {
			for w := 0; w <= 5; w++ {
				for r := 0; r <= 5; r++ {
					d := Dimensions{p, f, w, r, (p + f) % 6, (w + r) % 6}
					want := 5*p + 4*f + 4*w + 3*r + 2*d.Feasibility + 2*d.CompetitionGap
					if got := s.Score(d); got != want {
						t.Fatalf("Score(%+v) = %d, want %d", d, got, want)
					}
				}
			}
		}
	}
}

func TestSearchTextAndQuery(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"Café  au-lait!", "cafe au lait"},
		{"ＦＵＬＬ　ｗｉｄｔｈ", "full width"},
		{"Résumé/CV — e-mail", "resume cv e mail"},
		{"  ", ""},
		{"B2B SaaS, 10k+ users", "b2b saas 10k users"},
		{"naïve ﬁle", "naive file"},
	}
	for _, tc := range tests {
		if got := NoStemming.SearchText(tc.in); got != tc.want {
			t.Errorf("NoStemming.SearchText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	q := ParseQuery(`"Dental" dental  clinics -- OR *`)
	if diff := cmp.Diff([]string{"dental", "clinic", "or"}, q.Tokens); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	if got := q.FTS5(); got != `"dental" "clinic" "or"` {
		t.Errorf("FTS5 = %s", got)
	}
	if !ParseQuery("?!").Empty() {
		t.Error("punctuation query has tokens")
	}
	long := ParseQuery(strings.Repeat("a b c d e f g h i j k l m n o p q r s t ", 2))
	if len(long.Tokens) != MaxQueryTokens {
		t.Errorf("%d tokens, want %d", len(long.Tokens), MaxQueryTokens)
	}
	if CategoryKey("  HealthCare ") != "healthcare" {
		t.Error("CategoryKey")
	}
}

func TestTeaser(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short text", 160, "short text"},
		{"one two three four five", 12, "one two…"},
		{"one two three, four five", 15, "one two three…"},
		{"abcdefghijklmnop", 6, "abcde…"},
		{"éé éé éé éé", 6, "éé éé…"},
		{"spaces   collapse\nhere", 160, "spaces collapse here"},
	}
	for _, tc := range tests {
		got := Teaser(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Teaser(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if utf8.RuneCountInString(got) > tc.max {
			t.Errorf("Teaser(%q, %d) has %d characters", tc.in, tc.max, utf8.RuneCountInString(got))
		}
	}
}

func TestRegistrableDomain(t *testing.T) {
	tests := map[string]string{
		"www.example.com":          "example.com",
		"Example.COM.":             "example.com",
		"diy.stackexchange.com":    "stackexchange.com",
		"forum.example.co.uk":      "example.co.uk",
		"old.reddit.com":           "reddit.com",
		"someone.github.io":        "someone.github.io",
		"127.0.0.1":                "127.0.0.1",
		"www.gov.uk":               "www.gov.uk",
		"news.ycombinator.com":     "ycombinator.com",
		"apps.apple.com":           "apple.com",
		"www.federalregister.gov":  "federalregister.gov",
		"ec.europa.eu":             "europa.eu",
		"community.shopify.com":    "shopify.com",
		"xn--caf-dma.example.test": "example.test",
	}
	for host, want := range tests {
		got, err := RegistrableDomain(host)
		if err != nil || got != want {
			t.Errorf("RegistrableDomain(%q) = %q, %v; want %q", host, got, err, want)
		}
	}
	if _, err := RegistrableDomain("localhost"); err == nil {
		t.Error("localhost accepted")
	}
}

func TestUnlockTokens(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	key := []byte("0123456789abcdef0123456789abcdef")
	s, err := NewUnlockSigner(key, &UnlockOptions{TTL: 10 * time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewUnlockSigner(key[:31], nil); err == nil {
		t.Fatal("31-byte key accepted")
	}
	id := "niche_" + strings.Repeat("ab", 16)
	other := "niche_" + strings.Repeat("cd", 16)
	tok, exp, err := s.Issue(id, "ord_"+strings.Repeat("1", 32))
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(10*time.Minute)) || !strings.HasPrefix(tok, "v1."+id+".") {
		t.Fatalf("token %s expires %v", tok, exp)
	}
	c, err := s.Parse(tok, id)
	if err != nil || c.OrderRef != "ord_"+strings.Repeat("1", 32) || !c.ExpiresAt.Equal(exp) {
		t.Fatalf("Parse = %+v, %v", c, err)
	}
	parts := strings.Split(tok, ".")
	otherKey, _ := NewUnlockSigner([]byte("ffffffffffffffffffffffffffffffff"), &UnlockOptions{Now: clock})
	forgedByOtherKey, _, _ := otherKey.Issue(id, "x")
	later := func() time.Time { return now.Add(10 * time.Minute) }
	expired, _ := NewUnlockSigner(key, &UnlockOptions{Now: later})
	bad := map[string]struct {
		s     *UnlockSigner
		token string
		niche string
	}{
		"other niche":         {s, tok, other},
		"expired":             {expired, tok, id},
		"other key":           {s, forgedByOtherKey, id},
		"niche swapped":       {s, strings.Replace(tok, id, other, 1), other},
		"expiry extended":     {s, strings.Join([]string{parts[0], parts[1], "9999999999", parts[3], parts[4]}, "."), id},
		"order changed":       {s, strings.Join([]string{parts[0], parts[1], parts[2], "ord_x", parts[4]}, "."), id},
		"mac truncated":       {s, tok[:len(tok)-1], id},
		"version":             {s, "v2" + tok[2:], id},
		"empty":               {s, "", id},
		"garbage":             {s, "not a token", id},
		"extra part":          {s, tok + ".x", id},
		"too long":            {s, tok + strings.Repeat("A", 300), id},
		"subscriber token":    {s, "nd_abcdef", id},
		"mac of empty key":    {s, "v1." + id + ".9999999999.-.", id},
		"non-numeric expires": {s, strings.Join([]string{parts[0], parts[1], "soon", parts[3], parts[4]}, "."), id},
	}
	for name, tc := range bad {
		if err := tc.s.Verify(tc.token, tc.niche); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: Verify = %v, want ErrInvalidToken", name, err)
		}
	}
	if _, _, err := s.Issue(id, "bad.ref"); err == nil {
		t.Error("order ref with a dot accepted")
	}
	if _, _, err := s.Issue("niche_x", ""); err == nil {
		t.Error("bad niche id accepted")
	}
	if !s.SameKey(key) || s.SameKey([]byte("other")) {
		t.Error("SameKey")
	}
}

// TestPreviewAllowList proves the preview is a projection: its JSON has
// exactly the allow-listed keys and none of the redacted text.
func TestPreviewAllowList(t *testing.T) {
	r := &Record{
		ID: "niche_" + strings.Repeat("0", 32), Title: "A title that is public", Buyer: "Public buyer", Category: "Public",
		Problem:            "Visible start of the problem statement that goes on and on. SECRETPROBLEMTAIL should never be shown in a teaser because it is far past the cut.",
		SolutionHypothesis: "SECRETHYPOTHESIS", EvaluationNotes: "SECRETNOTES", SignalIDs: []string{"sig_" + strings.Repeat("1", 32)},
		Dimensions: Dimensions{1, 2, 3, 4, 5, 0}, Score: 50, ScoreVersion: "editorial-v1",
	}
	p := PreviewOf(r, 60)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	want := []string{"category", "buyer", "id", "problemTeaser", "score", "scoreType", "scoreVersion", "signalCount", "title"}
	if diff := cmp.Diff(want, got, cmpSorted()); diff != "" {
		t.Errorf("preview keys (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"SECRET", r.SignalIDs[0], "dimensions", "evidence"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("preview contains %q: %s", secret, b)
		}
	}
}

func cmpSorted() cmp.Option {
	return cmp.Transformer("sort", func(in []string) []string {
		out := append([]string(nil), in...)
		for i := 1; i < len(out); i++ {
			for j := i; j > 0 && out[j] < out[j-1]; j-- {
				out[j], out[j-1] = out[j-1], out[j]
			}
		}
		return out
	})
}

func TestTrendAndConfidence(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	e := &Engine{opts: Options{TrendMinSignals: 10, MinDemandSignals: 3, MinIndependentSources: 2}}
	mk := func(recent, previous, old int, kind SignalKind) []Signal {
		var out []Signal
		add := func(n int, daysAgo int) {
			for i := range n {
				domain := string(rune('a'+i%4)) + ".com"
				out = append(out, Signal{Kind: kind, SourceDomain: domain, SourceURL: fmt.Sprintf("https://%s/t/%d/%d", domain, daysAgo, i),
					ObservedAt: now.Add(-time.Duration(daysAgo)*24*time.Hour - time.Duration(i)*time.Hour), State: StateAccepted})
			}
		}
		add(recent, 5)
		add(previous, 45)
		add(old, 120)
		return out
	}
	tests := []struct {
		name       string
		signals    []Signal
		direction  string
		r, p       int
		confidence string
	}{
		{"insufficient", mk(4, 5, 0, KindComplaint), TrendInsufficient, 4, 5, "high"},
		{"rising", mk(8, 4, 0, KindComplaint), TrendRising, 8, 4, "high"},
		{"falling", mk(3, 9, 0, KindComplaint), TrendFalling, 3, 9, "high"},
		{"stable", mk(6, 5, 0, KindComplaint), TrendStable, 6, 5, "high"},
		{"context only", mk(8, 4, 0, KindNewsReport), TrendInsufficient, 0, 0, "low"},
		{"old evidence", mk(0, 0, 6, KindQuestion), TrendInsufficient, 0, 0, "medium"},
		{"floor only", mk(3, 0, 0, KindQuestion), TrendInsufficient, 3, 0, "medium"},
		{"below floor", mk(2, 0, 0, KindQuestion), TrendInsufficient, 2, 0, "low"},
	}
	for _, tc := range tests {
		tr := e.trend(tc.signals, now)
		if tr.Direction != tc.direction || tr.Recent30Days != tc.r || tr.Previous30Days != tc.p {
			t.Errorf("%s: trend %+v", tc.name, tr)
		}
		if c := e.confidence(statsOf(tc.signals), now); c != tc.confidence {
			t.Errorf("%s: confidence %s, want %s", tc.name, c, tc.confidence)
		}
	}
}

func TestSearchTextStems(t *testing.T) {
	tests := []struct {
		lang Language
		in   string
		want string
	}{
		{"", "Landlords, tenants & invoices", "landlord tenant invoic"},
		{English, "landlord tenant invoice invoicing", "landlord tenant invoic invoic"},
		{English, "Plumbers plumbing a plumber", "plumb plumb a plumb"},
		{English, "Roofers roofing, painters painting", "roof roof paint paint"},
		{English, "owners own", "owner own"},
		{English, "Café résumés", "cafe resum"},
		{English, "Москва 日本", "москва 日本"},
		{French, "Les boulangeries", "le boulanger"},
		{NoStemming, "Landlords", "landlords"},
	}
	for _, tc := range tests {
		if got := tc.lang.SearchText(tc.in); got != tc.want {
			t.Errorf("%q.SearchText(%q) = %q, want %q", tc.lang, tc.in, got, tc.want)
		}
	}
	if got, want := ParseQuery("landlord").Tokens, ParseQuery("Landlords").Tokens; !slices.Equal(got, want) {
		t.Errorf("landlord %v, landlords %v", got, want)
	}
	if err := Language("klingon").Validate(); !errors.Is(err, ErrLanguage) {
		t.Errorf("Validate(klingon) = %v, want ErrLanguage", err)
	}
	if err := Language("").Validate(); err != nil {
		t.Errorf("Validate(\"\") = %v", err)
	}
}

func TestRelevance(t *testing.T) {
	c := &Candidate{Title: "dental clinic remind", Body: "clinic lose money dental", Extra: "sms remind"}
	tests := []struct {
		q    string
		want int
	}{
		{"dental", 8 + 3},
		{"reminders", 8 + 1},
		{"dental clinic", 8 + 3 + 8 + 3 + 6},
		{"clinic dental", 8 + 3 + 8 + 3},
		{"money", 3},
		{"dent", 0},
	}
	for _, tc := range tests {
		if got := Relevance(ParseQuery(tc.q), c); got != tc.want {
			t.Errorf("Relevance(%q) = %d, want %d", tc.q, got, tc.want)
		}
	}
}

func TestDraftNormalize(t *testing.T) {
	good := Draft{
		Title: "  A good title  ", Problem: strings.Repeat("p", 30), Buyer: "abc", Category: "ab",
		SolutionHypothesis: strings.Repeat("h", 20), EvaluationNotes: strings.Repeat("n", 30),
		SignalIDs: []string{"sig_" + strings.Repeat("a", 32), "sig_" + strings.Repeat("a", 32), "sig_" + strings.Repeat("b", 32)},
		Pain:      new(5), Frequency: new(0), WillingnessToPay: new(0), ReachableBuyers: new(0), Feasibility: new(0), CompetitionGap: new(0),
	}
	d, err := good.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "A good title" || len(d.SignalIDs) != 2 {
		t.Fatalf("normalized %+v", d)
	}
	withReasons := good
	withReasons.Rationale = &DraftRationale{Feasibility: "  Built from off-the-shelf parts.  "}
	if d, err = withReasons.Normalize(); err != nil || d.RationaleOf() != (Rationale{Feasibility: "Built from off-the-shelf parts."}) {
		t.Fatalf("rationale normalised to %+v (%v)", d.Rationale, err)
	}
	if withReasons.Rationale.Feasibility != "  Built from off-the-shelf parts.  " {
		t.Fatal("Normalize changed the caller's rationale")
	}
	bad := map[string]func(*Draft){
		"title":            func(d *Draft) { d.Title = "short" },
		"problem":          func(d *Draft) { d.Problem = strings.Repeat("p", 2001) },
		"pain":             func(d *Draft) { d.Pain = new(6) },
		"competition_gap":  func(d *Draft) { d.CompetitionGap = new(-1) },
		"signal_ids":       func(d *Draft) { d.SignalIDs = nil },
		"signal_ids[0]":    func(d *Draft) { d.SignalIDs = []string{"sig_nope"} },
		"evaluation_notes": func(d *Draft) { d.EvaluationNotes = "too short" },
		"rationale.pain":   func(d *Draft) { d.Rationale = &DraftRationale{Pain: "   too short   "} },
		"rationale.competition_gap": func(d *Draft) {
			d.Rationale = &DraftRationale{Pain: strings.Repeat("r", 300), CompetitionGap: strings.Repeat("r", 301)}
		},
	}
	for field, mutate := range bad {
		d := good
		d.SignalIDs = append([]string(nil), good.SignalIDs...)
		mutate(&d)
		_, err := d.Normalize()
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// TestStatsCountPages checks that demand signals count once per page
// (urlnorm.Key) and per registrable domain, rejected ones not at all.
func TestStatsCountPages(t *testing.T) {
	sig := func(url, domain string, kind SignalKind, state SignalState) Signal {
		return Signal{SourceURL: url, SourceDomain: domain, Kind: kind, State: state, ObservedAt: time.Now()}
	}
	st := statsOf([]Signal{
		sig("https://www.example.com/t/1", "example.com", KindComplaint, StateAccepted),
		sig("http://example.com/t/1/", "example.com", KindQuestion, StateAccepted),
		sig("https://EXAMPLE.com:443/t/1#c2", "example.com", KindReview, StatePending),
		sig("https://example.com/t/1?utm_source=x", "example.com", KindJobPost, StateAccepted),
		sig("https://example.com/t/2", "example.com", KindComplaint, StateAccepted),
		sig("https://other.org/a", "other.org", KindComplaint, StateRejected),
		sig("https://news.example.net/a", "example.net", KindNewsReport, StateAccepted),
	})
	if st.demand != 5 || st.pages != 2 || st.domains != 1 || st.context != 1 {
		t.Fatalf("stats %+v: want 5 demand signals on 2 pages of 1 domain, 1 context signal", st)
	}
}
