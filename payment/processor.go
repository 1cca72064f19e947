package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
)

// Payment protocols, as recorded on orders and receipts.
const (
	ProtocolX402       = x402.Protocol
	ProtocolMPP        = mpp.Protocol // MPP evm charge (USDC on Base)
	ProtocolMPPStripe  = "mpp-stripe" // MPP stripe charge (card)
	ProtocolFree       = "free"
	ProtocolSubscriber = "subscription"
)

// Resource identifies the request being paid for. Challenges and
// credentials are bound to it.
type Resource struct {
	// URL is the absolute URL as the client sees it (built from the
	// configured public base URL, never from an untrusted Host header).
	URL string
	// Method is the HTTP method ("" for non-HTTP transports such as MCP).
	Method string
	// BodyDigest is the RFC 9530 digest ("sha-256=:<base64>:") of the
	// request body, "" when the body is empty. MPP challenges bind it.
	BodyDigest string
	// Description and MimeType are shown to payers.
	Description string
	MimeType    string
	// QuoteID is a quote the caller named; the offer's amounts then come
	// from the quote (set by the gate before calling the Processor).
	QuoteID string
}

// Challenge is a 402 answer that carries every accepted payment method.
type Challenge struct {
	// Header holds PAYMENT-REQUIRED (x402 v2) and one WWW-Authenticate per
	// MPP method.
	Header http.Header
	// Body is the JSON body: an RFC 9457 problem that is also an x402 v1
	// document.
	Body []byte
	// PaymentRequired is the x402 v2 PaymentRequired object (the MCP
	// binding returns it as a tool result).
	PaymentRequired json.RawMessage
}

// Credential is a payment credential read from a request.
type Credential struct {
	// Protocol is ProtocolX402 or ProtocolMPP (MPP stripe included; the
	// method tells them apart).
	Protocol string
	// Header is the header the credential came in ("" for non-HTTP).
	Header string
	// Version is the x402 version (1 or 2); 0 for MPP.
	Version int
	// Method is "exact" for x402, the challenge method ("evm", "stripe")
	// for MPP.
	Method string
	// Raw is the decoded JSON of the credential.
	Raw json.RawMessage
}

// Authorization is a verified payment that has not been settled.
type Authorization struct {
	Protocol string // ProtocolX402, ProtocolMPP or ProtocolMPPStripe
	Method   string // "exact", "evm" or "stripe"
	// Payer is a lowercase 0x address, or the processor's reference for
	// card payments.
	Payer string
	// ReservationKey is unique to this payment (for EIP-3009 payments the
	// chain, token, payer and nonce whatever protocol carried them; the
	// MPP challenge id for cards). The ledger reserves it atomically: a
	// second use, even concurrent, even from another instance, is refused.
	ReservationKey string
	// ExtraReservationKeys are further keys the same payment uses up and
	// that are reserved atomically with ReservationKey (an MPP evm payment
	// also uses up its challenge id).
	ExtraReservationKeys []string
	AmountMicroUSD       int64
	Network              string
	// ValidUntil is when the payment stops being usable; a reservation
	// need not be kept longer.
	ValidUntil time.Time
	// QuoteID is the quote the payment names (MPP opaque, x402
	// payment-identifier), if any.
	QuoteID string
	// PaymentID is the x402 payment-identifier extension id, if any.
	PaymentID string
	// Dev is true when the payment was verified in dev mode: settlement
	// will be recorded but will move no funds.
	Dev bool
	// State carries method-specific data from Verify to Settle and Void.
	State any
}

// Settlement is a completed payment.
type Settlement struct {
	// Reference is the transaction hash or PaymentIntent id.
	Reference string
	Network   string
	// Header holds the protocol's success header: PAYMENT-RESPONSE (x402
	// v2), X-PAYMENT-RESPONSE (v1) or Payment-Receipt (MPP).
	Header http.Header
	// Meta is the x402 SettleResponse or MPP receipt object (the MCP
	// binding returns it in _meta).
	Meta json.RawMessage
	Dev  bool
}

// Processor is the payment protocol layer: it issues challenges, reads and
// verifies credentials, and settles or voids verified payments. It keeps no
// state of its own beyond stateless bindings; single use is the ledger's job.
type Processor interface {
	// Challenge builds the 402 answer for offer at res.
	Challenge(ctx context.Context, offer Offer, res Resource) (*Challenge, error)
	// ReadCredential returns the credential carried by the headers, nil
	// and no error when there is none, or a *Problem for a malformed one.
	ReadCredential(h http.Header) (*Credential, error)
	// Verify checks c against offer and res. Failures are *Problem.
	Verify(ctx context.Context, offer Offer, res Resource, c *Credential) (*Authorization, error)
	// Settle moves the funds (or records a dev settlement). A result that
	// cannot be known yet is reported as ErrSettlementPending.
	Settle(ctx context.Context, a *Authorization) (*Settlement, error)
	// Void releases a payment that will not be settled (for example
	// cancels a card authorisation). It is a no-op for EIP-3009 payments,
	// which simply expire.
	Void(ctx context.Context, a *Authorization) error
	// Record returns the durable record of a verified payment, kept with
	// its order (Order.PaymentRecord) once it starts settling, from which
	// CheckSettlement can settle or check it later, in any process.
	Record(a *Authorization) ([]byte, error)
	// CheckSettlement makes one attempt to learn the outcome of the
	// settlement of a settling order's payment (settling it again where
	// that is safe): the settlement; an error matching
	// ErrSettlementPending while it is still unknown (a *x402.PendingError
	// carries a transaction it learnt of); or a *Problem when it is known
	// that the payment never settled and never will (the order is then
	// failed and released).
	CheckSettlement(ctx context.Context, o *Order) (*Settlement, error)
}

// Holder is implemented by processors whose payments need a hold placed
// before the paid work runs, such as a card authorisation. Verify then
// only checks the credential; the Cashier reserves the payment (opening
// its order) and only then calls Hold, so a credential refused as already
// used never places a hold, and a hold that fails releases the
// reservation. Void releases the hold; Settle captures it (placing it
// first if Hold was never called).
type Holder interface {
	Hold(ctx context.Context, a *Authorization) error
}

// ErrSettlementPending reports a settlement whose outcome is not known yet
// (facilitator timeout, transaction pending). It is not a failure: the
// payer must not be asked to pay again.
var ErrSettlementPending = wire.ErrSettlementPending

// Problem is a payment failure reported to the payer.
type Problem struct {
	// Status is 400 (malformed request), 402 (pay again) or 403 (paid but
	// refused by policy).
	Status int
	// Type is the MPP problem type suffix, e.g. "malformed-credential",
	// "invalid-challenge", "payment-expired", "verification-failed",
	// "payment-insufficient", "method-unsupported".
	Type string
	// Reason is the x402 invalidReason/errorReason code, e.g.
	// "invalid_exact_evm_payload_signature".
	Reason string
	// Detail is a sentence for people.
	Detail string
	// Header holds protocol headers to send with the refusal, e.g. the
	// x402 PAYMENT-RESPONSE {"success":false,…} of a refused settlement.
	Header http.Header
}

// errorCode is the x402 "error" of a challenge that reports p: the reason
// code, else the detail, else the problem type.
func (p *Problem) errorCode() string {
	switch {
	case p.Reason != "":
		return p.Reason
	case p.Detail != "":
		return p.Detail
	}
	return p.Type
}

func (p *Problem) Error() string {
	return fmt.Sprintf("payment: %s (%s): %s", p.Type, p.Reason, p.Detail)
}
