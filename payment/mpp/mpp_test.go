package mpp

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	vectorMPPSecret  = "0123456789abcdef0123456789abcdef"
	vectorMPPRequest = "eyJhbW91bnQiOiIyNTAwMDAiLCJjdXJyZW5jeSI6IjB4ODMzNTg5ZkNENmVEYjZFMDhmNGM3QzMyRDRmNzFiNTRiZEEwMjkxMyIsIm1ldGhvZERldGFpbHMiOnsiY2hhaW5JZCI6ODQ1MywiY3JlZGVudGlhbFR5cGVzIjpbImF1dGhvcml6YXRpb24iXSwiZGVjaW1hbHMiOjZ9LCJyZWNpcGllbnQiOiIweDIwOTY5M0JjNmFmYzBDNTMyOGJBMzZGYUYwM0M1MTRFRjMxMjI4N0MifQ"
	vectorMPPID      = "B_kDcju3JlvonpwzHjrEDOH3BVIsoGaGRcQvav1AzzY"
)

// payments.md §7.1 and §7.3: the JCS request and the HMAC-bound id.
// The EIP-3009 test vector's parties (see evm's tests).
const (
	vectorPayer = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
	vectorPayee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
)

func TestMPPVectors(t *testing.T) {
	req, err := EncodeJCSBase64URL(EVMRequest{
		Amount: "250000", Currency: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		MethodDetails: EVMDetails{ChainID: 8453, CredentialTypes: []string{"authorization"}, Decimals: 6},
		Recipient:     vectorPayee,
	})
	if err != nil {
		t.Fatal(err)
	}
	if req != vectorMPPRequest {
		t.Fatalf("request = %s\nwant      %s", req, vectorMPPRequest)
	}
	c := Challenge{Realm: "api.example.com", Method: "evm", Intent: "charge", Request: req, Expires: "2026-11-22T08:45:14Z"}
	if id := ChallengeID([]byte(vectorMPPSecret), c); id != vectorMPPID {
		t.Fatalf("id = %s, want %s", id, vectorMPPID)
	}
	if n := Nonce("abc", "api.example.com"); n != "0xe1adfd8f031bdf83646eee741bda35015ff27366153d3ec246a28e6d3960b516" {
		t.Fatalf("nonce = %s", n)
	}
}

func TestMPPChallengeRoundTrip(t *testing.T) {
	c := Challenge{ID: vectorMPPID, Realm: "api.example.com", Method: "evm", Intent: "charge", Request: vectorMPPRequest,
		Expires: "2026-11-22T08:45:14Z", Digest: "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
		Opaque: "eyJxdW90ZUlkIjoicXVvXzEifQ", Description: `Deep "verification" \ 2 — café`}
	v := c.String()
	got, err := ParseChallenges([]string{v})
	if err != nil || len(got) != 1 {
		t.Fatalf("parse %q: %v %v", v, got, err)
	}
	if diff := cmp.Diff(c, got[0]); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	if strings.ContainsAny(v, "\r\n") || strings.ContainsRune(v, '—') {
		t.Fatalf("header value not a clean byte string: %q", v)
	}
}

func TestParseMPPChallenges(t *testing.T) {
	ok := `Payment id="abc", realm="r", method="evm", intent="charge", request="e30"`
	tests := []struct {
		name    string
		values  []string
		wantIDs []string
		wantErr bool
	}{
		{"one", []string{ok}, []string{"abc"}, false},
		{"two headers", []string{ok, strings.Replace(ok, "abc", "def", 1)}, []string{"abc", "def"}, false},
		{"merged by a proxy", []string{ok + ", " + strings.Replace(ok, "abc", "def", 1)}, []string{"abc", "def"}, false},
		{"other schemes around", []string{`Basic realm="x", ` + ok + `, Bearer abc==`}, []string{"abc"}, false},
		{"token68 scheme before", []string{`Negotiate YWJj, ` + ok}, []string{"abc"}, false},
		{"unknown params and tokens", []string{`Payment foo=bar, id=abc, realm="r", method=evm, intent=charge, request=e30, zz="q\"x"`}, []string{"abc"}, false},
		{"case-insensitive scheme and names", []string{`PAYMENT ID="abc", Realm="r", METHOD="evm", intent="charge", request="e30"`}, []string{"abc"}, false},
		{"quoted comma", []string{`Payment id="a,b", realm="r, s", method="evm", intent="charge", request="e30"`}, []string{"a,b"}, false},
		{"empty realm allowed", []string{`Payment id="abc", realm="", method="evm", intent="charge", request="e30"`}, []string{"abc"}, false},
		{"missing request", []string{`Payment id="abc", realm="r", method="evm", intent="charge"`}, nil, true},
		{"uppercase method", []string{`Payment id="abc", realm="r", method="EVM", intent="charge", request="e30"`}, nil, true},
		{"duplicate param", []string{ok + `, id="x"`}, nil, true},
		{"unterminated quote", []string{`Payment id="abc, realm="r`}, nil, true},
		{"garbage", []string{`Payment ,,,=,"",\\, id=`}, nil, true},
		{"nothing", []string{""}, nil, false},
		{"bare scheme", []string{"Payment"}, nil, true},
	}
	for _, tc := range tests {
		got, err := ParseChallenges(tc.values)
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
			t.Errorf("%s: ids (-want +got):\n%s", tc.name, diff)
		}
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", tc.name, err, tc.wantErr)
		}
	}
}

func TestMPPCredentialRoundTrip(t *testing.T) {
	c := &Credential{
		Challenge: Challenge{ID: "abc", Realm: "r", Method: "evm", Intent: "charge", Request: "e30", Expires: "2026-11-22T08:45:14Z"},
		Source:    "did:pkh:eip155:8453:" + vectorPayer,
		Payload:   []byte(`{"type":"authorization"}`),
	}
	v, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "Payment ") || strings.ContainsAny(v[8:], "=+/") {
		t.Fatalf("not Payment + base64url: %s", v)
	}
	got, err := ParseCredential(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if _, err := ParseCredential(v + ", " + v); err != ErrSeveralCredentials {
		t.Fatalf("two credentials: %v", err)
	}
	if got, err := ParseCredential("Bearer abc"); got != nil || err != nil {
		t.Fatalf("other scheme: %v %v", got, err)
	}
	// Legacy: opaque echoed as an object is normalised to its JCS base64url.
	legacy := `{"challenge":{"id":"abc","realm":"r","method":"evm","intent":"charge","request":"e30","opaque":{"quoteId":"quo_1"}},"payload":{}}`
	got, err = ParseCredential("Payment " + b64url(legacy))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := EncodeJCSBase64URL(map[string]string{"quoteId": "quo_1"})
	if got.Challenge.Opaque != want {
		t.Fatalf("opaque = %q, want %q", got.Challenge.Opaque, want)
	}
}

func TestMPPReceiptRoundTrip(t *testing.T) {
	r := &Receipt{Method: "evm", ChallengeID: "abc", Reference: "0x01", Status: "success", Timestamp: "2026-11-22T08:45:14Z", ChainID: 8453}
	v, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeReceipt(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Fatal(diff)
	}
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
