package seller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/x402"
)

// Hold has the Confirmer (a facilitator's /verify: balance, simulation)
// check a reserved x402 payment, when one is configured. Other payments
// need no hold here.
func (e *Exact) Hold(ctx context.Context, a *payment.Authorization) error {
	if p, ok := a.State.(*Payment); ok {
		return e.Confirm(ctx, p)
	}
	return nil
}

// Confirm has the Confirmer check p, when one is configured.
func (e *Exact) Confirm(ctx context.Context, p *Payment) error {
	if e.confirmer == nil {
		return nil
	}
	return e.check(ctx, e.confirmer, p)
}

// Settle settles an x402 payment through the Settler (dev mode: records
// it, sending nothing). A refusal is a 402 *payment.Problem whose
// Settlement is the failure SettleResponse, sent back in kind; an outcome
// that cannot be known yet matches payment.ErrSettlementPending.
func (e *Exact) Settle(ctx context.Context, a *payment.Authorization) (*payment.Settlement, error) {
	p, ok := a.State.(*Payment)
	if !ok {
		return nil, fmt.Errorf("payment: authorization of protocol %q was not made by this processor", a.Protocol)
	}
	if a.Dev {
		return e.devSettle(a, p)
	}
	sr, err := e.SettlePayment(ctx, a, p)
	if err != nil {
		return nil, err
	}
	if !sr.Success {
		pr := Refused(sr)
		// Reply in kind: the x402 failure SettleResponse goes back in
		// PAYMENT-RESPONSE (X-PAYMENT-RESPONSE for v1) with the 402.
		if s, err := e.Settlement(p.Version, sr, false); err == nil {
			pr.Settlement = s
		}
		return nil, pr
	}
	return e.Settlement(p.Version, sr, false)
}

// SettlePayment asks the Settler to settle p, the payment of a, and logs
// a failure to get an answer.
func (e *Exact) SettlePayment(ctx context.Context, a *payment.Authorization, p *Payment) (*x402.SettleResponse, error) {
	sr, err := e.settler.Settle(ctx, p.Version, p.Payload, p.Requirements)
	if err != nil {
		LogSettleError(e.log, a, err)
		return nil, err
	}
	return sr, nil
}

// LogSettleError logs a settlement of a that did not succeed: a warning
// while its outcome is unknown, an error otherwise.
func LogSettleError(log *slog.Logger, a *payment.Authorization, err error) {
	if errors.Is(err, payment.ErrSettlementPending) {
		log.Warn("payment settlement pending", "protocol", a.Protocol, "reservation", a.ReservationKey, "err", err)
		return
	}
	log.Error("payment settlement failed", "protocol", a.Protocol, "reservation", a.ReservationKey, "err", err)
}

// Refused is the problem of a settlement the facilitator refused: 402
// verification-failed with its errorReason (only the MPP draft's problem
// types are used).
func Refused(sr *x402.SettleResponse) *payment.Problem {
	reason := sr.ErrorReason
	if reason == "" {
		reason = "unexpected_settle_error"
	}
	detail := sr.ErrorMessage
	if detail == "" {
		detail = "The payment could not be settled: " + reason + "."
	}
	return &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: reason, Detail: detail}
}

// Settlement is the settlement of an x402 payment of version whose
// SettleResponse is sr, replying in kind: v1 payers get v1 network names.
func (e *Exact) Settlement(version int, sr *x402.SettleResponse, dev bool) (*payment.Settlement, error) {
	out := *sr
	if version == 1 {
		out.Network = e.net.V1Name
	} else if out.Network == "" {
		out.Network = e.net.CAIP2
	}
	meta, err := wire.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &payment.Settlement{Reference: sr.Transaction, Network: e.net.CAIP2, Protocol: payment.ProtocolX402, X402Version: version,
		Meta: meta, Dev: dev}, nil
}

// DevReferencePrefix starts every dev-mode settlement reference, so a fake
// transaction can never be mistaken for a real one (real hashes are pure
// hex after 0x).
const DevReferencePrefix = "0xdev"

// DevReference is the deterministic fake transaction reference of a dev
// settlement: "0xdev" + 61 hex digits of SHA-256(reservation key), the
// length of a real transaction hash.
func DevReference(reservationKey string) string {
	sum := sha256.Sum256([]byte(reservationKey))
	return DevReferencePrefix + hex.EncodeToString(sum[:])[:61]
}

// devSettle records an x402 settlement without sending anything.
func (e *Exact) devSettle(a *payment.Authorization, p *Payment) (*payment.Settlement, error) {
	ref := DevReference(a.ReservationKey)
	e.log.Debug("payment dev mode: settlement recorded, nothing sent on-chain", "reservation", a.ReservationKey, "reference", ref)
	return e.Settlement(p.Version, &x402.SettleResponse{
		Success: true, Transaction: ref, Network: e.net.CAIP2, Payer: a.Payer,
		Amount: strconv.FormatInt(a.AmountMicroUSD, 10),
	}, true)
}
