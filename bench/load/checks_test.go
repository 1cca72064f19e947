package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	paymentprotocols "github.com/assaykit/assay/payment/protocols"
)

// The scenario checks must be able to fail: these tests feed them the
// faults they look for.

func series(start time.Time, mibs ...float64) []rssSample {
	out := make([]rssSample, len(mibs))
	for i, m := range mibs {
		out[i] = rssSample{at: start.Add(time.Duration(i) * time.Second), bytes: int64(m * mib)}
	}
	return out
}

func TestJudgeGrowth(t *testing.T) {
	l := growthLimits{WarmFraction: 0.25, MinSamples: 8, MinMiB: 32, MinRatio: 0.25}
	now := time.Now()
	ramp := func(from, step float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = from + step*float64(i)
		}
		return v
	}
	flatAfterWarmup := append(ramp(30, 5, 10), ramp(80, 0, 30)...)
	sawTooth := make([]float64, 40)
	for i := range sawTooth {
		sawTooth[i] = 60 + float64(i%5)*8
	}
	for _, tc := range []struct {
		name      string
		mibs      []float64
		sustained bool
	}{
		{"leak", ramp(40, 4, 40), true},
		{"warm-up then plateau", flatAfterWarmup, false},
		{"garbage-collection saw-tooth", sawTooth, false},
		{"slow rise under the limits", ramp(100, 0.2, 40), false},
		{"step then flat", append(ramp(50, 0, 20), ramp(120, 0, 20)...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := judgeGrowth("x", series(now, tc.mibs...), l)
			if r.Sustained != tc.sustained {
				t.Fatalf("sustained = %t, want %t (%+v)", r.Sustained, tc.sustained, r)
			}
			if r.PeakMiB < r.StartMiB || r.Samples != len(tc.mibs) {
				t.Fatalf("bad summary %+v", r)
			}
		})
	}
	if r := judgeGrowth("x", series(now, 1, 2, 3), l); r.Sustained || !strings.Contains(r.Verdict, "too few") {
		t.Fatalf("three samples judged: %+v", r)
	}
}

func TestLedgerFindsDoubleDeliveries(t *testing.T) {
	st := newStats()
	l := newLedger(st)
	l.deliver(&delivery{Nonce: "0xa/0x1", OrderID: "ord_1", SHA256: "aa"})
	l.deliver(&delivery{Nonce: "0xa/0x2", OrderID: "ord_2", SHA256: "bb"})
	if st.failureCount() != 0 || l.doubles != 0 {
		t.Fatalf("distinct deliveries flagged: %v", st.snapshot().failures)
	}
	l.deliver(&delivery{Nonce: "0xa/0x1", OrderID: "ord_3"}) // same payment, second order
	l.deliver(&delivery{Nonce: "0xb/0x9", OrderID: "ord_2"}) // same order, second payment
	if l.doubles != 2 || st.failureCount() != 2 {
		t.Fatalf("doubles = %d, failures %v", l.doubles, st.snapshot().failures)
	}
	// Idempotent replays: same bytes pass, other bytes or unknown orders fail.
	l.replay(&delivery{OrderID: "ord_1", SHA256: "aa"}, false)
	l.replay(&delivery{OrderID: "ord_1", SHA256: "zz"}, false)
	l.replay(&delivery{OrderID: "ord_404", SHA256: "aa"}, false)
	if l.replayOK != 1 || st.failureCount() != 4 {
		t.Fatalf("replays ok %d, failures %v", l.replayOK, st.snapshot().failures)
	}
	// After a kill, a replay of an order nobody received is a recovery.
	l.replay(&delivery{Nonce: "0xc/0x1", OrderID: "ord_9", SHA256: "cc"}, true)
	if l.recovered != 1 || len(l.byOrder["ord_9"]) != 1 || st.failureCount() != 4 {
		t.Fatalf("recovery not booked: %d %v", l.recovered, st.snapshot().failures)
	}
}

func TestScanLog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.log", `--- loadtest: start #1 pid 1 at now
assay listening on http://127.0.0.1:1 (store: sqlite)
{"time":"t","level":"WARN","msg":"payment dev mode: settlement recorded"}
`)
	f, err := scanLog(clean)
	if err != nil || f.Panics+f.Races+f.Fatal+f.Errors != 0 {
		t.Fatalf("clean log: %+v %v", f, err)
	}
	dirty := write("dirty.log", `{"time":"t","level":"ERROR","msg":"panic serving request","panic":"boom"}
{"time":"t","level":"ERROR","msg":"payment: store","err":"database is locked"}
WARNING: DATA RACE
fatal error: concurrent map writes
panic: runtime error: index out of range
`)
	f, err = scanLog(dirty)
	if err != nil {
		t.Fatal(err)
	}
	got := [4]int{f.Panics, f.Races, f.Fatal, f.Errors}
	if diff := cmp.Diff([4]int{2, 1, 1, 1}, got); diff != "" {
		t.Fatalf("panics, races, fatal, errors (-want +got):\n%s", diff)
	}
}

func TestDiffStatesAndAllowances(t *testing.T) {
	now := time.Now()
	ts := func(rows ...string) tableState {
		s := tableState{rows: map[string]int{}, expires: map[string]int64{}}
		for _, r := range rows {
			s.rows[r]++
		}
		return s
	}
	before := map[string]tableState{
		"payment_orders": ts("o1", "o2"), "payment_quotes": ts(), "niche_quota": ts("q1"),
		"payment_reservations": ts("r-old", "r-live"),
	}
	before["payment_reservations"].expires["r-old"] = now.Add(-time.Minute).UnixMicro()
	before["payment_reservations"].expires["r-live"] = now.Add(time.Hour).UnixMicro()
	after := map[string]tableState{
		"payment_orders": ts("o1", "o2-changed"), "payment_quotes": ts("q"), "niche_quota": ts("q1-changed"),
		"payment_reservations": ts("r-live"), // the expired one was purged: allowed
	}
	got := diffStates(before, after, now)
	want := []tableChange{{"niche_quota", 1, 1}, {"payment_orders", 1, 1}, {"payment_quotes", 1, 0}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tableChange{})); diff != "" {
		t.Fatalf("diff (-want +got):\n%s", diff)
	}
	if by := allowedBy("niche_quota", map[string]int{"niche.list": 3}); len(by) != 1 {
		t.Fatalf("a list with q (a counted search) does not explain the quota table: %v", by)
	}
	accepted := map[string]int{"commerce.quotes.create": 2, "niche.preview": 9}
	if by := allowedBy("payment_quotes", accepted); len(by) != 1 {
		t.Fatalf("quotes not explained: %v", by)
	}
	for _, table := range []string{"payment_orders", "niche_quota", "claim_verifications"} {
		if by := allowedBy(table, accepted); len(by) != 0 {
			t.Fatalf("%s explained by %v", table, by)
		}
	}
	if by := allowedBy("niche_fts_data", map[string]int{"niche.admin.evaluations.create": 1}); len(by) != 1 {
		t.Fatalf("admin niche writes do not explain the FTS tables: %v", by)
	}
}

// TestPayerAgainstChallenge checks the paying side against a fake 402
// built with the real processor: the credential's reservation key must be
// the one the processor reserves, for each protocol.
func TestPayerAgainstChallenge(t *testing.T) {
	proc, err := paymentprotocols.New(&paymentprotocols.Options{Dev: true, PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MPPSecret: []byte(strings.Repeat("s", 32)), Realm: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	offer := payment.Offer{ID: "t", Description: "test", AmountMicroUSD: 20_000, MimeType: "application/json", WorkTimeout: time.Minute}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch, err := proc.Challenge(r.Context(), offer, payment.Resource{URL: "http://" + r.Host + r.URL.Path, Method: r.Method})
		if err != nil {
			t.Error(err)
			return
		}
		for k, v := range httpgate.ChallengeHeader(ch) {
			w.Header()[k] = v
		}
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write(ch.Body)
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/paid")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 64<<10)
	n, _ := res.Body.Read(body)
	res.Body.Close()
	ch, err := parseChallenge(res.Header, body[:n])
	if err != nil {
		t.Fatal(err)
	}
	wallet, err := evm.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range protocols {
		cred, err := ch.pay(context.Background(), wallet, proto, time.Now())
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		h := http.Header{}
		h.Set(cred.Header, cred.Value)
		pc, err := httpgate.ReadCredential(h)
		if err != nil || pc == nil {
			t.Fatalf("%s: the processor cannot read the credential: %v", proto, err)
		}
		auth, err := proc.Verify(context.Background(), offer, payment.Resource{URL: srv.URL + "/paid", Method: http.MethodGet}, pc)
		if err != nil {
			t.Fatalf("%s: verify: %v", proto, err)
		}
		// An x402 credential's key is its authorization's; an MPP one's is
		// its challenge id, which the processor reserves as an extra key.
		keyOK := auth.ReservationKey == cred.Key || (strings.HasPrefix(cred.Key, "mpp:") && slices.Contains(auth.ExtraReservationKeys, cred.Key))
		if !keyOK || cred.Amount != 20_000 || !strings.HasPrefix(cred.Nonce, wallet.Address().Hex()+"/0x") {
			t.Fatalf("%s: key %q (processor %q), amount %d, nonce %q", proto, cred.Key, auth.ReservationKey, cred.Amount, cred.Nonce)
		}
	}
}

// TestSoakIsTheLoadScenarioLonger: soak runs the load scenario (and its
// memory judgement) for SoakDuration, 30 minutes by default, leaving the
// other scenarios' duration alone.
func TestSoakIsTheLoadScenarioLonger(t *testing.T) {
	cfg := defaultConfig()
	if cfg.SoakDuration != 30*time.Minute {
		t.Fatalf("default soak duration %s", cfg.SoakDuration)
	}
	cfg.Duration, cfg.SoakDuration = 5*time.Second, 7*time.Second
	if got := scenarioConfig(cfg, "soak"); got.Duration != 7*time.Second || got.Growth != cfg.Growth || got == cfg {
		t.Fatalf("soak config: %+v", got)
	}
	for _, sc := range []string{"load", "crash", "badinput"} {
		if got := scenarioConfig(cfg, sc); got.Duration != 5*time.Second {
			t.Fatalf("%s duration %s", sc, got.Duration)
		}
	}
	if cfg.Duration != 5*time.Second {
		t.Fatal("scenarioConfig changed the configuration it was given")
	}
	if _, err := runScenario(context.Background(), cfg, "sleep", backendSQLite); err == nil || !strings.Contains(err.Error(), "soak") {
		t.Fatalf("unknown scenario: %v", err)
	}
}
