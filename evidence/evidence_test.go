package evidence_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/evidence/evidencetest"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/wacz/wacztest"
)

func newWorld(t *testing.T) *evidencetest.World {
	t.Helper()
	w, err := evidencetest.NewWorld(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Close()
		if d := w.Tripwire.Denied(); len(d) > 0 {
			t.Errorf("a capture tried to dial off loopback: %v", d)
		}
	})
	return w
}

// sold sells a verification and bundles it with b.
func sold(t *testing.T, w *evidencetest.World, b *evidence.Builder, tier, claim string) (*evidencetest.Sale, []byte) {
	t.Helper()
	s, err := w.Sell(context.Background(), tier, claim)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := w.Bundle(context.Background(), b, s)
	if err != nil {
		t.Fatal(err)
	}
	return s, bundle
}

func check(b []byte, opts *evidence.CheckOptions) (*evidence.Report, error) {
	return evidence.Check(bytes.NewReader(b), int64(len(b)), opts)
}

func TestDeepBundleChecksAndEveryTamperedCopyIsRefused(t *testing.T) {
	w := newWorld(t)
	tsa, err := wacztest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer tsa.Close()
	b, err := evidence.New(w.Snapshots, w.Keys, &evidence.Options{TSA: &wacz.TSAClient{URL: tsa.URL}})
	if err != nil {
		t.Fatal(err)
	}
	sale, bundle := sold(t, w, b, claims.Deep, "USDC on Base has 6 decimals.")
	rec := sale.Record
	jwks := w.JWKS()
	rep, err := check(bundle, &evidence.CheckOptions{JWKS: &jwks, TSARoots: tsa.Roots})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "confirmed" || rep.Pages == 0 || rep.Pages != len(rec.Result.Snapshots) || rep.QuotesChecked < 2 ||
		rep.Receipt == nil || rep.Timestamp == nil || !rep.TSATrusted || rep.KeysFrom != "given" || rep.SigningKeyID != w.Keys.KeyID() {
		t.Fatalf("report: %+v", rep)
	}
	t.Logf("report: %+v", rep.Links)
	// Without the publisher's keys, the bundle's own are used.
	if rep, err := check(bundle, nil); err != nil || rep.KeysFrom != "bundle" {
		t.Fatalf("with the bundle's keys: %v %+v", err, rep)
	}
	// Someone else's keys: the signing key is not theirs.
	other := newWorld(t).JWKS()
	var be *evidence.BrokenLinkError
	if _, err := check(bundle, &evidence.CheckOptions{JWKS: &other}); !errors.As(err, &be) || be.Link != evidence.LinkSignature {
		t.Fatalf("another publisher's keys: %v", err)
	}
	for _, link := range evidencetest.Links {
		t.Run(strings.ReplaceAll(link, " ", "_"), func(t *testing.T) {
			bad, err := evidencetest.Tamper(bundle, link, w.Keys, w.Receipts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = check(bad, &evidence.CheckOptions{JWKS: &jwks, TSARoots: tsa.Roots})
			if !errors.As(err, &be) || be.Link != link {
				t.Fatalf("tampered at %q: got %v", link, err)
			}
			t.Logf("%v", err)
		})
	}
}

// The quick tier lists no snapshots, yet its bundle carries the pages it
// checked quotes on, matched to evidence by URL.
func TestQuickBundleCarriesItsPages(t *testing.T) {
	w := newWorld(t)
	b, err := evidence.New(w.Snapshots, w.Keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	sale, bundle := sold(t, w, b, claims.Quick, "Base mainnet uses chain ID 8453.")
	if rec := sale.Record; len(rec.Result.Snapshots) != 0 || len(rec.PageIDs) == 0 {
		t.Fatalf("quick: %d snapshots, pages %v", len(rec.Result.Snapshots), rec.PageIDs)
	}
	jwks := w.JWKS()
	rep, err := check(bundle, &evidence.CheckOptions{JWKS: &jwks})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pages == 0 || rep.QuotesChecked == 0 || rep.Timestamp != nil || rep.Verdict != "confirmed" {
		t.Fatalf("report: %+v", rep)
	}
	var be *evidence.BrokenLinkError
	for _, link := range []string{evidence.LinkSnapshots, evidence.LinkQuotes} {
		bad, err := evidencetest.Tamper(bundle, link, w.Keys, w.Receipts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := check(bad, &evidence.CheckOptions{JWKS: &jwks}); !errors.As(err, &be) || be.Link != link {
			t.Fatalf("quick tampered at %q: %v", link, err)
		}
	}
}

// A page purged before the bundle is asked for fails Prepare, before any
// byte is written.
func TestPurgedPageFailsBeforeWriting(t *testing.T) {
	w := newWorld(t)
	b, _ := evidence.New(w.Snapshots, w.Keys, nil)
	sale, err := w.Sell(context.Background(), claims.Standard, "Base mainnet uses chain ID 8453.")
	if err != nil {
		t.Fatal(err)
	}
	// Pages in use by a stored verification outlive their retention...
	if _, err := w.Snapshots.Purge(context.Background(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	src := evidence.VerificationSource(sale.Record, sale.OrderID, sale.Delivered, evidence.FormResult, sale.Receipt)
	if _, err := b.Prepare(context.Background(), src); err != nil {
		t.Fatalf("pages in use purged: %v", err)
	}
	// ...until their last use is older than the cutoff.
	if _, err := w.Snapshots.Purge(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prepare(context.Background(), src); !errors.Is(err, evidence.ErrEvidenceGone) {
		t.Fatalf("purged: %v", err)
	}
	if _, err := b.Prepare(context.Background(), &evidence.Source{Form: evidence.FormResult}); !errors.Is(err, evidence.ErrNotBundlable) {
		t.Fatalf("no bytes: %v", err)
	}
}

func TestKeys(t *testing.T) {
	spec, _ := evidence.GenerateKeySpec()
	old, _ := evidence.GenerateKeySpec()
	k, err := evidence.ParseKeys(spec + ", " + old)
	if err != nil || len(k.JWKs()) != 2 || k.JWKs()[0].Kid != k.KeyID() || k.JWKs()[0].Kty != "EC" || k.JWKs()[0].Y == "" {
		t.Fatalf("%v %+v", err, k.JWKs())
	}
	for _, bad := range []string{"", "ed25519:AAAA", "ecdsa-p384:!!", "ecdsa-p384-pub:" + strings.TrimPrefix(spec, "ecdsa-p384:")} {
		if _, err := evidence.ParseKeys(bad); !errors.Is(err, evidence.ErrBadKey) {
			t.Errorf("ParseKeys(%q): %v", bad, err)
		}
	}
}

// Any byte changed anywhere in a bundle (here every 7th, in turn, of a
// timestamped one) makes Check fail: contents are hashed, the manifests
// signed, and the ZIP framing around them must be the one the writer
// makes.
func TestAnyChangedByteIsRefused(t *testing.T) {
	w := newWorld(t)
	tsa, err := wacztest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer tsa.Close()
	b, _ := evidence.New(w.Snapshots, w.Keys, &evidence.Options{TSA: &wacz.TSAClient{URL: tsa.URL}})
	_, bundle := sold(t, w, b, claims.Standard, "USDC on Base has 6 decimals.")
	jwks := w.JWKS()
	opts := &evidence.CheckOptions{JWKS: &jwks, TSARoots: tsa.Roots}
	if _, err := check(bundle, opts); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(bundle); i += 7 {
		c := append([]byte(nil), bundle...)
		c[i] ^= 0x01
		if _, err := check(c, opts); err == nil {
			t.Fatalf("byte %d of %d changed, and the bundle still checks: %q", i, len(bundle), bundle[max(0, i-8):min(len(bundle), i+8)])
		}
	}
}
