// Command payment measures the overhead of the payment gate on a paid call:
// the same handler served directly (baseline "ungated") and behind
// httpgate.Gate with a ledger on an SQLite file (read credential, verify,
// reserve, open order, buffer, settle, sign receipt, complete order), the
// secp256k1 public-key recovery on one goroutine (the cost that bounds
// local signature verification), and the floor of a paid call on the same
// store: one recovery and one durable commit. The gate's overhead is the
// gated call less the ungated one, printed as a ratio to the handler and
// to the floor. The four are measured in turn in each of -rounds rounds,
// so that load that comes and goes on the machine weighs on a round's
// overhead and its floor alike; each round is printed, then the medians
// (and the median of the rounds' overhead/floor ratios).
//
//	go run ./bench/payment               # SQLite file in a temporary directory
//	go run ./bench/payment -dsn :memory:  # SQLite in memory (no fsync)
//	go run ./bench/payment -dsn 'postgres://…?search_path=scratch'  # a scratch schema: the run leaves its tables there
//	go run -tags libsecp256k1 ./bench/payment  # signature recovery by libsecp256k1 (cgo; apt-get install libsecp256k1-dev)
//
// By default the processor is the real one (protocols.New in dev
// mode): every paid call carries a fresh x402 v2 payment signed by the dev
// wallet (signed before the timed loop), and the gate decodes it,
// checks the requirements, recovers the EIP-3009 signer (secp256k1),
// reserves the nonce, opens the order, runs the handler, records the dev
// settlement, signs the receipt and completes the order. -processor fake
// uses the deterministic fake of payment/gatetest instead (the gate's own
// cost without signature recovery).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/paymentstore"
)

const body = `{"claim":"The Eiffel Tower is 330 metres tall","minimumSources":2}`

// work is the paid handler: decode the request, answer ~2 KB of JSON.
var work = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	if call, ok := payment.CallFrom(r.Context()); ok {
		call.SetResult("verification", "cv_0123456789abcdef0123456789abcdef")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"claim": req["claim"], "status": "confirmed", "padding": strings.Repeat("x", 2000)})
})

func main() {
	dsn := flag.String("dsn", "", "store DSN (default: an SQLite file in a temporary directory)")
	procName := flag.String("processor", "real", "real (dev-mode x402/EIP-3009 verification) or fake (payment/gatetest)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the gated calls of the first round to this file")
	rounds := flag.Int("rounds", 5, "rounds of measures (each measures the handler, the gated call, a recovery and a commit)")
	benchTime := flag.Duration("benchtime", 300*time.Millisecond, "duration of each measure")
	testing.Init()
	flag.Parse()
	if *rounds < 1 {
		log.Fatal("-rounds must be at least 1")
	}
	if err := flag.Set("test.benchtime", benchTime.String()); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if *dsn == "" {
		dir, err := os.MkdirTemp("", "assay-bench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		*dsn = filepath.Join(dir, "bench.db")
	}
	db, err := anydb.Open(ctx, *dsn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		log.Fatal(err)
	}
	var proc payment.Processor = &gatetest.Processor{}
	read := gatetest.ReadCredential
	if *procName == "real" {
		p, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
			MPPSecret: []byte("bench-secret-bench-secret-bench-secret"), Realm: "api.example.test"})
		if err != nil {
			log.Fatal(err)
		}
		proc, read = p, nil
	} else if *procName != "fake" {
		log.Fatalf("-processor %q: want real or fake", *procName)
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: "https://api.example.test", ReadCredential: read})
	if err != nil {
		log.Fatal(err)
	}
	offer := payment.Offer{ID: "claims.verify.quick", Product: "quick", AmountMicroUSD: 20000, MimeType: "application/json"}
	gated := gate.Gate(offer, work)

	// The 402 this route issues; real credentials answer it.
	rec402 := httptest.NewRecorder()
	gated.ServeHTTP(rec402, httptest.NewRequest("POST", "/v1/claims/verify/quick", strings.NewReader(body)))
	var required x402.PaymentRequired
	if err := x402.DecodeHeader(rec402.Header().Get("Payment-Required"), &required); err != nil && *procName == "real" {
		log.Fatalf("challenge: %d %v", rec402.Code, err)
	}
	wallet := paymenttest.DevWallet()
	credential := func(n int64) (string, string) {
		if *procName == "fake" {
			return gatetest.Header, gatetest.Credential("0xbench", strconv.FormatInt(n, 10))
		}
		pl, err := paying.PayX402V2(ctx, wallet, &required, &required.Accepts[0], time.Now())
		if err != nil {
			log.Fatal(err)
		}
		v, err := x402.EncodeHeader(pl)
		if err != nil {
			log.Fatal(err)
		}
		return "Payment-Signature", v
	}

	var nonce atomic.Int64
	// Each paid call carries its own credential, signed before the timed
	// loop: signing in the loop, between StopTimer and StartTimer, timed
	// two runtime.ReadMemStats (a stop of the world each) per call and
	// left the signer's work in the caches the gate then used.
	serve := func(h http.Handler, paid bool) func(b *testing.B) {
		return func(b *testing.B) {
			var names, values []string
			if paid {
				names, values = make([]string, b.N), make([]string, b.N)
				for i := range b.N {
					names[i], values[i] = credential(nonce.Add(1))
				}
				b.ResetTimer()
			}
			for i := range b.N {
				req := httptest.NewRequest("POST", "/v1/claims/verify/quick", strings.NewReader(body))
				if paid {
					req.Header.Set(names[i], values[i])
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				_, _ = io.Copy(io.Discard, rec.Body)
			}
		}
	}
	// The floor of a paid call: one signature recovery and one durable
	// commit (the order's move to settling, before money may move) on
	// the same store.
	recovery := recoverBench(ctx, wallet)
	var floorN int
	commit := func(b *testing.B) {
		for b.Loop() {
			floorN++
			if err := db.SetMeta(ctx, "bench.floor", strconv.Itoa(floorN)); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Each round measures the four in turn, so that a load that comes and
	// goes on the machine weighs on a round's overhead and its floor
	// alike; the medians are reported, with each round's figures.
	var bases, paids, recs, commits, overheads, floors, ratios []float64
	fmt.Printf("store: %s, processor: %s, secp256k1 recovery: %s, %d rounds of %s per measure\n",
		db.Dialect(), *procName, evm.RecoveryBackend, *rounds, *benchTime)
	fmt.Printf("%5s %12s %12s %12s %12s %12s %12s %9s\n", "round", "ungated µs", "gated µs", "overhead µs", "recovery µs", "commit µs", "floor µs", "ovh/floor")
	for r := 1; r <= *rounds; r++ {
		base := testing.Benchmark(serve(work, false))
		if r == 1 && *cpuProfile != "" {
			stop := startProfile(*cpuProfile)
			defer stop()
		}
		paid := testing.Benchmark(serve(gated, true))
		if r == 1 && *cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		rec := testing.Benchmark(recovery)
		com := testing.Benchmark(commit)
		bn, pn, rn, cn := float64(base.NsPerOp())/1e3, float64(paid.NsPerOp())/1e3, float64(rec.NsPerOp())/1e3, float64(com.NsPerOp())/1e3
		bases, paids, recs, commits = append(bases, bn), append(paids, pn), append(recs, rn), append(commits, cn)
		overheads, floors, ratios = append(overheads, pn-bn), append(floors, rn+cn), append(ratios, (pn-bn)/(rn+cn))
		fmt.Printf("%5d %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %8.2fx\n", r, bn, pn, pn-bn, rn, cn, rn+cn, (pn-bn)/(rn+cn))
	}
	bn, pn, ovh, fl := median(bases), median(paids), median(overheads), median(floors)
	fmt.Printf("ungated handler (baseline): %10.1f µs/op  (median)\n", bn)
	fmt.Printf("gated paid call:            %10.1f µs/op  (median)\n", pn)
	fmt.Printf("gate overhead:              %10.1f µs/op  (median; goal: at most 600)\n", ovh)
	fmt.Printf("ratio gated/ungated:        %10.1fx\n", pn/bn)
	fmt.Printf("secp256k1 recovery (1 goroutine): %8.1f µs/op, %8.0f recoveries/s per core  (median)\n", median(recs), 1e6/median(recs))
	fmt.Printf("durable commit (1 row):     %10.1f µs/op  (median)\n", median(commits))
	fmt.Printf("floor (recovery + commit):  %10.1f µs/op  (median)\n", fl)
	fmt.Printf("ratio overhead/floor:       %10.2fx  (median of the rounds' ratios; goal: 0.6 ms over a 0.5 ms floor, 1.20x)\n", median(ratios))
}

// startProfile starts a CPU profile written to path; the returned
// function closes the file.
func startProfile(path string) func() {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() { _ = f.Close() }
}

// median returns the median of v (the mean of the middle two for an even
// count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// recoverBench recovers the signer of one signed EIP-3009 authorization
// (digest and signature fixed outside the loop), as BenchmarkRecover in
// package payment does.
func recoverBench(ctx context.Context, w *evm.KeySigner) func(b *testing.B) {
	a, err := evm.EIP3009Authorization{From: w.Address().String(), To: paymenttest.DevPayee, Value: "250000", ValidAfter: "0",
		ValidBefore: "1900000000", Nonce: "0x1111111111111111111111111111111111111111111111111111111111111111"}.Parse()
	if err != nil {
		log.Fatal(err)
	}
	d, err := a.Digest(evm.BaseMainnet())
	if err != nil {
		log.Fatal(err)
	}
	sig, err := evm.SignTransfer(ctx, w, evm.BaseMainnet(), a)
	if err != nil {
		log.Fatal(err)
	}
	return func(b *testing.B) {
		for b.Loop() {
			if got, err := evm.RecoverAddress(d, sig); err != nil || got != w.Address() {
				b.Fatal("recovery failed")
			}
		}
	}
}
