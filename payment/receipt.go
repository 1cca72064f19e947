package payment

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/gowebpki/jcs"
)

// ReceiptFormat names the receipt format described in the package
// documentation.
const ReceiptFormat = "assay-receipt/1"

// ReceiptAlgorithm is the signature algorithm of receipts.
const ReceiptAlgorithm = "Ed25519"

// Receipt is a signed statement that an order was paid and what was
// delivered for it. Its JSON form (camelCase, canonicalised with RFC 8785)
// is what the payer receives and what VerifyReceipt checks.
type Receipt struct {
	Format              string `json:"format"`
	ReceiptID           string `json:"receiptId"`
	OrderID             string `json:"orderId"`
	OfferID             string `json:"offerId"`
	Tier                string `json:"tier"`
	AmountMicroUSD      int64  `json:"amountMicrousd"`
	Currency            string `json:"currency"`
	PaymentProtocol     string `json:"paymentProtocol"`
	PaymentMethod       string `json:"paymentMethod"`
	Network             string `json:"network"`
	Payer               string `json:"payer"`
	SettlementReference string `json:"settlementReference"`
	Dev                 bool   `json:"dev"`
	// Voided is true on the receipt of an answer delivered without charge
	// (Offer.Waiver): the payment was voided, amountMicrousd is 0 and
	// settlementReference is empty. Absent otherwise.
	Voided     bool   `json:"voided,omitempty"`
	ResultKind string `json:"resultKind"`
	ResultID   string `json:"resultId"`
	// ResultSHA256 is the lowercase hex SHA-256 of the exact response
	// body bytes delivered with the receipt.
	ResultSHA256       string `json:"resultSha256"`
	IssuedAt           string `json:"issuedAt"`
	KeyID              string `json:"keyId"`
	SignatureAlgorithm string `json:"signatureAlgorithm"`
	// Signature is the unpadded base64url Ed25519 signature over the JCS
	// form of every other member.
	Signature string `json:"signature,omitempty"`
}

// Receipt verification errors.
var (
	ErrReceiptMalformed  = errors.New("payment: receipt is not a well-formed receipt")
	ErrReceiptUnknownKey = errors.New("payment: receipt key id is not a known key")
	ErrReceiptSignature  = errors.New("payment: receipt signature does not verify")
	// ErrReceiptContents reports a correctly signed receipt whose
	// contents are not valid (CheckReceipt).
	ErrReceiptContents = errors.New("payment: receipt contents are not valid")
)

// SignReceipt fills r's format, algorithm, key id and signature using k and
// returns the canonical (RFC 8785) JSON of the signed receipt.
func SignReceipt(k *Keyring, r *Receipt) ([]byte, error) {
	r.Format, r.SignatureAlgorithm, r.KeyID, r.Signature = ReceiptFormat, ReceiptAlgorithm, k.KeyID(), ""
	msg, err := r.canonical()
	if err != nil {
		return nil, err
	}
	_, sig := k.Sign(msg)
	r.Signature = base64.RawURLEncoding.EncodeToString(sig)
	return r.canonical()
}

// canonical returns the RFC 8785 (JCS) form of r. Every paid call signs a
// receipt, so it is written by hand for the receipt's members (strings, an
// integer, booleans): marshalling with encoding/json and canonicalising the
// result with jcs cost about a tenth of a paid call. A receipt the hand
// encoder cannot write exactly (an amount beyond 2^53, which JCS writes as
// a double; a string that is not valid UTF-8) goes the generic way, and
// receipt_test.go checks the two agree.
func (r *Receipt) canonical() ([]byte, error) {
	if b, ok := r.canonicalFast(); ok {
		return b, nil
	}
	return canonicalJSON(r)
}

func canonicalJSON(v any) ([]byte, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// canonicalFast writes r's members sorted by name (JCS sorts by UTF-16
// code units; the names are ASCII), omitting voided and signature when
// empty as the json tags do. ok is false when r needs canonicalJSON.
func (r *Receipt) canonicalFast() (b []byte, ok bool) {
	const maxExact = 1 << 53
	if r.AmountMicroUSD >= maxExact || r.AmountMicroUSD <= -maxExact {
		return nil, false
	}
	for _, s := range [...]string{r.Currency, r.Format, r.IssuedAt, r.KeyID, r.Network, r.OfferID, r.OrderID, r.Payer, r.PaymentMethod,
		r.PaymentProtocol, r.ReceiptID, r.ResultID, r.ResultKind, r.ResultSHA256, r.SettlementReference, r.Signature, r.SignatureAlgorithm, r.Tier} {
		if !utf8.ValidString(s) {
			return nil, false
		}
	}
	b = make([]byte, 0, 640)
	sep := byte('{')
	str := func(name, v string) {
		b = append(b, sep, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = appendJCSString(b, v)
		sep = ','
	}
	boolean := func(name string, v bool) {
		b = append(b, sep, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendBool(b, v)
		sep = ','
	}
	b = append(b, `{"amountMicrousd":`...)
	b = strconv.AppendInt(b, r.AmountMicroUSD, 10)
	sep = ','
	str("currency", r.Currency)
	boolean("dev", r.Dev)
	str("format", r.Format)
	str("issuedAt", r.IssuedAt)
	str("keyId", r.KeyID)
	str("network", r.Network)
	str("offerId", r.OfferID)
	str("orderId", r.OrderID)
	str("payer", r.Payer)
	str("paymentMethod", r.PaymentMethod)
	str("paymentProtocol", r.PaymentProtocol)
	str("receiptId", r.ReceiptID)
	str("resultId", r.ResultID)
	str("resultKind", r.ResultKind)
	str("resultSha256", r.ResultSHA256)
	str("settlementReference", r.SettlementReference)
	if r.Signature != "" {
		str("signature", r.Signature)
	}
	str("signatureAlgorithm", r.SignatureAlgorithm)
	str("tier", r.Tier)
	if r.Voided {
		boolean("voided", true)
	}
	return append(b, '}'), true
}

// appendJCSString appends s as RFC 8785 writes a string (ECMAScript's
// JSON.stringify): quote and backslash escaped, the control characters by
// their short escape (jcsShort) or as \u00xx, everything else as it is. s
// is valid UTF-8.
func appendJCSString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if c >= 0x20 {
			b = append(b, '\\', c)
		} else if e := jcsShort[c]; e != 0 {
			b = append(b, '\\', e)
		} else {
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jcsShort holds the control characters JSON writes with a letter.
var jcsShort = [0x20]byte{'\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

// VerifyReceipt checks a presented receipt offline: it must be a JSON
// object whose signature member verifies, with the key named by its keyId
// member taken from keys (for example the JWKS fetched from the service),
// over the RFC 8785 form of the object without the signature member. It
// then checks the contents (CheckReceipt). The decoded receipt is returned
// whenever the JSON could be read, also with an error.
func VerifyReceipt(data []byte, keys KeySet) (*Receipt, error) {
	var members map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&members); err != nil || members == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrReceiptMalformed)
	}
	var r Receipt
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReceiptMalformed, err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(r.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return &r, fmt.Errorf("%w: signature is not 64 bytes of base64url", ErrReceiptMalformed)
	}
	if r.SignatureAlgorithm != ReceiptAlgorithm {
		return &r, fmt.Errorf("%w: signatureAlgorithm %q is not %s", ErrReceiptMalformed, r.SignatureAlgorithm, ReceiptAlgorithm)
	}
	pub, ok := keys.PublicKey(r.KeyID)
	if !ok {
		return &r, fmt.Errorf("%w: %q", ErrReceiptUnknownKey, r.KeyID)
	}
	delete(members, "signature")
	unsigned, err := json.Marshal(members)
	if err != nil {
		return &r, fmt.Errorf("%w: %v", ErrReceiptMalformed, err)
	}
	msg, err := jcs.Transform(unsigned)
	if err != nil {
		return &r, fmt.Errorf("%w: %v", ErrReceiptMalformed, err)
	}
	if !ed25519.Verify(pub, msg, sig) {
		return &r, ErrReceiptSignature
	}
	return &r, CheckReceipt(&r)
}

// CheckReceipt checks the contents of a receipt: the format, the shapes of
// its identifiers, hash and time, and a positive amount in USD (0 on a
// voided receipt).
func CheckReceipt(r *Receipt) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrReceiptContents, what) }
	switch {
	case r.Format != ReceiptFormat:
		return bad("format is not " + ReceiptFormat)
	case !ids.Valid(ids.Receipt, r.ReceiptID):
		return bad("receiptId is not rcpt_ followed by 32 hex digits")
	case !ids.Valid(ids.Order, r.OrderID):
		return bad("orderId is not ord_ followed by 32 hex digits")
	case r.OfferID == "":
		return bad("offerId is empty")
	case r.Voided && (r.AmountMicroUSD != 0 || r.SettlementReference != ""):
		return bad("a voided receipt has amountMicrousd 0 and no settlementReference")
	case !r.Voided && r.AmountMicroUSD <= 0:
		return bad("amountMicrousd is not positive")
	case r.Currency != Currency:
		return bad("currency is not USD")
	case r.PaymentProtocol == "":
		return bad("paymentProtocol is empty")
	case r.Payer == "":
		return bad("payer is empty")
	}
	if b, err := hex.DecodeString(r.ResultSHA256); err != nil || len(b) != 32 || hex.EncodeToString(b) != r.ResultSHA256 {
		return bad("resultSha256 is not 64 lowercase hex digits")
	}
	if _, err := time.Parse(time.RFC3339, r.IssuedAt); err != nil {
		return bad("issuedAt is not an RFC 3339 time")
	}
	return nil
}

// MatchesOrder lists the differences between a receipt and the order the
// ledger recorded (nil when they agree).
func (r *Receipt) MatchesOrder(o *Order) []string {
	var diffs []string
	check := func(field, got, want string) {
		if got != want {
			diffs = append(diffs, fmt.Sprintf("%s is %q, the order records %q", field, got, want))
		}
	}
	check("receiptId", r.ReceiptID, o.ReceiptID)
	check("orderId", r.OrderID, o.ID)
	check("offerId", r.OfferID, o.OfferID)
	check("tier", r.Tier, o.Tier)
	paid := o.AmountMicroUSD
	if o.Status == OrderVoided {
		paid = 0
	}
	check("amountMicrousd", fmt.Sprint(r.AmountMicroUSD), fmt.Sprint(paid))
	check("currency", r.Currency, o.Currency)
	check("paymentProtocol", r.PaymentProtocol, o.Protocol)
	check("paymentMethod", r.PaymentMethod, o.Method)
	check("network", r.Network, o.Network)
	check("payer", r.Payer, o.Payer)
	check("settlementReference", r.SettlementReference, o.SettlementRef)
	check("dev", fmt.Sprint(r.Dev), fmt.Sprint(o.Dev))
	check("resultKind", r.ResultKind, o.ResultKind)
	check("resultId", r.ResultID, o.ResultID)
	check("resultSha256", r.ResultSHA256, o.ResultSHA256)
	check("voided", fmt.Sprint(r.Voided), fmt.Sprint(o.Status == OrderVoided))
	if !o.Status.Delivered() {
		diffs = append(diffs, "the order is "+string(o.Status)+", not completed")
	}
	return diffs
}
