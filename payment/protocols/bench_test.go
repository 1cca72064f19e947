package protocols_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
)

// Benchmarks (go test ./payment/protocols -run '^$' -bench . -benchtime 2s):
//
//	BenchmarkRecover          secp256k1 public-key recovery + keccak address (recoveries/s per core)
//	BenchmarkVerifyX402V2     PAYMENT-SIGNATURE header → verified Authorization (dev mode, no network)
//	BenchmarkMPPIssueVerify   Challenge (x402 + MPP evm) + Authorization header → verified Authorization
//
// The last two also report "x-recover": their cost as a multiple of one
// recovery measured in the same run (the named baseline), so the figure is
// comparable across machines.

var (
	baselineOnce sync.Once
	baselineNs   float64
)

// recoverBaseline times recoveries directly (testing.Benchmark cannot be
// nested in a running benchmark).
func recoverBaseline() float64 {
	baselineOnce.Do(func() {
		d, sig, want := recoverInput()
		const n = 2000
		start := time.Now()
		for range n {
			if got, err := evm.RecoverAddress(d, sig); err != nil || got != want {
				panic("recovery failed")
			}
		}
		baselineNs = float64(time.Since(start).Nanoseconds()) / n
	})
	return baselineNs
}

func recoverInput() ([32]byte, []byte, evm.Address) {
	w := paymenttest.DevWallet()
	a, _ := evm.EIP3009Authorization{From: paymenttest.DevAddress, To: paymenttest.DevPayee, Value: "250000", ValidAfter: "0",
		ValidBefore: "1900000000", Nonce: "0x1111111111111111111111111111111111111111111111111111111111111111"}.Parse()
	d, _ := a.Digest(evm.BaseMainnet())
	sig, _ := evm.SignTransfer(context.Background(), w, evm.BaseMainnet(), a)
	return d, sig, w.Address()
}

func benchRecover(b *testing.B) {
	d, sig, want := recoverInput()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if got, err := evm.RecoverAddress(d, sig); err != nil || got != want {
			b.Fatal("recovery failed")
		}
	}
}

func BenchmarkRecover(b *testing.B) {
	benchRecover(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "recoveries/s")
}

func benchProcessor(b *testing.B) *protocols.Processor {
	p, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true, MPPSecret: testSecret,
		Realm: "api.example.com", Now: func() time.Time { return testNow }})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkVerifyX402V2(b *testing.B) {
	base := recoverBaseline()
	p := benchProcessor(b)
	ch, err := p.Challenge(context.Background(), testOffer, testRes)
	if err != nil {
		b.Fatal(err)
	}
	h := http.Header{}
	h.Set("Payment-Signature", paymenttest.X402V2(b, paymenttest.DevWallet(), ch, testNow))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, err := httpgate.ReadCredential(h)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Verify(ctx, testOffer, testRes, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-recover")
}

func BenchmarkMPPIssueVerify(b *testing.B) {
	base := recoverBaseline()
	p := benchProcessor(b)
	w := paymenttest.DevWallet()
	ctx := context.Background()
	// Sign once against a challenge; every iteration issues a challenge
	// (same clock, so the same id) and verifies the credential.
	ch, _ := p.Challenge(ctx, testOffer, testRes)
	h := http.Header{}
	h.Set("Authorization", paymenttest.MPPEVM(b, w, ch, testNow))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Challenge(ctx, testOffer, testRes); err != nil {
			b.Fatal(err)
		}
		c, err := httpgate.ReadCredential(h)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Verify(ctx, testOffer, testRes, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-recover")
}

func BenchmarkChallenge(b *testing.B) {
	p := benchProcessor(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Challenge(ctx, testOffer, testRes); err != nil {
			b.Fatal(err)
		}
	}
}
