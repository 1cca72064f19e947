package discovery

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
)

// TestBazaarExtensionInChallenges wires Bazaar into the real processor and
// reads extensions.bazaar from the 402 answers of a claim tier and of the
// paid niche search.
func TestBazaarExtensionInChallenges(t *testing.T) {
	bz := &Bazaar{}
	if bz.Extensions(payment.Offer{ID: "claims.verify.deep"}, payment.Resource{}) != nil {
		t.Error("an unbound Bazaar described something")
	}
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true, Extensions: bz.Extensions})
	if err != nil {
		t.Fatal(err)
	}
	e := newDiscoveryEnvWith(t, proc, testPublicBase, nil)
	bz.Bind(e.srv)
	ts := httptest.NewServer(e.srv)
	defer ts.Close()

	type bazaar struct {
		Info struct {
			Input struct {
				Type        string            `json:"type"`
				Method      string            `json:"method"`
				BodyType    string            `json:"bodyType"`
				Body        map[string]any    `json:"body"`
				QueryParams map[string]string `json:"queryParams"`
			} `json:"input"`
			Output map[string]any `json:"output"`
		} `json:"info"`
		Schema struct {
			Properties struct {
				Input struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"input"`
			} `json:"properties"`
		} `json:"schema"`
	}
	read := func(method, path, body string) bazaar {
		t.Helper()
		rec := do(t, e.srv, method, path, body)
		if rec.Code != 402 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		raw, err := base64.StdEncoding.DecodeString(rec.Header().Get("Payment-Required"))
		if err != nil {
			t.Fatal(err)
		}
		var pr struct {
			Extensions map[string]bazaar `json:"extensions"`
		}
		if err := json.Unmarshal(raw, &pr); err != nil {
			t.Fatal(err)
		}
		b, ok := pr.Extensions["bazaar"]
		if !ok {
			t.Fatalf("%s: no bazaar extension in %s", path, raw)
		}
		return b
	}
	b := read("POST", "/claim-verification/v1/claims/verify/deep", goodBody)
	in := b.Info.Input
	if in.Type != "http" || in.Method != "POST" || in.BodyType != "json" || in.Body["claim"] == nil || b.Info.Output == nil {
		t.Errorf("claims bazaar input %+v output %v", in, b.Info.Output)
	}
	if len(b.Schema.Properties.Input.Properties["body"]) < 20 {
		t.Errorf("claims bazaar body schema %s", b.Schema.Properties.Input.Properties["body"])
	}
	n := read("GET", "/niche-discovery/v1/search/pay-per-call?q=dental+clinics", "")
	if n.Info.Input.Method != "GET" || n.Info.Input.QueryParams["q"] == "" {
		t.Errorf("niche search bazaar input %+v", n.Info.Input)
	}
}
