package payment

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func FuzzParseMPPChallenges(f *testing.F) {
	for _, s := range []string{
		`Payment id="abc", realm="r", method="evm", intent="charge", request="e30"`,
		`Basic realm="x", Payment id=abc, realm=r, method=evm, intent=charge, request=e30, Bearer tok==`,
		`Payment id="a\"b\\c\u00e9", realm="", method="evm", intent="charge", request="e30", opaque="x"`,
		`Payment ,,,=,"",\\, id=`, `Payment id="unterminated`, `payment`, `=`, `"`, `a=b=c, ,`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, _ := ParseMPPChallenges([]string{s, s})
		for _, c := range cs {
			// A parsed challenge re-serialises to something that parses
			// to the same challenge.
			again, err := ParseMPPChallenges([]string{c.String()})
			if err != nil || len(again) != 1 || again[0] != c {
				// Round trip may legitimately differ only for
				// characters we replace (controls, non-BMP).
				if clean(c) {
					t.Fatalf("round trip of %q: %+v, %v", c.String(), again, err)
				}
			}
		}
	})
}

// clean reports whether a challenge has only characters that survive
// quoting unchanged.
func clean(c MPPChallenge) bool {
	for _, s := range []string{c.ID, c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest, c.Opaque, c.Description, c.Header} {
		for _, r := range s {
			if r < 0x20 || r == 0x7f || r > 0xffff || r == 0xfffd {
				return false
			}
		}
	}
	return true
}

func FuzzParseMPPCredential(f *testing.F) {
	f.Add("Payment " + b64url(`{"challenge":{"id":"a","realm":"r","method":"evm","intent":"charge","request":"e30"},"payload":{}}`))
	f.Add("Payment " + b64url(`{"challenge":{"opaque":{"a":"b"}},"payload":{}}`))
	f.Add("Payment !!!")
	f.Add("Payment a, Payment b")
	f.Add("Payment")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseMPPCredential(s)
		if err == nil && c != nil {
			if _, err := c.Encode(); err != nil {
				t.Fatalf("parsed credential does not encode: %v", err)
			}
		}
	})
}

func FuzzDecodeMPPReceipt(f *testing.F) {
	f.Add(b64url(`{"method":"evm","reference":"0x1","status":"success","timestamp":"2026-01-01T00:00:00Z"}`))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) { _, _ = DecodeMPPReceipt(s) })
}

func FuzzDecodeX402Header(f *testing.F) {
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0=")
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0")
	f.Add("%%%")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		var pr PaymentRequired
		_ = DecodeX402Header(s, &pr)
		var pl PaymentPayload
		_ = DecodeX402Header(s, &pl)
		var sr SettleResponse
		_ = DecodeX402Header(s, &sr)
	})
}

// FuzzVerify feeds arbitrary header values through ReadCredential and
// Verify: every outcome must be a credential, nil, or an error — never a
// panic — and every error from a malformed header must be a *Problem.
func FuzzVerify(f *testing.F) {
	p, err := NewProcessor(&ProcessorOptions{PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Dev: true,
		MPPSecret: []byte("0123456789abcdef0123456789abcdef"), Realm: "api.example.com",
		Now: func() time.Time { return time.Unix(1_790_000_000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	offer := Offer{ID: "o", AmountMicroUSD: 250000, WorkTimeout: time.Minute}
	res := Resource{URL: "https://api.example.com/x"}
	f.Add(uint8(0), b64std([]byte(`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":120,"extra":{"name":"USD Coin","version":"2"}},"payload":{"signature":"0x00","authorization":{}}}`)))
	f.Add(uint8(1), b64std([]byte(`{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x","authorization":{"from":"0x","to":"0x","value":"1","validAfter":"0","validBefore":"9","nonce":"0x"}}}`)))
	f.Add(uint8(2), "Payment "+b64url(`{"challenge":{"id":"a","realm":"api.example.com","method":"evm","intent":"charge","request":"e30","expires":"2030-01-01T00:00:00Z"},"payload":{"type":"authorization"}}`))
	f.Add(uint8(3), "Payment "+b64url(`{"challenge":{"method":"stripe"},"payload":{"spt":"x"}}`))
	names := []string{HeaderPaymentSignature, HeaderXPayment, HeaderAuthorization, HeaderPaymentAuthorization}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		h := http.Header{}
		h.Set(names[int(which)%len(names)], value)
		c, err := p.ReadCredential(h)
		if err != nil {
			if _, ok := err.(*Problem); !ok {
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
	p, err := NewProcessor(&ProcessorOptions{PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Dev: true,
		MPPSecret: []byte("0123456789abcdef0123456789abcdef"), Realm: "api.example.com",
		Now: func() time.Time { return time.Unix(1_790_000_000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	offer := Offer{ID: "o", AmountMicroUSD: 250000, WorkTimeout: time.Minute}
	res := Resource{URL: "https://api.example.com/x"}
	f.Add(uint8(0), `{"x402Version":2,"resource":{"url":"https://api.example.com/x"},"accepted":{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":120,"extra":{"name":"USD Coin","version":"2"}},"payload":{"signature":"0x2381a7e0982bf923e57c2a3fe4a8b3a62d47d91680eb93932a17b4b845eaf64706c58784700304ef4183fce5590a81453230609beebb5466f35866797e5edf771b","authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x1111111111111111111111111111111111111111111111111111111111111111"}},"extensions":{"payment-identifier":{"info":{"id":"pay_0123456789abcdef"}}}}`)
	f.Add(uint8(1), `{"x402Version":1,"scheme":"exact","network":"base","payload":{"signature":"0x2381a7e0982bf923e57c2a3fe4a8b3a62d47d91680eb93932a17b4b845eaf64706c58784700304ef4183fce5590a81453230609beebb5466f35866797e5edf771b","authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x1111111111111111111111111111111111111111111111111111111111111111"}}}`)
	f.Add(uint8(2), `{"challenge":{"id":"a","realm":"api.example.com","method":"evm","intent":"charge","request":"e30","expires":"2030-01-01T00:00:00Z","opaque":{"q":"x"}},"source":"did:pkh:eip155:8453:0x","payload":{"type":"authorization","from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"250000","validAfter":"0","validBefore":"1900000000","nonce":"0x11","signature":"0x"}}`)
	f.Add(uint8(3), `{"challenge":{"method":"stripe","intent":"charge"},"payload":{"spt":"spt_1"}}`)
	f.Fuzz(func(t *testing.T, which uint8, js string) {
		h := http.Header{}
		switch which % 4 {
		case 0:
			h.Set(HeaderPaymentSignature, b64std([]byte(js)))
		case 1:
			h.Set(HeaderXPayment, b64std([]byte(js)))
		case 2:
			h.Set(HeaderAuthorization, "Payment "+b64url(js))
		default:
			h.Set(HeaderPaymentAuthorization, "Payment "+b64url(js))
		}
		c, err := p.ReadCredential(h)
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
