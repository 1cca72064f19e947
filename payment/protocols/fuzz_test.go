package protocols_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/protocols"
	"github.com/assaykit/assay/payment/x402"
)

func FuzzDecodeX402Header(f *testing.F) {
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0=")
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0")
	f.Add("%%%")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		var pr x402.PaymentRequired
		_ = x402.DecodeHeader(s, &pr)
		var pl x402.PaymentPayload
		_ = x402.DecodeHeader(s, &pl)
		var sr x402.SettleResponse
		_ = x402.DecodeHeader(s, &sr)
	})
}

// FuzzVerify feeds arbitrary header values through ReadCredential and
// Verify: every outcome must be a credential, nil, or an error — never a
// panic — and every error from a malformed header must be a *Problem.
func FuzzVerify(f *testing.F) {
	p, err := protocols.New(&protocols.Options{PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Dev: true,
		MPPSecret: []byte("0123456789abcdef0123456789abcdef"), Realm: "api.example.com",
		Now: func() time.Time { return time.Unix(1_790_000_000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	offer := payment.Offer{ID: "o", AmountMicroUSD: 250000, WorkTimeout: time.Minute}
	res := payment.Resource{URL: "https://api.example.com/x"}
	f.Add(uint8(0), base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":120,"extra":{"name":"USD Coin","version":"2"}},"payload":{"signature":"0x00","authorization":{}}}`)))
	f.Add(uint8(1), base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x","authorization":{"from":"0x","to":"0x","value":"1","validAfter":"0","validBefore":"9","nonce":"0x"}}}`)))
	f.Add(uint8(2), "Payment "+b64url(`{"challenge":{"id":"a","realm":"api.example.com","method":"evm","intent":"charge","request":"e30","expires":"2030-01-01T00:00:00Z"},"payload":{"type":"authorization"}}`))
	f.Add(uint8(3), "Payment "+b64url(`{"challenge":{"method":"stripe"},"payload":{"spt":"x"}}`))
	names := []string{x402.HeaderPaymentSignature, x402.HeaderXPayment, mpp.HeaderAuthorization, mpp.HeaderPaymentAuthorization}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		h := http.Header{}
		h.Set(names[int(which)%len(names)], value)
		c, err := httpgate.ReadCredential(h)
		if err != nil {
			if _, ok := err.(*payment.Problem); !ok {
				t.Fatalf("ReadCredential error is not a *Problem: %v", err)
			}
			return
		}
		if c == nil {
			return
		}
		a, err := p.Verify(context.Background(), offer, res, c)
		if err == nil && a == nil {
			t.Fatal("nil authorization without error")
		}
	})
}

// FuzzVerifyJSON fuzzes the decoded JSON of each credential header, so the
// fuzzer reaches the verification logic rather than the base64 layer.
func FuzzVerifyJSON(f *testing.F) {
	p, err := protocols.New(&protocols.Options{PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Dev: true,
		MPPSecret: []byte("0123456789abcdef0123456789abcdef"), Realm: "api.example.com",
		Now: func() time.Time { return time.Unix(1_790_000_000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	offer := payment.Offer{ID: "o", AmountMicroUSD: 250000, WorkTimeout: time.Minute}
	res := payment.Resource{URL: "https://api.example.com/x"}
	f.Add(uint8(0), `{"x402Version":2,"resource":{"url":"https://api.example.com/x"},"accepted":{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":120,"extra":{"name":"USD Coin","version":"2"}},"payload":{"signature":"0x2381a7e0982bf923e57c2a3fe4a8b3a62d47d91680eb93932a17b4b845eaf64706c58784700304ef4183fce5590a81453230609beebb5466f35866797e5edf771b","authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x1111111111111111111111111111111111111111111111111111111111111111"}},"extensions":{"payment-identifier":{"info":{"id":"pay_0123456789abcdef"}}}}`)
	f.Add(uint8(1), `{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x2381a7e0982bf923e57c2a3fe4a8b3a62d47d91680eb93932a17b4b845eaf64706c58784700304ef4183fce5590a81453230609beebb5466f35866797e5edf771b","authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x1111111111111111111111111111111111111111111111111111111111111111"}}}`)
	f.Add(uint8(2), `{"challenge":{"id":"a","realm":"api.example.com","method":"evm","intent":"charge","request":"e30","expires":"2030-01-01T00:00:00Z","opaque":{"q":"x"}},"source":"did:pkh:eip155:8453:0x","payload":{"type":"authorization","from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x11","signature":"0x"}}`)
	f.Add(uint8(3), `{"challenge":{"method":"stripe","intent":"charge"},"payload":{"spt":"spt_1"}}`)
	f.Fuzz(func(t *testing.T, which uint8, js string) {
		h := http.Header{}
		switch which % 4 {
		case 0:
			h.Set(x402.HeaderPaymentSignature, base64.StdEncoding.EncodeToString([]byte(js)))
		case 1:
			h.Set(x402.HeaderXPayment, base64.StdEncoding.EncodeToString([]byte(js)))
		case 2:
			h.Set(mpp.HeaderAuthorization, "Payment "+b64url(js))
		default:
			h.Set(mpp.HeaderPaymentAuthorization, "Payment "+b64url(js))
		}
		c, err := httpgate.ReadCredential(h)
		if err != nil || c == nil {
			return
		}
		a, err := p.Verify(context.Background(), offer, res, c)
		if err == nil && a == nil {
			t.Fatal("nil authorization without error")
		}
		// The fuzzer cannot forge signatures: anything that verifies
		// is the seed's genuine payment by the test key, for the price.
		if err == nil && (a.Payer != "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" || a.AmountMicroUSD != 250000) {
			t.Fatalf("unexpected verification %+v of %s", a, js)
		}
	})
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
