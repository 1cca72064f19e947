package httpgate

import (
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
	"github.com/assaykit/assay/payment/x402"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// HTTP headers of paid calls.
const (
	HeaderOrderID    = "X-Agentic-Order-Id"
	HeaderOrderToken = "X-Agentic-Order-Token"
	HeaderReceiptID  = "X-Agentic-Receipt-Id"
	// HeaderOrderStatus is the status of the order of a delivered answer:
	// "completed" (charged) or "voided" (delivered without charge under
	// the offer's waiver).
	HeaderOrderStatus    = "X-Agentic-Order-Status"
	HeaderQuoteID        = "X-Agentic-Quote-Id"
	HeaderCustomerKey    = "X-Agentic-Customer-Key"
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplay is "true" on a response replayed for a retried
	// Idempotency-Key.
	HeaderReplay = "X-Agentic-Idempotent-Replay"
)

// ReadCredential reads the payment credential of an HTTP request, the
// HTTP binding of both protocols: PAYMENT-SIGNATURE (x402 v2), X-PAYMENT
// (v1), and Authorization / Payment-Authorization with the Payment scheme
// (MPP). It returns nil and no error when there is none. More than one
// credential is a 400 problem; an undecodable x402 header is 400 and an
// undecodable MPP credential 402 (as the MPP draft specifies).
func ReadCredential(h http.Header) (*payment.Credential, error) {
	var creds []*payment.Credential
	var firstErr error
	for _, name := range []string{x402.HeaderPaymentSignature, x402.HeaderXPayment} {
		for _, v := range h.Values(name) {
			c, err := x402seller.HeaderCredential(name, v)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			creds = append(creds, c)
		}
	}
	for _, name := range []string{mpp.HeaderAuthorization, mpp.HeaderPaymentAuthorization} {
		for _, v := range h.Values(name) {
			c, err := mppseller.HeaderCredential(name, v)
			var p *payment.Problem
			switch {
			case errors.Is(err, mpp.ErrSeveralCredentials):
				return nil, severalCredentials()
			case errors.As(err, &p):
				if firstErr == nil {
					firstErr = p
				}
				creds = append(creds, nil)
			case err != nil:
				return nil, err
			case c != nil:
				creds = append(creds, c)
			}
		}
	}
	switch {
	case len(creds) > 1:
		return nil, severalCredentials()
	case firstErr != nil:
		return nil, firstErr
	case len(creds) == 0:
		return nil, nil
	}
	return creds[0], nil
}

func severalCredentials() *payment.Problem {
	return &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
		Detail: "The request carries several payment credentials; send exactly one."}
}

// ChallengeHeader returns the headers of a 402 that carries ch:
// PAYMENT-REQUIRED (x402 v2, its PaymentRequired in base64), one
// WWW-Authenticate per MPP challenge, Cache-Control: no-store, and the
// Content-Type of its body, application/problem+json.
func ChallengeHeader(ch *payment.Challenge) http.Header {
	h := http.Header{}
	if len(ch.PaymentRequired) > 0 {
		h.Set(x402.HeaderPaymentRequired, base64.StdEncoding.EncodeToString(ch.PaymentRequired))
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/problem+json")
	for _, c := range ch.MPP {
		h.Add(mpp.HeaderWWWAuthenticate, c)
	}
	return h
}

// SettlementHeader returns the header that carries s to the payer, in the
// protocol's kind: PAYMENT-RESPONSE (x402 v2) or X-PAYMENT-RESPONSE (v1)
// with the SettleResponse in base64, Payment-Receipt (MPP) with the
// receipt in base64url. Nil when s is nil or carries nothing.
func SettlementHeader(s *payment.Settlement) http.Header {
	if s == nil || len(s.Meta) == 0 {
		return nil
	}
	h := http.Header{}
	switch s.Protocol {
	case payment.ProtocolX402:
		name := x402.HeaderPaymentResponse
		if s.X402Version == 1 {
			name = x402.HeaderXPaymentResponse
		}
		h.Set(name, base64.StdEncoding.EncodeToString(s.Meta))
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		h.Set(mpp.HeaderPaymentReceipt, base64.RawURLEncoding.EncodeToString(s.Meta))
	}
	return h
}
