package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
)

// A stored verification is read — its result and its evidence bundle
// alike — only with the token of an order that is completed: 409 while
// the order settles, then the answer; another token gets 404, none 401.
func TestVerificationReadsWaitForTheOrder(t *testing.T) {
	ctx := context.Background()
	db := emptyDB.Open(t, nil)
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{PublicBaseURL: "https://api.example.test", ReadCredential: gatetest.ReadCredential, CashierOptions: payment.CashierOptions{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(nil, claimsstore.New(db), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := evidence.GenerateKeySpec()
	bk, _ := evidence.ParseKeys(spec)
	snaps, _ := snapshot.NewService(snapshotmem.New(), snapshotmem.NewBlobs(nil), nil)
	b, _ := evidence.New(snaps, bk, nil)
	s, err := New(Config{Paywall: gate, Claims: ClaimsConfig{Engine: eng}, Commerce: CommerceConfig{Cashier: gate.Cashier()},
		Evidence: EvidenceConfig{Builder: b}})
	if err != nil {
		t.Fatal(err)
	}
	token := ids.Token(ids.OrderToken)
	o := paymenttest.NewTestOrder("claims.verify.quick")
	o.TokenHash = ids.Hash(token)
	if err := paymentstore.New(db).OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	rec := &claims.Record{Result: &claims.Result{VerificationID: ids.New(ids.Verification), Claim: "abc", Status: claims.StatusConfirmed,
		ObservedAt: time.Now()}, Tier: claims.Quick, PageIDs: []string{}}
	if err := claimsstore.New(db).SaveVerification(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"verificationId":"` + rec.Result.VerificationID + `"}`)
	if err := paymentstore.New(db).MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "verification", ResultID: rec.Result.VerificationID,
		ResultSHA256: "00", Response: payment.StoredResponse{Status: 200, ContentType: "application/json", Body: body}}); err != nil {
		t.Fatal(err)
	}
	read := "/v1/claims/verifications/" + rec.Result.VerificationID
	for _, p := range []string{read, "/claim-verification" + read + "/evidence.wacz"} {
		if r := do(t, s, "GET", p, "", httpgate.HeaderOrderToken, token); r.Code != http.StatusConflict || r.Header().Get("Retry-After") == "" {
			t.Errorf("%s while settling: %d %s", p, r.Code, r.Body)
		}
		if r := do(t, s, "GET", p, "", httpgate.HeaderOrderToken, ids.Token(ids.OrderToken)); r.Code != http.StatusNotFound {
			t.Errorf("%s with another token: %d", p, r.Code)
		}
		if r := do(t, s, "GET", p, ""); r.Code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", p, r.Code)
		}
	}
	if err := paymentstore.New(db).CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xdev", ReceiptID: ids.New(ids.Receipt), Receipt: []byte(`{}`),
		CompletedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if r := do(t, s, "GET", read, "", httpgate.HeaderOrderToken, token); r.Code != http.StatusOK {
		t.Errorf("completed: %d %s", r.Code, r.Body)
	}
	r := do(t, s, "GET", "/claim-verification"+read+"/evidence.wacz", "", httpgate.HeaderOrderToken, token)
	if r.Code != http.StatusOK || r.Header().Get("Content-Type") != evidence.MediaType {
		t.Fatalf("bundle once completed: %d %s", r.Code, r.Body)
	}
}

// TestNicheUnlockFollowsItsOrder: an unlock token bought with an order
// unlocks the full evaluation only once that order settled; while it
// settles the read is 409, and an order that failed never unlocks.
func TestNicheUnlockFollowsItsOrder(t *testing.T) {
	ctx := context.Background()
	var ledger payment.Ledger
	f := newNicheFixtureWith(t, NicheConfig{}, func(c *Config, db *store.DB) {
		keys, err := payment.LoadKeyring(ctx, db, "")
		if err != nil {
			t.Fatal(err)
		}
		gate, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{PublicBaseURL: "https://api.example.test", ReadCredential: gatetest.ReadCredential, CashierOptions: payment.CashierOptions{Keys: keys}})
		if err != nil {
			t.Fatal(err)
		}
		c.Commerce = CommerceConfig{Cashier: gate.Cashier()}
		ledger = paymentstore.New(db)
	})
	id := f.published[0]
	open := func() (*payment.Order, string) {
		o := paymenttest.NewTestOrder("niche.evaluation")
		if err := ledger.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := ledger.MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "niche", ResultID: id, ResultSHA256: "00",
			Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}}); err != nil {
			t.Fatal(err)
		}
		tok, _, err := f.signer.Issue(id, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		return o, tok
	}
	settling, tok := open()
	for _, p := range []string{"/v1/niches/" + id, "/niche-discovery/v1/niches/" + id} {
		if r := f.get(t, p, "X-Niche-Paid-Call", tok); r.Code != http.StatusConflict || r.Header().Get("Retry-After") == "" ||
			strings.Contains(r.Body.String(), "SECRETNOTES") {
			t.Fatalf("%s while the order settles: %d %s", p, r.Code, r.Body)
		}
	}
	if err := ledger.CompleteOrder(ctx, settling.ID, payment.Settled{SettlementRef: "0xtx", ReceiptID: ids.New(ids.Receipt), Receipt: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if r := f.get(t, "/v1/niches/"+id, "X-Niche-Paid-Call", tok); r.Code != http.StatusOK {
		t.Fatalf("after settlement: %d %s", r.Code, r.Body)
	}
	failed, tok2 := open()
	if err := ledger.FailOrder(ctx, failed.ID, "settlement failed: insufficient_funds"); err != nil {
		t.Fatal(err)
	}
	if r := f.get(t, "/v1/niches/"+id, "X-Niche-Paid-Call", tok2); r.Code != http.StatusConflict || strings.Contains(r.Body.String(), "SECRETNOTES") {
		t.Fatalf("failed order: %d %s", r.Code, r.Body)
	}
}
