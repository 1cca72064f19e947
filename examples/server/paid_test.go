package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
)

// get fetches url with optional header pairs and returns status and body.
func get(t *testing.T, c *http.Client, url string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// verifyReceiptOffline fetches the order with its token, then checks the
// receipt against the published JWKS and the delivered bytes.
func verifyReceiptOffline(t *testing.T, base string, res *http.Response, body []byte) *payment.Receipt {
	t.Helper()
	orderID, token := res.Header.Get("X-Agentic-Order-Id"), res.Header.Get("X-Agentic-Order-Token")
	if orderID == "" || token == "" || res.Header.Get("X-Agentic-Receipt-Id") == "" {
		t.Fatalf("order headers missing: %v", res.Header)
	}
	status, _, ob := get(t, http.DefaultClient, base+"/v1/orders/"+orderID, "X-Agentic-Order-Token", token)
	if status != 200 {
		t.Fatalf("order lookup: %d %s", status, ob)
	}
	var order struct {
		Status  string          `json:"status"`
		Receipt json.RawMessage `json:"receipt"`
	}
	if err := json.Unmarshal(ob, &order); err != nil || order.Status != "completed" {
		t.Fatalf("order: %v %s", err, ob)
	}
	_, _, jb := get(t, http.DefaultClient, base+"/.well-known/jwks.json")
	var jwks payment.JWKS
	if err := json.Unmarshal(jb, &jwks); err != nil {
		t.Fatal(err)
	}
	rc, err := payment.VerifyReceipt(order.Receipt, jwks)
	if err != nil {
		t.Fatalf("receipt does not verify with the JWKS: %v", err)
	}
	sum := sha256.Sum256(body)
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) || !rc.Dev || rc.OrderID != orderID {
		t.Fatalf("receipt does not match what was delivered: %+v", rc)
	}
	return rc
}

func TestPaidVerificationEndToEnd(t *testing.T) {
	t.Parallel()
	base := startServer(t, nil)
	wallet := paymenttest.DevWallet()
	payer := &http.Client{Transport: paying.NewTransport(wallet, nil, &paying.TransportOptions{BudgetMicroUSD: 2_000_000})}

	// The default request (two independent sources) is confirmed by the
	// offline corpus: the quick start works as the README shows it.
	body := `{"claim":"The Base mainnet chain ID is 8453."}`
	// Unpaid: 402 with both protocols, nothing run.
	res, err := http.Post(base+"/v1/claims/verify/deep", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 402 || res.Header.Get("Payment-Required") == "" || res.Header.Get("Www-Authenticate") == "" {
		t.Fatalf("unpaid: %d %v", res.StatusCode, res.Header)
	}
	// Invalid input: 422, never a challenge.
	res, err = payer.Post(base+"/v1/claims/verify/deep", "application/json", strings.NewReader(`{"claim":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 422 {
		t.Fatalf("invalid claim: %d", res.StatusCode)
	}

	res, err = payer.Post(base+"/v1/claims/verify/deep", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("paid: %d %s", res.StatusCode, got)
	}
	var result struct {
		VerificationID string `json:"verificationId"`
		Status         string `json:"status"`
		Snapshots      []struct {
			SnapshotID string `json:"snapshotId"`
			Status     string `json:"status"`
			RawSHA256  string `json:"rawSha256"`
		} `json:"snapshots"`
		Provenance struct {
			Provider string `json:"provider"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(got, &result); err != nil {
		t.Fatal(err)
	}
	if result.Status != "confirmed" || result.Provenance.Provider != "corpus" || len(result.Snapshots) == 0 {
		t.Fatalf("unexpected result: %s", got)
	}
	rc := verifyReceiptOffline(t, base, res, got)
	if rc.ResultID != result.VerificationID || rc.Tier != "deep" || rc.AmountMicroUSD != 120_000 {
		t.Fatalf("receipt names the wrong result: %+v", rc)
	}
	// The snapshot is a real capture: its content re-hashes to rawSha256.
	for _, s := range result.Snapshots {
		if s.Status != "captured" {
			continue
		}
		_, h, content := get(t, http.DefaultClient, base+"/claim-verification/v1/url-snapshots/"+s.SnapshotID+"/content")
		sum := sha256.Sum256(content)
		if hex.EncodeToString(sum[:]) != s.RawSHA256 || h.Get("Content-Disposition") == "" {
			t.Fatalf("snapshot %s content does not match its hash", s.SnapshotID)
		}
	}
	if info, ok := paying.ResponseInfo(res); !ok || info.AmountMicroUSD != 120_000 {
		t.Fatalf("payment info: %+v %v", info, ok)
	}
	// The domain metrics saw it.
	_, _, mb := get(t, http.DefaultClient, base+"/metrics")
	for _, want := range []string{
		`assay_verifications_total{status="confirmed",tier="deep"} 1`,
		`assay_payments_total{outcome="settled",protocol="x402"} 1`,
		`assay_payment_amount_microusd_total{protocol="x402"} 120000`,
		`assay_snapshots_total{status="captured"}`,
		`assay_provider_search_calls_total{provider="corpus"}`,
	} {
		if !strings.Contains(string(mb), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// A payment presented again answers its purchase for the same request
// (the credential is the purchase) and is refused for another.
func TestReplayedPaymentRefused(t *testing.T) {
	t.Parallel()
	base := startServer(t, nil)
	body := []byte(`{"claim":"The Base mainnet chain ID is 8453."}`)
	payload := payFresh(t, base+"/v1/claims/verify/quick", body)
	send := func(body []byte) (int, string) {
		r, _ := http.NewRequest("POST", base+"/v1/claims/verify/quick", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Payment-Signature", payload)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get(httpgate.HeaderReplay)
	}
	if s, _ := send(body); s != 200 {
		t.Fatalf("first use: %d", s)
	}
	if s, replay := send(body); s != 200 || replay != "true" {
		t.Fatalf("the same request again: %d (replay %q), want 200 and its purchase", s, replay)
	}
	if s, _ := send([]byte(`{"claim":"USDC on Base uses 6 decimals."}`)); s != 402 {
		t.Fatalf("another request: %d, want 402", s)
	}
}

func TestNichePurchaseEndToEnd(t *testing.T) {
	t.Parallel()
	base := startServer(t, map[string]string{"ASSAY_NICHE_DEMO": "true"})
	status, _, lb := get(t, http.DefaultClient, base+"/v1/niches?limit=3")
	if status != 200 {
		t.Fatalf("list: %d %s", status, lb)
	}
	var list struct {
		Niches []struct {
			ID string `json:"id"`
		} `json:"niches"`
	}
	if err := json.Unmarshal(lb, &list); err != nil || len(list.Niches) == 0 {
		t.Fatalf("demo catalogue not listed: %v %s", err, lb)
	}
	id := list.Niches[0].ID
	if status, _, _ := get(t, http.DefaultClient, base+"/v1/niches/"+id); status != 401 {
		t.Fatalf("locked detail: %d", status)
	}
	payer := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, nil)}
	res, err := payer.Get(base + "/niche-discovery/v1/niches/" + id + "/pay-per-call")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("pay-per-call: %d %s", res.StatusCode, got)
	}
	rc := verifyReceiptOffline(t, base, res, got)
	if rc.ResultID != id || rc.AmountMicroUSD != 250_000 {
		t.Fatalf("receipt: %+v", rc)
	}
	unlock := res.Header.Get("X-Niche-Paid-Call")
	status, _, full := get(t, http.DefaultClient, base+"/v1/niches/"+id, "x-niche-paid-call", unlock)
	if status != 200 {
		t.Fatalf("unlock token does not unlock: %d", status)
	}
	checkCapturedEvidence(t, base, full)
	if other := list.Niches[len(list.Niches)-1].ID; other != id {
		if status, _, _ := get(t, http.DefaultClient, base+"/v1/niches/"+other, "x-niche-paid-call", unlock); status == 200 {
			t.Fatal("unlock token opened another niche")
		}
	}
}

// checkCapturedEvidence checks that a demo evaluation lists its evidence
// captured (the demo pages are served on loopback), with per-criterion
// rationale, and that the snapshot routes under the niche prefix serve
// the first capture's record and content.
func checkCapturedEvidence(t *testing.T, base string, full []byte) {
	t.Helper()
	var ev struct {
		Rationale map[string]string `json:"rationale"`
		Review    struct {
			Status string `json:"status"`
		} `json:"review"`
		Evidence []struct {
			SnapshotID    *string `json:"snapshotId"`
			CaptureStatus string  `json:"captureStatus"`
			Snapshot      *struct {
				RawSHA256   string `json:"rawSha256"`
				RetrievedAt string `json:"retrievedAt"`
			} `json:"snapshot"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal(full, &ev); err != nil || len(ev.Evidence) == 0 {
		t.Fatalf("full evaluation: %v %s", err, full)
	}
	if len(ev.Rationale) != 6 || ev.Rationale["pain"] == "" || ev.Review.Status != "reviewed" {
		t.Fatalf("rationale %v, review %+v", ev.Rationale, ev.Review)
	}
	for _, x := range ev.Evidence {
		if x.CaptureStatus != "captured" || x.SnapshotID == nil || x.Snapshot == nil || len(x.Snapshot.RawSHA256) != 64 {
			t.Fatalf("evidence not captured: %s", full)
		}
	}
	id := *ev.Evidence[0].SnapshotID
	if status, _, b := get(t, http.DefaultClient, base+"/niche-discovery/v1/url-snapshots/"+id); status != 200 ||
		!strings.Contains(string(b), ev.Evidence[0].Snapshot.RawSHA256) || !strings.Contains(string(b), `"expiresAt":null`) {
		t.Fatalf("snapshot record: %d %s, want the hash and no expiry (held while the evaluation needs it)", status, b)
	}
	status, _, page := get(t, http.DefaultClient, base+"/niche-discovery/v1/url-snapshots/"+id+"/content")
	if status != 200 {
		t.Fatalf("snapshot content: %d", status)
	}
	if sum := sha256.Sum256(page); hex.EncodeToString(sum[:]) != ev.Evidence[0].Snapshot.RawSHA256 {
		t.Fatal("snapshot content does not hash to rawSha256")
	}
}
