package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/payment/internal/wire"
)

// Payment protocols, as recorded on orders and receipts.
const (
	ProtocolX402       = "x402"       // x402 v1 and v2, exact scheme (USDC by EIP-3009)
	ProtocolMPP        = "mpp"        // MPP evm charge (USDC on Base)
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
	// from the quote (set by the transport before the sale).
	QuoteID string
}

// Challenge asks for payment: every accepted way to pay one offer at one
// resource, in the forms the protocols define. It knows no transport: the
// HTTP adapter (payment/httpgate) sends PaymentRequired base64-encoded in
// PAYMENT-REQUIRED, each MPP challenge in a WWW-Authenticate header and
// Body as an application/problem+json body; the MCP binding returns
// PaymentRequired as the tool result.
type Challenge struct {
	// PaymentRequired is the x402 v2 PaymentRequired object (JSON).
	PaymentRequired json.RawMessage
	// Body is an RFC 9457 problem document that is also an x402 v1
	// document (its "accepts" are the v1 payment requirements).
	Body []byte
	// MPP holds one MPP challenge per method, each in the Payment
	// authentication scheme's serialization ("Payment id=…, realm=…").
	MPP []string
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
	// Identity is what Processor.IdentifyPayment proved of this very
	// credential (the recovered signer and the reservation key), set by
	// the Cashier before it calls Verify: a processor may rely on it
	// instead of recovering the signature again. Nil when not identified.
	// The Cashier overwrites it; it is never read from the wire.
	Identity *PaymentIdentity `json:"-"`
	// Decoded is a mechanism's decoded form of Raw, kept by the step that
	// first decodes it (reading the credential, NamedQuote,
	// IdentifyPayment or Verify) so that the later steps of the sale do
	// not decode Raw again. A mechanism uses only a value of its own
	// (unexported) type made from this very Raw slice: one copied from
	// another credential, or kept across a change of Raw, is not used.
	// It is never read from the wire; a Credential belongs to one sale at
	// a time, and its Raw is not changed in place.
	Decoded any `json:"-"`
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
	// Protocol says what Meta is: for ProtocolX402 an x402 SettleResponse
	// (X402Version is the version the payer spoke, 1 or 2), for
	// ProtocolMPP or ProtocolMPPStripe an MPP receipt. Transports send it
	// in kind: HTTP in PAYMENT-RESPONSE (x402 v2), X-PAYMENT-RESPONSE (v1)
	// or Payment-Receipt (MPP); the MCP binding in _meta.
	Protocol    string
	X402Version int
	// Meta is the protocol's settlement object (JSON); empty when the
	// protocol answers nothing.
	Meta json.RawMessage
	Dev  bool
}

// Processor is the payment protocol layer: it issues challenges, identifies
// and verifies credentials, and holds, settles or voids verified payments.
// It keeps no state of its own beyond stateless bindings; single use is
// the ledger's job. It knows no transport: each transport reads the
// credential in its own form (payment/httpgate reads HTTP headers, the MCP
// binding params._meta) and renders the Challenge and Settlement it gets.
type Processor interface {
	// Challenge builds the answer that asks for payment of offer at res.
	Challenge(ctx context.Context, offer Offer, res Resource) (*Challenge, error)
	// IdentifyPayment returns the payer and reservation key of c as the
	// credential alone proves them, offline (no clock, no network), or an
	// error when c cannot be identified so (ErrUnidentified for a
	// processor that never identifies payments). A credential identified
	// so is the purchase: the Cashier answers a retry of a payment that
	// already opened an order from that order, before pricing and
	// verification (see Cashier.Begin). The payer must be proved, not
	// claimed: for a signed payment, the recovered signer.
	IdentifyPayment(c *Credential) (*PaymentIdentity, error)
	// NamedQuote returns the quote id c names ("" for none), which prices
	// the call when the request names none. It checks nothing.
	NamedQuote(c *Credential) string
	// Verify checks c against offer and res. Failures are *Problem.
	Verify(ctx context.Context, offer Offer, res Resource, c *Credential) (*Authorization, error)
	// Hold places the hold a payment needs before the paid work runs,
	// such as a card authorisation; nil when it needs none. The Cashier
	// calls it once the payment is reserved (its order open): a
	// credential refused as already used never places a hold, and a hold
	// that fails releases the reservation. Void releases the hold; Settle
	// captures it (placing it first if Hold was never called).
	Hold(ctx context.Context, a *Authorization) error
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
	// ErrSettlementPending while it is still unknown (a *PendingError
	// carries a transaction it learnt of); or a *Problem when it is known
	// that the payment never settled and never will (the order is then
	// failed and released).
	CheckSettlement(ctx context.Context, o *Order) (*Settlement, error)
	// PaymentOptions lists the ways to pay offer (network, asset, payee),
	// as quotes show them.
	PaymentOptions(offer Offer) []PaymentOption
}

// PaymentIdentity is which payment a credential carries and who made it,
// as the credential alone shows: no clock, no network.
type PaymentIdentity struct {
	// Payer is the payer as Verify would report it (Authorization.Payer).
	Payer string
	// ReservationKey is the payment's single-use key
	// (Authorization.ReservationKey).
	ReservationKey string
	// QuoteID is the quote the credential names, if any.
	QuoteID string
}

// ErrUnidentified reports a credential that cannot be identified offline
// (Processor.IdentifyPayment).
var ErrUnidentified = errors.New("payment: credential cannot be identified offline")

// ErrSettlementPending reports a settlement whose outcome is not known yet
// (facilitator timeout, transaction pending). It is not a failure: the
// payer must not be asked to pay again.
var ErrSettlementPending = wire.ErrSettlementPending

// PendingError is a settlement whose outcome is not known yet that may
// name the transaction it learnt of (Transaction); it matches
// ErrSettlementPending. It is x402.PendingError.
type PendingError = wire.PendingError

// Problem is a payment failure reported to the payer.
type Problem struct {
	// Status is the HTTP-equivalent status: 400 (malformed request), 402
	// (pay again) or 403 (paid but refused by policy).
	Status int
	// Type is the MPP problem type suffix, e.g. "malformed-credential",
	// "invalid-challenge", "payment-expired", "verification-failed",
	// "payment-insufficient", "method-unsupported" (the RFC 9457 type is
	// ProblemTypeBase + Type).
	Type string
	// Reason is the x402 invalidReason/errorReason code, e.g.
	// "invalid_exact_evm_payload_signature".
	Reason string
	// Detail is a sentence for people.
	Detail string
	// Settlement, when set, is the protocol's answer to a refused
	// settlement (x402: the SettleResponse with success false), sent with
	// the refusal as a settlement is sent.
	Settlement *Settlement
}

// ProblemTypeBase prefixes the MPP problem types (the RFC 9457 "type" of
// a Problem).
const ProblemTypeBase = "https://paymentauth.org/problems/"

// NewProblem returns a Problem whose detail is format with args.
func NewProblem(status int, typ, reason, format string, args ...any) *Problem {
	if len(args) > 0 {
		format = fmt.Sprintf(format, args...)
	}
	return &Problem{Status: status, Type: typ, Reason: reason, Detail: format}
}

// ErrorCode is the x402 "error" of a challenge that reports p: the reason
// code, else the detail, else the problem type.
func (p *Problem) ErrorCode() string {
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
