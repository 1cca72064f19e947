package payment

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/assaykit/assay/store/metamem"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// vectorSeed is the test vector's private key seed: bytes 0x00..0x1f.
func vectorKeyring(t *testing.T) *Keyring {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	k, err := ParseKeyring("ed25519:" + base64.RawURLEncoding.EncodeToString(seed))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func vectorReceipt() *Receipt {
	return &Receipt{
		ReceiptID: "rcpt_00000000000000000000000000000001", OrderID: "ord_00000000000000000000000000000001",
		OfferID: "claims.verify.deep", Tier: "deep", AmountMicroUSD: 120000, Currency: "USD",
		PaymentProtocol: "x402", PaymentMethod: "exact", Network: "eip155:8453",
		Payer: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", SettlementReference: "0x" + strings.Repeat("ab", 32),
		ResultKind: "verification", ResultID: "cv_00000000000000000000000000000001",
		ResultSHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", IssuedAt: "2026-11-22T08:45:14Z",
	}
}

type vector struct {
	Seed          string `json:"seedBase64url"`
	JWKS          JWKS   `json:"jwks"`
	SignedMessage string `json:"signedMessage"`
	Receipt       string `json:"receipt"`
}

// TestReceiptVector pins the receipt format: the golden file holds the key,
// the JWKS, the exact signed message (JCS without "signature") and the
// signed receipt that the package documentation shows.
func TestReceiptVector(t *testing.T) {
	k := vectorKeyring(t)
	r := vectorReceipt()
	signed, err := SignReceipt(k, r)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := *r
	unsigned.Signature = ""
	msg, err := canonicalJSON(&unsigned)
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	got := vector{Seed: base64.RawURLEncoding.EncodeToString(seed), JWKS: k.JWKS(), SignedMessage: string(msg), Receipt: string(signed)}
	const path = "testdata/receipt_vector.json"
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want vector
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("receipt vector changed (-golden +now):\n%s", d)
	}
	// Anyone holding only the JWKS verifies it.
	if _, err := VerifyReceipt([]byte(want.Receipt), want.JWKS); err != nil {
		t.Fatal(err)
	}
	// And with nothing but the standard library: the signature is over
	// the signed message.
	pub, _ := want.JWKS.PublicKey(r.KeyID)
	sig, _ := base64.RawURLEncoding.DecodeString(r.Signature)
	if !ed25519.Verify(pub, []byte(want.SignedMessage), sig) {
		t.Fatal("signature does not verify over the documented message")
	}
}

func TestVerifyReceiptRejectsTampering(t *testing.T) {
	k := vectorKeyring(t)
	signed, err := SignReceipt(k, vectorReceipt())
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ParseKeyring(GenerateReceiptKey())
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(signed, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	cases := []struct {
		name string
		data []byte
		keys KeySet
		want error
	}{
		{"amount changed", edit(func(m map[string]any) { m["amountMicrousd"] = 1 }), k, ErrReceiptSignature},
		{"result hash changed", edit(func(m map[string]any) { m["resultSha256"] = strings.Repeat("0", 64) }), k, ErrReceiptSignature},
		{"member added", edit(func(m map[string]any) { m["refund"] = true }), k, ErrReceiptMalformed},
		{"signature removed", edit(func(m map[string]any) { delete(m, "signature") }), k, ErrReceiptMalformed},
		{"other algorithm", edit(func(m map[string]any) { m["signatureAlgorithm"] = "HS256" }), k, ErrReceiptMalformed},
		{"unknown key", signed, other, ErrReceiptUnknownKey},
		{"kid swapped to another key", edit(func(m map[string]any) { m["keyId"] = other.KeyID() }), other, ErrReceiptSignature},
		{"not JSON", []byte("rcpt"), k, ErrReceiptMalformed},
		{"array", []byte("[1]"), k, ErrReceiptMalformed},
	}
	for _, c := range cases {
		if _, err := VerifyReceipt(c.data, c.keys); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// Re-encoding (whitespace, member order) does not matter: JCS.
	var m map[string]any
	_ = json.Unmarshal(signed, &m)
	pretty, _ := json.MarshalIndent(m, "", "   ")
	if _, err := VerifyReceipt(pretty, k); err != nil {
		t.Errorf("re-encoded receipt: %v", err)
	}
	// Contents are checked after the signature.
	bad := vectorReceipt()
	bad.ResultSHA256 = "XYZ"
	data, _ := SignReceipt(k, bad)
	if _, err := VerifyReceipt(data, k); !errors.Is(err, ErrReceiptContents) {
		t.Errorf("bad contents: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	oldSpec, newSpec := GenerateReceiptKey(), GenerateReceiptKey()
	old, _ := ParseKeyring(oldSpec)
	signed, _ := SignReceipt(old, vectorReceipt())
	rotated, err := ParseKeyring(newSpec + ", " + "ed25519-pub:" + old.JWKS().Keys[0].X)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.KeyID() == old.KeyID() || len(rotated.JWKS().Keys) != 2 {
		t.Fatalf("rotated keyring: %+v", rotated.JWKS())
	}
	if _, err := VerifyReceipt(signed, rotated.JWKS()); err != nil {
		t.Fatalf("old receipt after rotation: %v", err)
	}
	fresh, _ := SignReceipt(rotated, vectorReceipt())
	if _, err := VerifyReceipt(fresh, old); !errors.Is(err, ErrReceiptUnknownKey) {
		t.Fatalf("new receipt under the old key set: %v", err)
	}
	for _, bad := range []string{"", "ed25519:short", "rsa:AAAA", "ed25519-pub:" + old.JWKS().Keys[0].X, oldSpec + ",nope"} {
		if _, err := ParseKeyring(bad); !errors.Is(err, ErrBadReceiptKey) {
			t.Errorf("ParseKeyring(%q) = %v", bad, err)
		}
	}
}

// TestThumbprintRFC8037 uses the Ed25519 key of RFC 8037 appendix A.
func TestThumbprintRFC8037(t *testing.T) {
	x, _ := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if got := Thumbprint(x); got != "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" {
		t.Fatalf("thumbprint = %s", got)
	}
	// A JWKS entry whose kid is not its thumbprint is ignored.
	s := JWKS{Keys: []JWK{{Kty: "OKP", Crv: "Ed25519", X: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", Kid: "mine"}}}
	if _, ok := s.PublicKey("mine"); ok {
		t.Fatal("accepted a kid that is not the thumbprint")
	}
}

func TestLoadKeyringGeneratesOnce(t *testing.T) {
	m := &metamem.Store{}
	a, err := LoadKeyring(context.Background(), m, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadKeyring(context.Background(), m, "  ")
	if a.KeyID() != b.KeyID() {
		t.Fatal("two loads generated two keys")
	}
	c, _ := LoadKeyring(context.Background(), m, GenerateReceiptKey())
	if c.KeyID() == a.KeyID() {
		t.Fatal("configured key ignored")
	}
	if _, err := LoadKeyring(context.Background(), nil, ""); err == nil {
		t.Fatal("no key and no store accepted")
	}
}

func TestCost(t *testing.T) {
	p := CostPrices{InputPerMillion: 1_250_000, CachedInputPerMillion: 125_000, OutputPerMillion: 10_000_000, PerSearchCall: 10_000}
	cases := []struct {
		u    Usage
		want int64
	}{
		{Usage{}, 0},
		{Usage{InputTokens: 1000, CachedInputTokens: 200, OutputTokens: 500, SearchCalls: 3}, 1000 + 25 + 5000 + 30000},
		{Usage{InputTokens: 1}, 2}, // 1.25 rounds up
		{Usage{InputTokens: 10, CachedInputTokens: 20}, 3},
		{Usage{OutputTokens: -5, SearchCalls: -1}, 0},
	}
	for _, c := range cases {
		if got := p.Cost(c.u); got != c.want {
			t.Errorf("Cost(%+v) = %d, want %d", c.u, got, c.want)
		}
	}
	if (CostPrices{}).Cost(Usage{InputTokens: 1e6}) != 0 {
		t.Error("zero prices cost something")
	}
}

// The hand-written canonical form of a receipt is byte for byte what
// encoding/json and RFC 8785 canonicalisation produce, for every member
// and for strings that need escaping; receipts it cannot write exactly go
// the generic way.
func TestReceiptCanonicalMatchesJCS(t *testing.T) {
	strs := []string{"", "plain", `quo"te`, `back\slash`, "ctl\x00\x01\x07\b\t\n\v\f\r\x1f\x7f", "é ü 日本 😀", "\u2028\u2029",
		"<html>&amp;</html>", "bad\xffutf8"}
	amounts := []int64{0, 1, 20000, -5, 1<<53 - 1, 1 << 53, -(1 << 53), 1 << 62}
	base := Receipt{Format: ReceiptFormat, ReceiptID: "rcpt_0123", OrderID: "ord_0123", OfferID: "claims.verify.quick", Tier: "quick",
		AmountMicroUSD: 20000, Currency: Currency, PaymentProtocol: ProtocolX402, PaymentMethod: "exact", Network: "eip155:8453",
		Payer: "0xabc", SettlementReference: "0xtx", ResultKind: "verification", ResultID: "cv_1", ResultSHA256: strings.Repeat("a", 64),
		IssuedAt: "2026-01-02T03:04:05Z", KeyID: "k1", SignatureAlgorithm: ReceiptAlgorithm}
	var cases []Receipt
	for i, s := range strs {
		r := base
		fields := []*string{&r.Format, &r.ReceiptID, &r.OrderID, &r.OfferID, &r.Tier, &r.Currency, &r.PaymentProtocol, &r.PaymentMethod,
			&r.Network, &r.Payer, &r.SettlementReference, &r.ResultKind, &r.ResultID, &r.ResultSHA256, &r.IssuedAt, &r.KeyID,
			&r.SignatureAlgorithm, &r.Signature}
		for j, f := range fields {
			r := r
			fields := []*string{&r.Format, &r.ReceiptID, &r.OrderID, &r.OfferID, &r.Tier, &r.Currency, &r.PaymentProtocol, &r.PaymentMethod,
				&r.Network, &r.Payer, &r.SettlementReference, &r.ResultKind, &r.ResultID, &r.ResultSHA256, &r.IssuedAt, &r.KeyID,
				&r.SignatureAlgorithm, &r.Signature}
			*fields[j] = s + *f
			r.Dev, r.Voided = (i+j)%2 == 0, (i+j)%3 == 0
			cases = append(cases, r)
		}
	}
	for _, a := range amounts {
		r := base
		r.AmountMicroUSD, r.Signature = a, "c2ln"
		cases = append(cases, r)
	}
	for _, r := range cases {
		want, err := canonicalJSON(&r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.canonical()
		if err != nil || string(got) != string(want) {
			t.Errorf("canonical(%+v)\n got %s (%v)\nwant %s", r, got, err, want)
		}
	}
}
