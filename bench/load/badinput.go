package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/anydb"
)

// tableState is the content of one table: a hash per row (with how many
// rows have it) and, for payment_reservations, each row's expiry.
type tableState struct {
	rows    map[string]int
	expires map[string]int64
	// tokens maps a row (digested without its order-token hash) to that
	// hash: a used credential presented for the request it paid for is
	// answered again with a fresh order token, so token hashes may change
	// (and are counted apart) while the rest of the row must not.
	tokens map[string]string
}

// tokenColumns are the order-token hashes that rotate when a purchase is
// answered again.
var tokenColumns = map[string]string{"payment_orders": "token_hash", "claim_verification_access": "order_token_hash"}

// rotatedTokens counts the rows of table in before and after whose token
// hash changed.
func rotatedTokens(before, after map[string]tableState, table string) int {
	n := 0
	for k, tok := range before[table].tokens {
		if a, ok := after[table].tokens[k]; ok && a != tok {
			n++
		}
	}
	return n
}

// dbState reads every table of the database while the servers run
// (SQLite read-only; PostgreSQL through its own pool).
func dbState(ctx context.Context, backend, dsn string) (map[string]tableState, error) {
	var db *sql.DB
	var err error
	var listQ string
	switch backend {
	case backendSQLite:
		db, err = sql.Open("sqlite", "file:"+(&url.URL{Path: dsn}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
		listQ = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
	default:
		db, err = sql.Open("pgx", dsn)
		listQ = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var tables []string
	rows, err := db.QueryContext(ctx, listQ)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if len(tables) == 0 {
		return nil, fmt.Errorf("no tables in %s", dsn)
	}
	out := map[string]tableState{}
	for _, t := range tables {
		ts, err := readTable(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t, err)
		}
		out[t] = ts
	}
	return out, nil
}

func readTable(ctx context.Context, db *sql.DB, table string) (tableState, error) {
	ts := tableState{rows: map[string]int{}, expires: map[string]int64{}, tokens: map[string]string{}}
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return ts, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return ts, err
	}
	expIdx := slices.Index(cols, "expires_at")
	tokIdx := slices.Index(cols, tokenColumns[table])
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return ts, err
		}
		h := sha256.New()
		for i, v := range vals {
			if i != tokIdx {
				fmt.Fprintf(h, "%s=%#v\x1f", cols[i], v)
			}
		}
		key := hex.EncodeToString(h.Sum(nil))
		ts.rows[key]++
		if tokIdx >= 0 {
			ts.tokens[key] = fmt.Sprint(vals[tokIdx])
		}
		if expIdx >= 0 {
			if n, ok := vals[expIdx].(int64); ok {
				ts.expires[key] = n
			}
		}
	}
	return ts, rows.Err()
}

// tableChange is how a table differs between two states.
type tableChange struct {
	table          string
	added, removed int
}

// diffStates lists the tables whose rows changed. Rows of
// payment_reservations that expired before now may disappear (the
// periodic reconciliation purges them).
func diffStates(before, after map[string]tableState, now time.Time) []tableChange {
	var out []tableChange
	names := map[string]bool{}
	for t := range before {
		names[t] = true
	}
	for t := range after {
		names[t] = true
	}
	for _, t := range slices.Sorted(mapsKeys(names)) {
		b, a := before[t], after[t]
		c := tableChange{table: t}
		for k, n := range a.rows {
			if d := n - b.rows[k]; d > 0 {
				c.added += d
			}
		}
		for k, n := range b.rows {
			if d := n - a.rows[k]; d > 0 {
				if t == "payment_reservations" && b.expires[k] > 0 && b.expires[k] < now.UnixMicro() {
					continue
				}
				c.removed += d
			}
		}
		if c.added > 0 || c.removed > 0 {
			out = append(out, c)
		}
	}
	return out
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// allowedBy returns the accepted routes whose writes explain a change of
// table.
func allowedBy(table string, accepted map[string]int) []string {
	var out []string
	for _, w := range writesOnAccept {
		for _, t := range w.tables {
			if !strings.HasPrefix(table, t) {
				continue
			}
			for id, n := range accepted {
				if n > 0 && strings.HasPrefix(id, w.prefix) {
					out = append(out, fmt.Sprintf("%s (%d accepted)", id, n))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fuzzSetup learns the routes and real ids and makes one legitimate paid
// call per paid route and protocol, whose credentials are then replayed.
func fuzzSetup(ctx context.Context, hc *http.Client, st *stats, base, adminKey string) (*fuzzFixtures, error) {
	fx := &fuzzFixtures{used: map[string][]*paidCall{}, challenges: map[string]*challenge{}, adminKey: adminKey}
	res, err := hc.Get(base + "/v1/capabilities")
	if err != nil {
		return nil, err
	}
	var caps struct {
		Capabilities []capability `json:"capabilities"`
	}
	err = json.NewDecoder(res.Body).Decode(&caps)
	res.Body.Close()
	if err != nil || len(caps.Capabilities) == 0 {
		return nil, fmt.Errorf("capabilities: %v (%d routes)", err, len(caps.Capabilities))
	}
	fx.caps = caps.Capabilities
	cat, err := loadCatalogue(ctx, hc, base)
	if err != nil {
		return nil, err
	}
	fx.nicheIDs = cat.ids
	wallet, err := evm.GenerateKeySigner()
	if err != nil {
		return nil, err
	}
	p := &payer{hc: hc, st: st, led: newLedger(st), wallet: wallet}
	body, _ := json.Marshal(claimTemplate())
	reqs := map[string]paidReq{
		"niche.pay-per-call":        {class: "setup: paid", method: http.MethodGet, path: "/v1/niches/" + cat.ids[0] + "/pay-per-call"},
		"niche.search.pay-per-call": {class: "setup: paid", method: http.MethodGet, path: "/v1/search/pay-per-call?q=" + cat.words[0]},
	}
	for _, t := range tiers {
		reqs["claims.verify."+t.name] = paidReq{class: "setup: paid", method: http.MethodPost, path: t.path, body: body}
	}
	for _, id := range slices.Sorted(mapsKeys(reqs)) {
		r := reqs[id]
		for range protocols {
			pc := p.pay(ctx, base, r)
			if pc == nil || pc.ans.err != nil {
				return nil, fmt.Errorf("setup payment for %s failed", id)
			}
			if pc.ans.status != http.StatusOK {
				if p.sharedRefusal(pc.cred, pc.ans) {
					continue
				}
				return nil, fmt.Errorf("setup payment for %s: %d %s", id, pc.ans.status, snippet(pc.ans.body))
			}
			fx.used[id] = append(fx.used[id], pc)
			fx.orderIDs = append(fx.orderIDs, pc.ans.header.Get(httpgate.HeaderOrderID))
			fx.tokens = append(fx.tokens, pc.ans.header.Get(httpgate.HeaderOrderToken))
			var out struct {
				VerificationID string `json:"verificationId"`
				Snapshots      []struct {
					SnapshotID string `json:"snapshotId"`
				} `json:"snapshots"`
			}
			if json.Unmarshal(pc.ans.body, &out) == nil && out.VerificationID != "" {
				fx.verifIDs = append(fx.verifIDs, out.VerificationID)
				for _, s := range out.Snapshots {
					if s.SnapshotID != "" {
						fx.snapIDs = append(fx.snapIDs, s.SnapshotID)
					}
				}
			}
		}
		ch, ok := p.challenge(ctx, base, r)
		if !ok {
			return nil, fmt.Errorf("no challenge for %s", id)
		}
		fx.challenges[id] = ch
	}
	return fx, nil
}

// runBadInput is the bad-input scenario.
func runBadInput(ctx context.Context, cfg *Config, backend string, instances int) (*report, error) {
	rep := &report{Scenario: "badinput", Backend: backend, Instances: instances, Clients: cfg.Clients, Strict: cfg.Strict}
	st := newStats()
	cl, err := newCluster(ctx, cfg, "badinput", backend, instances, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.close(cfg.Keep); err != nil {
			fmt.Fprintln(cfg.Log, "cleanup:", err)
		}
	}()
	if err := cl.start(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	bases := cl.bases()
	setupHC := newHTTPClient(time.Minute)
	setupStats := newStats() // the setup's own requests stay out of the table
	fx, err := fuzzSetup(ctx, setupHC, setupStats, bases[0], cl.adminKey)
	if err != nil {
		return nil, err
	}
	for _, f := range setupStats.snapshot().failures {
		st.fail("setup", "%s", f)
	}
	before, err := dbState(ctx, backend, cl.dsn)
	if err != nil {
		return nil, fmt.Errorf("database state before: %w", err)
	}

	mctx, stopMem := context.WithCancel(ctx)
	mem := watchMemory(mctx, cl.procs, cfg.RSSEvery)
	var mu sync.Mutex
	accepted := map[string]int{}
	paidAnswers := map[int]int{}
	sent, badText, answeredAgain := 0, 0, 0
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		forge, err := evm.GenerateKeySigner()
		if err != nil {
			stopMem()
			return nil, err
		}
		f := &fuzzer{hc: newHTTPClient(cfg.RequestTimeout), st: st, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(2000+i))),
			bases: bases, fx: fx, forge: forge, mu: &mu, acc: accepted, paid: paidAnswers, sent: &sent,
			pg: backend == backendPostgres, badText: &badText, answeredAgain: &answeredAgain}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				f.one(ctx)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep.fill(st, elapsed)
	stopMem()
	mem.wait()
	rep.Memory = judgeMemory(st, mem, cfg.Growth)

	healthy := 0
	for _, p := range cl.procs {
		if !p.alive() {
			st.fail("server died", "%s is not running after the bad input (%v)", p.name, p.exitError())
			continue
		}
		if err := p.healthy(ctx); err != nil {
			st.fail("server unhealthy", "%s: /healthz after the bad input: %v", p.name, err)
			continue
		}
		healthy++
	}
	after, err := dbState(ctx, backend, cl.dsn)
	if err != nil {
		st.fail("database state after", "%v", err)
	}
	var changed []string
	for _, c := range diffStates(before, after, time.Now()) {
		by := allowedBy(c.table, accepted)
		desc := fmt.Sprintf("%s +%d -%d", c.table, c.added, c.removed)
		if len(by) == 0 || c.removed > 0 {
			st.fail("stored data changed", "%s, and no accepted request writes there", desc)
			continue
		}
		changed = append(changed, desc+" (accepted: "+strings.Join(by, ", ")+")")
	}
	rotated, grants := rotatedTokens(before, after, "payment_orders"), rotatedTokens(before, after, "claim_verification_access")
	if rotated > answeredAgain || grants > rotated {
		st.fail("order tokens changed", "%d order tokens and %d verification grants changed, but only %d used credentials were answered again", rotated, grants, answeredAgain)
	}
	if err := cl.stop(cfg.StopTimeout); err != nil {
		st.fail("graceful stop", "%v", err)
	}
	logs := cl.checkLogs(st)
	rep.KnownFiveXX = badText
	if badText > 0 {
		// Each such 500 must be the store refusing the bytes, nothing else.
		n := 0
		for _, p := range cl.procs {
			n += countInLog(p.logPath, `invalid byte sequence for encoding`)
		}
		if n < badText {
			st.fail("5xx answer", "%d answers with NUL or invalid UTF-8 were 500, but only %d server log lines blame the encoding", badText, n)
		}
	}
	integrity := "ok"
	if db, err := anydb.Open(ctx, cl.dsn, nil); err != nil {
		st.fail("database", "%v", err)
	} else {
		if err := db.CheckIntegrity(ctx); err != nil {
			integrity = err.Error()
			st.fail("database integrity", "%v", err)
		}
		db.Close()
	}

	var acc []string
	for _, id := range slices.Sorted(mapsKeys(accepted)) {
		acc = append(acc, fmt.Sprintf("%s %d", id, accepted[id]))
	}
	used := 0
	for _, l := range fx.used {
		used += len(l)
	}
	rep.addFact("routes", "%d from /v1/capabilities; setup: %d legitimate paid calls whose credentials are replayed, %d real ids", len(fx.caps), used, len(fx.nicheIDs)+len(fx.orderIDs)+len(fx.verifIDs)+len(fx.snapIDs))
	rep.addFact("hostile requests", "%d", sent)
	rep.addFact("forged or replayed credentials at paid routes", "answers %s (a 2xx would be a failure, except a used credential presented for the very request it paid for: its purchase answered again, %d times)",
		orNone(formatStatuses(paidAnswers)), answeredAgain)
	rep.addFact("order tokens rotated", "%d orders and %d verification grants got a fresh token hash from those answers (the rest of every row unchanged)", rotated, grants)
	rep.addFact("accepted (2xx), by route", "%s", orNone(strings.Join(acc, ", ")))
	rep.addFact("tables changed", "%s (all other %d tables byte-identical)", orNone(strings.Join(changed, "; ")), len(before)-len(changed))
	rep.addFact("instances healthy afterwards", "%d of %d", healthy, len(cl.procs))
	rep.addFact("database integrity", "%s", integrity)
	rep.addFact("server logs", "%s", logs)
	rep.finish(st)
	return rep, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
