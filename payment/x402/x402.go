package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
)

// x402 header names (HTTP header names are case-insensitive; Go sends the
// canonical forms, which every official client reads).
// Protocol names the protocol on orders, receipts and buyer payment info
// (payment.ProtocolX402).
const Protocol = "x402"

const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"   // x402 v2 challenge
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"  // x402 v2 credential
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"   // x402 v2 settlement
	HeaderXPayment         = "X-PAYMENT"          // x402 v1 credential
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE" // x402 v1 settlement
)

// SchemeExact is the only x402 scheme supported: a one-off EIP-3009
// transfer of exactly the price.
const SchemeExact = "exact"

// ExtensionPaymentIdentifier is the x402 idempotency extension id.
const ExtensionPaymentIdentifier = "payment-identifier"

// ExtensionBazaar is the x402 discovery extension id.
const ExtensionBazaar = "bazaar"

// ResourceInfo describes the paid resource (x402 v2 "resource").
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequirements is one x402 v2 accepted payment ("accepts" entry).
//
// A value decoded from JSON remembers its exact bytes: Raw returns them, so
// a client can echo the requirements verbatim in PaymentPayload.accepted
// even when they carry fields this type does not model.
type PaymentRequirements struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int64          `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra,omitempty"`

	raw json.RawMessage
}

// UnmarshalJSON decodes the requirements and keeps the raw bytes.
func (r *PaymentRequirements) UnmarshalJSON(b []byte) error {
	type plain PaymentRequirements
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = PaymentRequirements(p)
	r.raw = append(json.RawMessage(nil), b...)
	return nil
}

// Raw returns the JSON the value was decoded from, or its encoding when it
// was built in Go.
func (r *PaymentRequirements) Raw() (json.RawMessage, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	type plain PaymentRequirements
	return wire.Marshal((*plain)(r))
}

// ExtraString returns extra[key] when it is a string.
func (r *PaymentRequirements) ExtraString(key string) string {
	s, _ := r.Extra[key].(string)
	return s
}

// PaymentRequired is the x402 v2 challenge, sent base64-encoded in the
// PAYMENT-REQUIRED header (and as the MCP tool result).
type PaymentRequired struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error,omitempty"`
	Resource    *ResourceInfo              `json:"resource,omitempty"`
	Accepts     []PaymentRequirements      `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PaymentRequirementsV1 is one x402 v1 "accepts" entry (in the 402 body).
// The optional members (outputSchema, extra) are omitted when absent, never
// sent as null: the legacy x402 1.x SDK (x402-fetch) validates them as an
// object or nothing and refuses a 402 carrying null.
type PaymentRequirementsV1 struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	MaxAmountRequired string          `json:"maxAmountRequired"`
	Resource          string          `json:"resource"`
	Description       string          `json:"description"`
	MimeType          string          `json:"mimeType"`
	OutputSchema      json.RawMessage `json:"outputSchema,omitempty"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int64           `json:"maxTimeoutSeconds"`
	Asset             string          `json:"asset"`
	Extra             map[string]any  `json:"extra,omitempty"`
}

// PaymentRequiredV1 is the x402 v1 challenge document (the 402 body).
type PaymentRequiredV1 struct {
	X402Version int                     `json:"x402Version"`
	Error       string                  `json:"error"`
	Accepts     []PaymentRequirementsV1 `json:"accepts"`
}

// PaymentPayload is an x402 credential. Version 2 (PAYMENT-SIGNATURE)
// echoes Resource and Accepted; version 1 (X-PAYMENT) names Scheme and
// Network instead.
type PaymentPayload struct {
	X402Version int           `json:"x402Version"`
	Resource    *ResourceInfo `json:"resource,omitempty"`
	// Accepted is the requirements object echoed verbatim (v2).
	Accepted json.RawMessage `json:"accepted,omitempty"`
	Scheme   string          `json:"scheme,omitempty"`  // v1
	Network  string          `json:"network,omitempty"` // v1
	// Payload is scheme-specific; for exact/EVM an ExactEVMPayload.
	Payload    json.RawMessage            `json:"payload"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ExactEVMPayload is the payload of the exact scheme on EVM networks.
type ExactEVMPayload struct {
	Signature     string                   `json:"signature"`
	Authorization evm.EIP3009Authorization `json:"authorization"`
}

// SettleResponse is the x402 settlement result (PAYMENT-RESPONSE,
// X-PAYMENT-RESPONSE, facilitator /settle, MCP _meta).
type SettleResponse struct {
	Success      bool                       `json:"success"`
	ErrorReason  string                     `json:"errorReason,omitempty"`
	ErrorMessage string                     `json:"errorMessage,omitempty"`
	Payer        string                     `json:"payer,omitempty"`
	Transaction  string                     `json:"transaction"`
	Network      string                     `json:"network"`
	Amount       string                     `json:"amount,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PaymentIdentifierInfo is the "info" of the payment-identifier extension:
// the server declares Required, the client adds ID.
type PaymentIdentifierInfo struct {
	Required bool   `json:"required"`
	ID       string `json:"id,omitempty"`
}

// ErrMalformedHeader reports a payment header that is not base64 of a JSON
// object.
var ErrMalformedHeader = wire.ErrMalformedHeader

// EncodeHeader returns standard base64 (with padding) of v's JSON, the
// encoding of every x402 header.
func EncodeHeader(v any) (string, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeHeader decodes an x402 header value into v. It accepts standard
// base64 with or without padding (some clients strip it) and surrounding
// spaces; the JSON must be one object. Unknown fields are ignored.
func DecodeHeader(value string, v any) error {
	b, err := DecodeBase64(value)
	if err != nil {
		return err
	}
	return wire.DecodeObject(b, v)
}

// DecodeBase64 decodes a header value in standard base64, padded or not,
// bounded by the header size limit.
func DecodeBase64(value string) ([]byte, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, fmt.Errorf("%w: empty", ErrMalformedHeader)
	}
	if base64.StdEncoding.DecodedLen(len(value)) > wire.MaxHeaderBytes {
		return nil, fmt.Errorf("%w: too large", ErrMalformedHeader)
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(value, "=") && len(value)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64", ErrMalformedHeader)
	}
	return b, nil
}

// PaymentIdentifierExtension returns the payment-identifier declaration a
// server puts in PaymentRequired.extensions: {"info":{"required":…},
// "schema":{…JSON Schema of info…}}.
func PaymentIdentifierExtension(required bool) json.RawMessage {
	info := `{"required":false}`
	if required {
		info = `{"required":true}`
	}
	return json.RawMessage(`{"info":` + info + `,"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"required":{"type":"boolean"},"id":{"type":"string","minLength":16,"maxLength":128,"pattern":"^[a-zA-Z0-9_-]+$"}},` +
		`"required":["required"]}}`)
}

// ValidPaymentID reports whether id is 16–128 characters of [A-Za-z0-9_-].
func ValidPaymentID(id string) bool {
	if len(id) < 16 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// PaymentIdentifierOf reads the client's payment id from payload
// extensions: "" when absent, an error when present but malformed.
func PaymentIdentifierOf(ext map[string]json.RawMessage) (string, error) {
	raw, ok := ext[ExtensionPaymentIdentifier]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var e struct {
		Info *struct {
			ID *string `json:"id"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", fmt.Errorf("payment-identifier extension: %v", err)
	}
	if e.Info == nil || e.Info.ID == nil {
		return "", nil
	}
	if !ValidPaymentID(*e.Info.ID) {
		return "", errors.New("payment-identifier id must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -")
	}
	return *e.Info.ID, nil
}

// WithPaymentIdentifier returns payload extensions carrying id in the
// payment-identifier extension (client side), keeping the others.
func WithPaymentIdentifier(ext map[string]json.RawMessage, id string) (map[string]json.RawMessage, error) {
	if !ValidPaymentID(id) {
		return nil, errors.New("payment: payment-identifier id must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -")
	}
	out := make(map[string]json.RawMessage, len(ext)+1)
	for k, v := range ext {
		out[k] = v
	}
	var decl map[string]json.RawMessage
	if raw, ok := ext[ExtensionPaymentIdentifier]; ok {
		_ = json.Unmarshal(raw, &decl)
	}
	if decl == nil {
		decl = map[string]json.RawMessage{}
	}
	var info map[string]any
	if raw, ok := decl["info"]; ok {
		_ = json.Unmarshal(raw, &info)
	}
	if info == nil {
		info = map[string]any{"required": false}
	}
	info["id"] = id
	ib, err := wire.Marshal(info)
	if err != nil {
		return nil, err
	}
	decl["info"] = ib
	db, err := wire.Marshal(decl)
	if err != nil {
		return nil, err
	}
	out[ExtensionPaymentIdentifier] = db
	return out, nil
}
