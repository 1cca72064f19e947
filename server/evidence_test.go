package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
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
	gate, err := payment.NewGate(&gatetest.Processor{}, db, &payment.GateOptions{PublicBaseURL: "https://api.example.test", CashierOptions: payment.CashierOptions{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(nil, db, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := evidence.GenerateKeySpec()
	bk, _ := evidence.ParseKeys(spec)
	snaps, _ := snapshot.NewService(snapshottest.NewMemStore(), snapshottest.NewMemBlobs(nil), nil)
	b, _ := evidence.New(snaps, bk, nil)
	s, err := New(Config{Paywall: gate, Claims: ClaimsConfig{Engine: eng}, Commerce: CommerceConfig{Cashier: gate.Cashier()},
		Evidence: EvidenceConfig{Builder: b}})
	if err != nil {
		t.Fatal(err)
	}
	token := ids.Token(ids.OrderToken)
	o := paymenttest.NewTestOrder("claims.verify.quick")
	o.TokenHash = ids.Hash(token)
	if err := db.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	rec := &claims.Record{Result: &claims.Result{VerificationID: ids.New(ids.Verification), Claim: "abc", Status: claims.StatusConfirmed,
		ObservedAt: time.Now()}, Tier: claims.Quick, OrderID: o.ID, OrderTokenHash: o.TokenHash, PageIDs: []string{}}
	if err := db.SaveVerification(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"verificationId":"` + rec.Result.VerificationID + `"}`)
	if err := db.MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "verification", ResultID: rec.Result.VerificationID,
		ResultSHA256: "00", Response: payment.StoredResponse{Status: 200, ContentType: "application/json", Body: body}}); err != nil {
		t.Fatal(err)
	}
	read := "/v1/claims/verifications/" + rec.Result.VerificationID
	for _, p := range []string{read, "/claim-verification" + read + "/evidence.wacz"} {
		if r := do(t, s, "GET", p, "", payment.HeaderOrderToken, token); r.Code != http.StatusConflict || r.Header().Get("Retry-After") == "" {
			t.Errorf("%s while settling: %d %s", p, r.Code, r.Body)
		}
		if r := do(t, s, "GET", p, "", payment.HeaderOrderToken, ids.Token(ids.OrderToken)); r.Code != http.StatusNotFound {
			t.Errorf("%s with another token: %d", p, r.Code)
		}
		if r := do(t, s, "GET", p, ""); r.Code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", p, r.Code)
		}
	}
	if err := db.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xdev", ReceiptID: ids.New(ids.Receipt), Receipt: []byte(`{}`),
		CompletedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if r := do(t, s, "GET", read, "", payment.HeaderOrderToken, token); r.Code != http.StatusOK {
		t.Errorf("completed: %d %s", r.Code, r.Body)
	}
	r := do(t, s, "GET", "/claim-verification"+read+"/evidence.wacz", "", payment.HeaderOrderToken, token)
	if r.Code != http.StatusOK || r.Header().Get("Content-Type") != evidence.MediaType {
		t.Fatalf("bundle once completed: %d %s", r.Code, r.Body)
	}
}
