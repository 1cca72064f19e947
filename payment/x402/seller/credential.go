package seller

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/x402"
)

// HeaderCredential reads the credential of an x402 HTTP header:
// PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1), base64 JSON of a
// PaymentPayload. A malformed one is a 400 *payment.Problem.
func HeaderCredential(name, value string) (*payment.Credential, error) {
	b, err := x402.DecodeBase64(value)
	if err != nil {
		return nil, malformed(name, err)
	}
	c, err := parse(b)
	if err != nil {
		return nil, malformed(name, err)
	}
	c.Header = name
	return c, nil
}

// CredentialFromX402 reads an x402 PaymentPayload that arrived outside HTTP
// headers, e.g. the MCP binding's params._meta["x402/payment"]. Header is
// "" and either version is accepted.
func CredentialFromX402(raw json.RawMessage) (*payment.Credential, error) {
	if len(raw) > wire.MaxHeaderBytes {
		return nil, malformed(MCPMetaPayment, errors.New("too large"))
	}
	c, err := parse(raw)
	if err != nil {
		return nil, malformed(MCPMetaPayment, err)
	}
	return c, nil
}

func malformed(name string, err error) *payment.Problem {
	return &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
		Detail: fmt.Sprintf("The %s header is not base64-encoded JSON of a payment payload: %v", name, err)}
}

// parse reads the version and scheme of a PaymentPayload. The payload is
// decoded whole once, and kept for the sale's later steps
// (Credential.Decoded); one whose fields have the wrong types is still a
// credential (Verify says what is wrong with it) when its head reads.
func parse(b []byte) (*payment.Credential, error) {
	raw := append(json.RawMessage(nil), b...)
	d := &decoded{raw: raw}
	d.payloadErr = wire.DecodeObject(raw, &d.payload)
	version, scheme, accepted := d.payload.X402Version, d.payload.Scheme, d.payload.Accepted
	if d.payloadErr != nil {
		var head struct {
			X402Version int             `json:"x402Version"`
			Scheme      string          `json:"scheme"`
			Accepted    json.RawMessage `json:"accepted"`
		}
		if err := wire.DecodeObject(raw, &head); err != nil {
			return nil, err
		}
		version, scheme, accepted = head.X402Version, head.Scheme, head.Accepted
	}
	if len(accepted) > 0 {
		var acc struct {
			Scheme string `json:"scheme"`
		}
		_ = json.Unmarshal(accepted, &acc)
		scheme = acc.Scheme
	}
	return &payment.Credential{Protocol: payment.ProtocolX402, Version: version, Method: scheme, Raw: raw, Decoded: d}, nil
}

// IdentifyPayment identifies an x402 credential offline: the payer is the
// address its signature recovers to (the authorization's from, or an
// error) and the key the authorization's ReservationKey, with the quote it
// names. Validity windows, amounts and recipients are not checked: that
// is Verify's job.
func (e *Exact) IdentifyPayment(c *payment.Credential) (*payment.PaymentIdentity, error) {
	d := decodedOf(c)
	if d.payloadErr != nil {
		return nil, d.payloadErr
	}
	ex, err := d.exact()
	if err != nil {
		return nil, err
	}
	id, err := e.Identify(ex.Authorization, ex.Signature)
	if err != nil {
		return nil, err
	}
	if q := NamedQuote(c); q != "" {
		id.QuoteID = q
	}
	return id, nil
}

// Identify recovers the signer of an EIP-3009 authorization on the
// configured network: the payer (the authorization's from, or an error)
// and the payment's reservation key.
func (e *Exact) Identify(w evm.EIP3009Authorization, signature string) (*payment.PaymentIdentity, error) {
	a, err := w.Parse()
	if err != nil {
		return nil, err
	}
	sig, err := evm.ParseSignature(signature)
	if err != nil {
		return nil, err
	}
	d, err := a.DigestFor(e.separator)
	if err != nil {
		return nil, err
	}
	from, err := evm.RecoverAddress(d, sig)
	if err != nil {
		return nil, err
	}
	if from != a.From {
		return nil, fmt.Errorf("%w: the signature was not made by %s", evm.ErrBadSignature, a.From.String())
	}
	return &payment.PaymentIdentity{Payer: a.From.Hex(), ReservationKey: a.ReservationKey(e.net)}, nil
}

// NamedQuote returns the quote an x402 credential names: its v2
// payment-identifier id when it starts "quo_".
func NamedQuote(c *payment.Credential) string {
	d := decodedOf(c)
	if !d.quoteRead {
		d.quote, d.quoteRead = namedQuote(d), true
	}
	return d.quote
}

func namedQuote(d *decoded) string {
	ext := d.payload.Extensions
	if d.payloadErr != nil {
		// A payload Verify will refuse may still name its quote, which
		// prices the challenge of the refusal.
		var pl struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(d.raw, &pl) != nil {
			return ""
		}
		ext = pl.Extensions
	}
	if id, err := x402.PaymentIdentifierOf(ext); err == nil && strings.HasPrefix(id, "quo_") {
		return id
	}
	return ""
}

// decoded is an x402 credential decoded once per sale
// (payment.Credential.Decoded): the PaymentPayload, its exact payload when
// asked for, and the quote it names.
type decoded struct {
	raw        json.RawMessage // the Raw it was decoded from
	payload    x402.PaymentPayload
	payloadErr error
	ex         *x402.ExactEVMPayload
	exErr      error
	exRead     bool
	quote      string
	quoteRead  bool
}

// decodedOf returns c's decoded form, decoding Raw the first time (or
// when Decoded is not this mechanism's decoding of this very Raw).
func decodedOf(c *payment.Credential) *decoded {
	if d, ok := c.Decoded.(*decoded); ok && sameBytes(d.raw, c.Raw) {
		return d
	}
	d := &decoded{raw: c.Raw}
	d.payloadErr = wire.DecodeObject(c.Raw, &d.payload)
	c.Decoded = d
	return d
}

// exact decodes the exact scheme's payload once.
func (d *decoded) exact() (*x402.ExactEVMPayload, error) {
	if !d.exRead {
		var ex x402.ExactEVMPayload
		if d.exErr = wire.DecodeObject(d.payload.Payload, &ex); d.exErr == nil {
			d.ex = &ex
		}
		d.exRead = true
	}
	return d.ex, d.exErr
}

// sameBytes reports whether a and b are the same slice (not only equal
// bytes): a Raw replaced since it was decoded is decoded again.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
