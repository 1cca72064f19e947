package discovery

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
)

// TestOfficialClientsPayDevServer is the official-client payment interop
// test: a full server on loopback (claim verification with a scripted
// provider, the real payment processor in dev mode behind the gate,
// commerce, discovery) paid by @x402/fetch + @x402/evm + viem (x402 v2,
// by the fetch wrapper and by hand, and x402 v1 against the v1 body) and
// by the legacy x402 1.x SDK (x402-fetch 1.2.0 with x402 1.2.0, against
// the v1 body) and by mppx (evm charge), through
// interop/payments/pay.mjs, for a claim tier (canonical and legacy path)
// and a niche pay-per-call evaluation. Every paid call must answer 200 with
// the order headers and the protocol's settlement header; the signed
// receipt read back with the order token must verify with the published
// JWKS; the same payment presented again for the same request must return
// the same purchase with a fresh token that replaces the first, and for
// another request be refused as payment_already_used. The discovery documents of that server are walked as well, so
// their prices are checked against the real processor's 402 answers.
//
// It skips with a message when node or interop/payments/node_modules is
// missing (`cd interop/payments && npm ci`).
func TestOfficialClientsPayDevServer(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	node, dir := interopDir(t, "mppx")
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	proc := devProcessor(t, ts.Listener.Addr().String())
	e := newDiscoveryEnvWith(t, proc, base, nil)
	ts.Config.Handler = e.srv
	ts.Start()
	defer ts.Close()

	walkDocuments(t, e, ts)

	body := `{"claim":"Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026.","minimumSources":1}`
	otherBody := `{"claim":"Exampleton raised its minimum wage to $18.00 per hour.","minimumSources":1}`
	targets := []map[string]any{
		{"name": "claims-standard", "method": "POST", "url": base + "/claim-verification/v1/claims/verify", "body": body, "otherBody": otherBody, "amount": "50000"},
		{"name": "claims-quick-legacy", "method": "POST", "url": base + "/v1/services/claim-verification/claims/verify/quick", "body": body, "otherBody": otherBody, "amount": "20000"},
	}
	nicheURL := base + "/niche-discovery/v1/niches/" + e.params["niche_id"] + "/pay-per-call"
	otherNiche := base + "/niche-discovery/v1/niches/" + anotherNiche(t, ts.URL, e.params["niche_id"]) + "/pay-per-call"
	targets = append(targets, map[string]any{"name": "niche-pay-per-call", "method": "GET", "url": nicheURL, "otherUrl": otherNiche, "amount": "250000"})
	cfg := map[string]any{"origin": base, "jwks": base + "/claim-verification/.well-known/jwks.json", "targets": targets}
	raw, err := marshalDoc(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := runNode(t, node, dir, "pay.mjs", string(raw))
	if err != nil {
		t.Fatalf("node pay.mjs: %v\n%v", err, lines)
	}
	clients := []string{"x402-v2-fetch", "x402-v2-manual", "x402-v1-fetch", "x402-v1-legacy", "mppx-evm"}
	seen := map[string]bool{}
	for _, l := range lines {
		key := fmt.Sprint(l["client"], "/", l["target"])
		seen[key] = true
		if l["error"] != nil {
			t.Errorf("%s: %v", key, l["error"])
			continue
		}
		if l["status"] != float64(200) {
			t.Errorf("%s: status %v: %v", key, l["status"], l["body"])
			continue
		}
		if id, _ := l["orderId"].(string); !strings.HasPrefix(id, "ord_") || l["hasToken"] != true {
			t.Errorf("%s: order headers %v %v", key, l["orderId"], l["hasToken"])
		}
		if id, _ := l["receiptId"].(string); !strings.HasPrefix(id, "rcpt_") || l["receiptMatchesHeader"] != true {
			t.Errorf("%s: receipt id %v (matches order receipt: %v)", key, l["receiptId"], l["receiptMatchesHeader"])
		}
		if _, ok := l["settlement"].(map[string]any); !ok {
			t.Errorf("%s: no settlement header", key)
			continue
		}
		if l["receiptValid"] != true || l["receiptDev"] != true {
			t.Errorf("%s: receipt valid=%v dev=%v: %v", key, l["receiptValid"], l["receiptDev"], l["receiptProblem"])
		}
		// The same payment again, same request: the same purchase, fresh
		// token; another request: payment_already_used.
		if l["replayStatus"] != float64(200) || l["replayFlag"] != "true" || l["replaySameBytes"] != true || l["replaySameOrder"] != true ||
			l["replaySameReceipt"] != true || l["freshTokenReads"] != true || l["oldTokenReads"] != false {
			t.Errorf("%s: presenting the same payment (%v) again: status %v replay %v bytes %v order %v receipt %v fresh token %v old token %v %v", key,
				l["replayHeader"], l["replayStatus"], l["replayFlag"], l["replaySameBytes"], l["replaySameOrder"], l["replaySameReceipt"],
				l["freshTokenReads"], l["oldTokenReads"], l["replayBody"])
		}
		if l["otherStatus"] != float64(402) || l["otherError"] != payment.ReasonPaymentUsed {
			t.Errorf("%s: the same payment for another request answered %v (%v)", key, l["otherStatus"], l["otherError"])
		}
		wantHeader := map[string]string{"x402-v2-fetch": "payment-signature", "x402-v2-manual": "payment-signature",
			"x402-v1-fetch": "x-payment", "x402-v1-legacy": "x-payment", "mppx-evm": "authorization"}[fmt.Sprint(l["client"])]
		if l["replayHeader"] != wantHeader {
			t.Errorf("%s: paid with header %v, want %s", key, l["replayHeader"], wantHeader)
		}
		t.Logf("%s: 200 via %v, order %v, receipt %v (%v), settlement %v, again %v (replay), other request %v %v", key, l["replayHeader"], l["orderId"],
			l["receiptId"], l["receiptProtocol"], l["settlement"].(map[string]any)["kind"], l["replayStatus"], l["otherStatus"], l["otherError"])
	}
	for _, tg := range targets {
		for _, c := range clients {
			if !seen[c+"/"+tg["name"].(string)] {
				t.Errorf("%s did not report for %s", c, tg["name"])
			}
		}
	}
}

// anotherNiche returns the id of a published niche other than id.
func anotherNiche(t *testing.T, base, id string) string {
	t.Helper()
	res, err := http.Get(base + "/niche-discovery/v1/niches?limit=5")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Niches []struct {
			ID string `json:"id"`
		} `json:"niches"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Niches {
		if n.ID != id {
			return n.ID
		}
	}
	t.Fatal("the catalogue has one niche")
	return ""
}
