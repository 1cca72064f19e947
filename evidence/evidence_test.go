package evidence_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/evidence/evidencetest"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/wacz/wacztest"
	"github.com/assaykit/assay/store/sqlite"
)

// world is a verifier on the demo corpus (served on loopback, captured
// for real), a receipt keyring and bundle keys.
type world struct {
	engine   *claims.Engine
	snaps    *snapshot.Service
	receipts *payment.Keyring
	keys     *evidence.Keys
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	coll, err := corpus.Demo()
	if err != nil {
		t.Fatal(err)
	}
	prov, err := corpus.New(coll, nil)
	if err != nil {
		t.Fatal(err)
	}
	site, err := corpus.Serve(coll)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { site.Close() })
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tw := &snapshottest.Tripwire{}
	snaps, err := snapshot.NewService(db, db, &snapshot.Options{Resolver: snapshottest.Resolver(nil), DialControl: tw.Control,
		HostMap: site.HostMap(), AllowAddrs: site.AllowList()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snaps.Close)
	engine, err := claims.New(prov, db, snaps, &claims.Options{
		OfficialDomains: coll.HostsOfKind(corpus.KindOfficial), AcademicDomains: coll.HostsOfKind(corpus.KindAcademic),
		NewsDomains: coll.HostsOfKind(corpus.KindNews), VendorDomains: coll.HostsOfKind(corpus.KindVendor)})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := evidence.GenerateKeySpec()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := evidence.ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	receipts, err := payment.ParseKeyring(payment.GenerateReceiptKey())
	if err != nil {
		t.Fatal(err)
	}
	return &world{engine: engine, snaps: snaps, receipts: receipts, keys: keys}
}

func (w *world) jwks() payment.JWKS {
	j := w.receipts.JWKS()
	j.Keys = append(j.Keys, w.keys.JWKs()...)
	return j
}

// sold verifies claim on tier and sells it: the bytes delivered and a
// receipt over them, as the gate would sign it.
func (w *world) sold(t *testing.T, tier, claim string) (*claims.Record, []byte, []byte, string) {
	t.Helper()
	res, err := w.engine.Verify(context.Background(), tier, &claims.Request{Claim: claim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := w.engine.Verification(context.Background(), res.VerificationID)
	if err != nil {
		t.Fatal(err)
	}
	body, err := httpjson.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	order := ids.New(ids.Order)
	rc := &payment.Receipt{ReceiptID: ids.New(ids.Receipt), OrderID: order, OfferID: "claims.verify." + tier, Tier: tier,
		AmountMicroUSD: 120000, Currency: "USD", PaymentProtocol: "x402", PaymentMethod: "exact", Network: "eip155:8453",
		Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", SettlementReference: "0xdev", Dev: true, ResultKind: "verification",
		ResultID: res.VerificationID, ResultSHA256: hex.EncodeToString(sum[:]), IssuedAt: time.Now().UTC().Format(time.RFC3339)}
	receipt, err := payment.SignReceipt(w.receipts, rc)
	if err != nil {
		t.Fatal(err)
	}
	return rec, body, receipt, order
}

func (w *world) bundle(t *testing.T, b *evidence.Builder, rec *claims.Record, order string, body, receipt []byte) []byte {
	t.Helper()
	src := evidence.VerificationSource(rec, order, body, evidence.FormResult, receipt)
	src.JWKS, src.JWKSURL = w.jwks(), "http://127.0.0.1/.well-known/jwks.json"
	bd, err := b.Prepare(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := bd.WriteTo(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
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
	b, err := evidence.New(w.snaps, w.keys, &evidence.Options{TSA: &wacz.TSAClient{URL: tsa.URL}})
	if err != nil {
		t.Fatal(err)
	}
	rec, body, receipt, order := w.sold(t, claims.Deep, "USDC on Base has 6 decimals.")
	bundle := w.bundle(t, b, rec, order, body, receipt)
	jwks := w.jwks()
	rep, err := check(bundle, &evidence.CheckOptions{JWKS: &jwks, TSARoots: tsa.Roots})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "confirmed" || rep.Pages == 0 || rep.Pages != len(rec.Result.Snapshots) || rep.QuotesChecked < 2 ||
		rep.Receipt == nil || rep.Timestamp == nil || !rep.TSATrusted || rep.KeysFrom != "given" || rep.SigningKeyID != w.keys.KeyID() {
		t.Fatalf("report: %+v", rep)
	}
	t.Logf("report: %+v", rep.Links)
	// Without the publisher's keys, the bundle's own are used.
	if rep, err := check(bundle, nil); err != nil || rep.KeysFrom != "bundle" {
		t.Fatalf("with the bundle's keys: %v %+v", err, rep)
	}
	// Someone else's keys: the signing key is not theirs.
	other := newWorld(t).jwks()
	var be *evidence.BrokenLinkError
	if _, err := check(bundle, &evidence.CheckOptions{JWKS: &other}); !errors.As(err, &be) || be.Link != evidence.LinkSignature {
		t.Fatalf("another publisher's keys: %v", err)
	}
	for _, link := range evidencetest.Links {
		t.Run(strings.ReplaceAll(link, " ", "_"), func(t *testing.T) {
			bad, err := evidencetest.Tamper(bundle, link, w.keys, w.receipts)
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
	b, err := evidence.New(w.snaps, w.keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, body, receipt, order := w.sold(t, claims.Quick, "Base mainnet uses chain ID 8453.")
	if len(rec.Result.Snapshots) != 0 || len(rec.PageIDs) == 0 {
		t.Fatalf("quick: %d snapshots, pages %v", len(rec.Result.Snapshots), rec.PageIDs)
	}
	bundle := w.bundle(t, b, rec, order, body, receipt)
	jwks := w.jwks()
	rep, err := check(bundle, &evidence.CheckOptions{JWKS: &jwks})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pages == 0 || rep.QuotesChecked == 0 || rep.Timestamp != nil || rep.Verdict != "confirmed" {
		t.Fatalf("report: %+v", rep)
	}
	var be *evidence.BrokenLinkError
	for _, link := range []string{evidence.LinkSnapshots, evidence.LinkQuotes} {
		bad, err := evidencetest.Tamper(bundle, link, w.keys, w.receipts)
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
	b, _ := evidence.New(w.snaps, w.keys, nil)
	rec, body, receipt, order := w.sold(t, claims.Standard, "Base mainnet uses chain ID 8453.")
	if _, err := w.snaps.Purge(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	src := evidence.VerificationSource(rec, order, body, evidence.FormResult, receipt)
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
	b, _ := evidence.New(w.snaps, w.keys, &evidence.Options{TSA: &wacz.TSAClient{URL: tsa.URL}})
	rec, body, receipt, order := w.sold(t, claims.Standard, "USDC on Base has 6 decimals.")
	bundle := w.bundle(t, b, rec, order, body, receipt)
	jwks := w.jwks()
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
