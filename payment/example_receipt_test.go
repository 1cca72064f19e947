package payment_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/x402"
)

// A buyer checks a receipt offline with nothing but the seller's JWKS
// (GET /.well-known/jwks.json) and the bytes it received. This reproduces
// the package's test vector: the seed 0x00…0x1f signs the receipt of a
// deep-tier verification.
func ExampleVerifyReceipt() {
	keys, err := payment.ParseKeyring("ed25519:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	if err != nil {
		log.Fatal(err)
	}
	// The seller signs when an order completes ...
	signed, err := payment.SignReceipt(keys, &payment.Receipt{
		ReceiptID:           "rcpt_00000000000000000000000000000001",
		OrderID:             "ord_00000000000000000000000000000001",
		OfferID:             "claims.verify.deep",
		Tier:                "deep",
		AmountMicroUSD:      120_000,
		Currency:            "USD",
		PaymentProtocol:     payment.ProtocolX402,
		PaymentMethod:       x402.SchemeExact,
		Network:             "eip155:8453",
		Payer:               "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
		SettlementReference: "0x" + strings.Repeat("ab", 32),
		ResultKind:          "verification",
		ResultID:            "cv_00000000000000000000000000000001",
		ResultSHA256:        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // SHA-256 of the delivered body (here empty)
		IssuedAt:            "2026-11-22T08:45:14Z",
	})
	if err != nil {
		log.Fatal(err)
	}
	jwks, err := json.Marshal(keys.JWKS()) // ... and publishes its public keys.
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(jwks))

	// The buyer, offline:
	var published payment.JWKS
	if err := json.Unmarshal(jwks, &published); err != nil {
		log.Fatal(err)
	}
	rc, err := payment.VerifyReceipt(signed, published)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rc.OrderID, rc.Tier, rc.AmountMicroUSD, rc.KeyID)
	fmt.Println(rc.Signature)

	// Any change to a signed member breaks the signature.
	tampered := strings.Replace(string(signed), `"amountMicrousd":120000`, `"amountMicrousd":12000`, 1)
	_, err = payment.VerifyReceipt([]byte(tampered), published)
	fmt.Println(errors.Is(err, payment.ErrReceiptSignature), err)
	// Output:
	// {"keys":[{"kty":"OKP","crv":"Ed25519","x":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","kid":"1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y","use":"sig","alg":"EdDSA"}]}
	// ord_00000000000000000000000000000001 deep 120000 1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y
	// FlMZ65MB9ON5SA5lXFBeTb-uK1z8fUn9hd0AnQOV2eKAPHuS_KeW4qAYMtD9tcz4TvYm0wXaLGYHlIWerprjBA
	// true payment: receipt signature does not verify
}
