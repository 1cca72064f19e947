package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/evidence/evidencetest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot/wacz/wacztest"
)

// bundleKeys are fixed keys of a test server, so that the test can make
// tampered copies signed with the publisher's own keys.
func bundleKeys(t *testing.T) (env map[string]string, keys *evidence.Keys, receipts *payment.Keyring) {
	t.Helper()
	bk, err := evidence.GenerateKeySpec()
	if err != nil {
		t.Fatal(err)
	}
	rk := payment.GenerateReceiptKey()
	keys, _ = evidence.ParseKeys(bk)
	receipts, _ = payment.ParseKeyring(rk)
	return map[string]string{"ASSAY_BUNDLE_KEY": bk, "ASSAY_RECEIPT_KEY": rk}, keys, receipts
}

func fetchJWKS(t *testing.T, base string) payment.JWKS {
	t.Helper()
	_, _, jb := get(t, http.DefaultClient, base+"/.well-known/jwks.json")
	var jwks payment.JWKS
	if err := json.Unmarshal(jb, &jwks); err != nil {
		t.Fatal(err)
	}
	return jwks
}

// A paid deep verification in dev mode yields an evidence bundle for the
// holder of its order token; the bundle checks against the published JWKS
// (whose keys it names), and each tampered copy is refused at its link.
func TestPaidVerificationYieldsABundle(t *testing.T) {
	t.Parallel()
	env, keys, receipts := bundleKeys(t)
	tsa, err := wacztest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer tsa.Close()
	env["ASSAY_TSA_URL"] = tsa.URL
	base := startServer(t, env)
	payer := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{BudgetMicroUSD: 2_000_000})}
	res, err2 := payer.Post(base+"/v1/claims/verify/deep", "application/json", strings.NewReader(`{"claim":"USDC on Base has 6 decimals."}`))
	if err2 != nil {
		t.Fatal(err2)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("paid: %d %s", res.StatusCode, body)
	}
	var result struct {
		VerificationID string `json:"verificationId"`
	}
	if err := json.Unmarshal(body, &result); err != nil {
		t.Fatal(err)
	}
	token := res.Header.Get("X-Agentic-Order-Token")
	url := base + "/claim-verification/v1/claims/verifications/" + result.VerificationID + "/evidence.wacz"
	if st, _, _ := get(t, http.DefaultClient, url); st != 401 {
		t.Fatalf("without a token: %d", st)
	}
	if st, _, _ := get(t, http.DefaultClient, url, "X-Agentic-Order-Token", "ort_"+strings.Repeat("0", 32)); st != 404 {
		t.Fatalf("with another token: %d", st)
	}
	st, h, bundle := get(t, http.DefaultClient, url, "X-Agentic-Order-Token", token)
	if st != 200 || h.Get("Content-Type") != "application/wacz" || !strings.Contains(h.Get("Content-Disposition"), result.VerificationID+".wacz") {
		t.Fatalf("bundle: %d %v %.200s", st, h, bundle)
	}
	jwks := fetchJWKS(t, base)
	if !evidence.Published(jwks, &keys.Signing().PublicKey) {
		t.Fatalf("the bundle key is not in the JWKS: %+v", jwks)
	}
	rep, err := evidence.Check(bytes.NewReader(bundle), int64(len(bundle)), &evidence.CheckOptions{JWKS: &jwks, TSARoots: tsa.Roots})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Timestamp == nil || !rep.TSATrusted || tsa.Requests.Load() != 1 {
		t.Fatalf("timestamp: %+v (%d TSA requests)", rep, tsa.Requests.Load())
	}
	if rep.Verdict != "confirmed" || rep.Tier != "deep" || rep.Receipt == nil || !rep.Receipt.Dev || rep.QuotesChecked < 2 ||
		rep.Receipt.OrderID != res.Header.Get("X-Agentic-Order-Id") {
		t.Fatalf("report: %+v", rep)
	}
	var be *evidence.BrokenLinkError
	for _, link := range evidencetest.Links {
		bad, err := evidencetest.Tamper(bundle, link, keys, receipts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := evidence.Check(bytes.NewReader(bad), int64(len(bad)), &evidence.CheckOptions{JWKS: &jwks}); !errors.As(err, &be) || be.Link != link {
			t.Errorf("tampered at %q: %v", link, err)
		}
	}
}

// The niche evaluation's bundle goes to the holder of a pay-per-call
// unlock token (with that order's bytes and receipt), not to anyone else.
func TestNicheEvaluationBundle(t *testing.T) {
	t.Parallel()
	base := startServer(t, map[string]string{"ASSAY_NICHE_DEMO": "true"})
	_, _, lb := get(t, http.DefaultClient, base+"/v1/niches?limit=1")
	var list struct {
		Niches []struct {
			ID string `json:"id"`
		} `json:"niches"`
	}
	if err := json.Unmarshal(lb, &list); err != nil || len(list.Niches) == 0 {
		t.Fatalf("%v %s", err, lb)
	}
	id := list.Niches[0].ID
	url := base + "/niche-discovery/v1/niches/" + id + "/evidence.wacz"
	if st, _, _ := get(t, http.DefaultClient, url); st != 401 {
		t.Fatalf("locked: %d", st)
	}
	payer := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, nil)}
	res, err := payer.Get(base + "/niche-discovery/v1/niches/" + id + "/pay-per-call")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	st, _, bundle := get(t, http.DefaultClient, url, "x-niche-paid-call", res.Header.Get("X-Niche-Paid-Call"))
	if st != 200 {
		t.Fatalf("bundle: %d %s", st, bundle)
	}
	jwks := fetchJWKS(t, base)
	rep, err := evidence.Check(bytes.NewReader(bundle), int64(len(bundle)), &evidence.CheckOptions{JWKS: &jwks})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != evidence.KindEvaluation || rep.ID != id || rep.Receipt == nil || rep.Pages == 0 || rep.SnapshotsChecked == 0 {
		t.Fatalf("report: %+v", rep)
	}
}
