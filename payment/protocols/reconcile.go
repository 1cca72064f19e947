package protocols

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
	"github.com/assaykit/assay/payment/x402"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// ChainReader reads the EIP-3009 state of the token on a chain. *evm.RPC
// implements it over JSON-RPC.
type ChainReader interface {
	// AuthorizationState reports whether (authorizer, nonce) is used.
	AuthorizationState(ctx context.Context, n evm.Network, authorizer evm.Address, nonce [32]byte) (bool, error)
	// TransactionReceipt returns a mined transaction's receipt, nil when
	// the chain does not know it (yet).
	TransactionReceipt(ctx context.Context, txHash string) (*evm.Receipt, error)
	// AuthorizationUses returns the AuthorizationUsed logs of (authorizer,
	// nonce) since block from.
	AuthorizationUses(ctx context.Context, n evm.Network, authorizer evm.Address, nonce [32]byte, from uint64) ([]evm.Log, error)
}

var _ ChainReader = (*evm.RPC)(nil)

// paymentRecord is the Processor's durable record of a verified payment
// (Processor.Record): what CheckSettlement needs to settle it again or
// check it, also in another process after a restart.
type paymentRecord struct {
	Kind string `json:"kind"` // "x402", "mpp-evm" or "card"
	// Version, Payload and Requirements are the x402 facilitator request
	// (MPP evm: the x402 v2 payload built from its authorization).
	Version      int                    `json:"version,omitempty"`
	Payload      json.RawMessage        `json:"payload,omitempty"`
	Requirements json.RawMessage        `json:"requirements,omitempty"`
	ChallengeID  string                 `json:"challengeId,omitempty"`
	Card         *mppseller.CardPayment `json:"card,omitempty"`
}

// Record implements payment.Processor.
func (p *Processor) Record(a *payment.Authorization) ([]byte, error) {
	var r paymentRecord
	switch st := a.State.(type) {
	case *x402seller.Payment:
		r = paymentRecord{Kind: "x402", Version: st.Version, Payload: st.Payload, Requirements: st.Requirements}
	case *mppseller.EVMPayment:
		r = paymentRecord{Kind: "mpp-evm", Version: 2, Payload: st.Payload, Requirements: st.Requirements, ChallengeID: st.ChallengeID}
	case *mppseller.CardPayment:
		r = paymentRecord{Kind: "card", Card: st}
	default:
		return nil, fmt.Errorf("payment: authorization of protocol %q was not made by this processor", a.Protocol)
	}
	return wire.Marshal(r)
}

// resolveMargin is how long after an authorization's validBefore it is
// taken as unable to execute: a block's timestamp may trail our clock.
const resolveMargin = 30 * time.Second

// CheckSettlement implements payment.Processor: it settles again, or checks, a
// payment whose settlement outcome was not known. Each call is one
// attempt; the Cashier repeats it with back-off until the outcome is
// known.
//
// A dev-mode USDC settlement moves no funds and cannot fail: it is
// reported settled with the deterministic reference Settle gives. A card
// payment is captured again (the capture is idempotent at Stripe). An
// EIP-3009 payment (x402, MPP evm) is decided by these facts, in order:
//
//   - With a Chain: a transaction the facilitator named whose receipt
//     shows this authorization's transfer to the payee means settled. The
//     token's authorizationState then says whether the nonce is used; if
//     it is, its AuthorizationUsed log names the transaction, which is
//     ours (settled) or another transfer the payer made with the same
//     nonce (a *Problem: it can never settle). Unused after validBefore:
//     it can never settle (a *Problem).
//   - Otherwise the same payment is sent to /settle again. The
//     facilitator reconciles a repeat of a payment that landed (success
//     with its transaction) and settles one that never reached the chain.
//     A refusal for a used nonce, without a Chain to ask, means another
//     transfer used it (a *Problem). Any other refusal decides only after
//     validBefore (a *Problem): before, a transaction of the first
//     attempt may still be pending, and the refusal may be its effect.
//
// Everything else — timeouts, 5xx, an unreachable facilitator or chain,
// settlement_pending — leaves the outcome unknown: an error matching
// payment.ErrSettlementPending (a *payment.PendingError when the facilitator named
// a transaction). Orders recorded before records existed stay unknown, for
// the operator.
func (p *Processor) CheckSettlement(ctx context.Context, o *payment.Order) (*payment.Settlement, error) {
	if o.Dev && (o.Protocol == payment.ProtocolX402 || o.Protocol == payment.ProtocolMPP) {
		network := o.Network
		if network == "" {
			network = p.net.CAIP2
		}
		return &payment.Settlement{Reference: x402seller.DevReference(o.ReservationKey), Network: network, Dev: true}, nil
	}
	var r paymentRecord
	if len(o.PaymentRecord) == 0 || json.Unmarshal(o.PaymentRecord, &r) != nil {
		return nil, fmt.Errorf("%w: the order has no payment record to settle it again", payment.ErrSettlementPending)
	}
	switch r.Kind {
	case "card":
		return p.m.CaptureAgain(ctx, r.Card)
	case "x402", "mpp-evm":
		return p.checkEIP3009(ctx, o, &r)
	}
	return nil, fmt.Errorf("%w: unknown payment record %q", payment.ErrSettlementPending, r.Kind)
}

// settled builds the settlement of an EIP-3009 record paid by tx.
func (p *Processor) settled(r *paymentRecord, sr *x402.SettleResponse) (*payment.Settlement, error) {
	if r.Kind == "mpp-evm" {
		return p.m.EVMReceipt(r.ChallengeID, sr.Transaction, false)
	}
	return p.x.Settlement(r.Version, sr, false)
}

func (p *Processor) checkEIP3009(ctx context.Context, o *payment.Order, r *paymentRecord) (*payment.Settlement, error) {
	var pl x402.PaymentPayload
	var ex x402.ExactEVMPayload
	if err := json.Unmarshal(r.Payload, &pl); err != nil {
		return nil, fmt.Errorf("%w: payment record: %v", payment.ErrSettlementPending, err)
	}
	if err := json.Unmarshal(pl.Payload, &ex); err != nil {
		return nil, fmt.Errorf("%w: payment record: %v", payment.ErrSettlementPending, err)
	}
	a, err := ex.Authorization.Parse()
	if err != nil {
		return nil, fmt.Errorf("%w: payment record: %v", payment.ErrSettlementPending, err)
	}
	ours := func(tx string) *x402.SettleResponse {
		return &x402.SettleResponse{Success: true, Transaction: tx, Network: p.net.CAIP2, Payer: a.From.Hex()}
	}
	expired := !p.now().Before(x402seller.ValidBefore(a).Add(resolveMargin))
	if p.chain != nil {
		for _, ref := range o.SettlementRefs {
			rc, err := p.chain.TransactionReceipt(ctx, ref)
			if err == nil && evm.TransferOf(rc, p.net, a) {
				return p.settled(r, ours(ref))
			}
		}
		used, err := p.chain.AuthorizationState(ctx, p.net, a.From, a.Nonce)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", payment.ErrSettlementPending, err)
		}
		switch {
		case used:
			logs, err := p.chain.AuthorizationUses(ctx, p.net, a.From, a.Nonce, 0)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", payment.ErrSettlementPending, err)
			}
			for _, l := range logs {
				rc, err := p.chain.TransactionReceipt(ctx, l.TxHash)
				if err != nil {
					return nil, fmt.Errorf("%w: %v", payment.ErrSettlementPending, err)
				}
				if evm.TransferOf(rc, p.net, a) {
					return p.settled(r, ours(l.TxHash))
				}
			}
			if len(logs) == 0 {
				return nil, fmt.Errorf("%w: the nonce is used but the chain shows no AuthorizationUsed log yet", payment.ErrSettlementPending)
			}
			return nil, usedElsewhere()
		case expired:
			return nil, &payment.Problem{Status: http.StatusPaymentRequired, Type: "payment-expired", Reason: "invalid_exact_evm_payload_authorization_valid_before",
				Detail: "The authorization expired unused: it was never settled, and nothing was charged."}
		}
	}
	if p.settler == nil {
		return nil, fmt.Errorf("%w: no settler", payment.ErrSettlementPending)
	}
	sr, err := p.settler.Settle(ctx, r.Version, r.Payload, r.Requirements)
	switch {
	case err != nil && errors.Is(err, payment.ErrSettlementPending):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %v", payment.ErrSettlementPending, err)
	case sr.Success:
		return p.settled(r, sr)
	case sr.ErrorReason == reasonNonceUsed && p.chain == nil:
		return nil, usedElsewhere()
	case expired:
		pr := x402seller.Refused(sr)
		pr.Detail = "The authorization expired unsettled (" + pr.Reason + "): nothing was charged."
		return nil, pr
	}
	return nil, &x402.PendingError{Transaction: sr.Transaction,
		Cause: fmt.Errorf("the facilitator refused a repeat (%s) before the authorization expired", wire.Clip(sr.ErrorReason, 80))}
}

// reasonNonceUsed is the facilitators' errorReason for a used nonce.
const reasonNonceUsed = "invalid_exact_evm_nonce_already_used"

func usedElsewhere() *payment.Problem {
	return &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: reasonNonceUsed,
		Detail: "The authorization's nonce was used by another transfer: this payment was never settled, and nothing was charged."}
}

// ---- whether the facilitator takes payments on our network ----

type unsupported struct{ network string }

func (e *unsupported) Error() string {
	return "payment: the facilitator does not list exact payments on " + e.network
}
func (e *unsupported) Is(t error) bool {
	return t == payment.ErrNetworkUnsupported || t == payment.ErrProcessorUnavailable
}

// Freshness of the facilitator's /supported answer.
const (
	supportedOKFor   = 30 * time.Second
	supportedFailFor = 5 * time.Second
	supportedTimeout = 2 * time.Second
)

// supportCache remembers the facilitator's latest /supported verdict.
type supportCache struct {
	fac *x402.Facilitator
	net evm.Network
	now func() time.Time
	log *slog.Logger

	probe sync.Mutex // one probe at a time

	mu  sync.Mutex
	at  time.Time // last probe (zero: never)
	err error     // its outcome: nil, *unsupported, or a failure to answer
	// network is the verdict of the last probe the facilitator answered
	// (nil or *unsupported): a probe it did not answer leaves it as it
	// was, so that a facilitator known to lack the network does not take
	// payments again because it once timed out.
	network error
	running bool
}

// check probes /supported (bounded) unless the cached outcome is fresh.
func (s *supportCache) check(ctx context.Context) error {
	s.probe.Lock()
	defer s.probe.Unlock()
	s.mu.Lock()
	at, err := s.at, s.err
	s.mu.Unlock()
	if !at.IsZero() {
		fresh := supportedOKFor
		if err != nil {
			fresh = supportedFailFor
		}
		if s.now().Sub(at) < fresh {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, supportedTimeout)
	defer cancel()
	sr, perr := s.fac.Supported(ctx)
	switch {
	case perr != nil:
		err = fmt.Errorf("facilitator did not answer /supported: %w", perr)
	case !sr.Supports(2, "exact", s.net.CAIP2) && !sr.Supports(1, "exact", s.net.V1Name):
		err = &unsupported{network: s.net.CAIP2}
		s.log.Error("payments stopped: the facilitator does not list exact payments on the configured network", "network", s.net.CAIP2)
	default:
		err = nil
	}
	s.mu.Lock()
	s.at, s.err = s.now(), err
	if perr == nil {
		s.network = err
	}
	s.mu.Unlock()
	return err
}

// verdict is what paid routes go by, without waiting: the network
// verdict of the last probe the facilitator answered (a facilitator that
// did not answer neither stops them nor resumes them; its calls fail on
// their own). A stale verdict is refreshed in the background.
func (s *supportCache) verdict() error {
	s.mu.Lock()
	at, err, network := s.at, s.err, s.network
	stale := at.IsZero() || s.now().Sub(at) >= supportedOKFor || (err != nil && s.now().Sub(at) >= supportedFailFor)
	if stale && !s.running {
		s.running = true
		go func() {
			_ = s.check(context.Background())
			s.mu.Lock()
			s.running = false
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	if errors.Is(network, payment.ErrNetworkUnsupported) {
		return network
	}
	return nil
}

// Ready reports whether the processor can take payments now (readiness
// probes): nil in dev mode; otherwise the facilitator must answer
// /supported listing exact payments on the configured network (checked at
// most every 30 s, failures every 5 s, each probe bounded by 2 s).
func (p *Processor) Ready(ctx context.Context) error {
	if p.support == nil {
		return nil
	}
	return p.support.check(ctx)
}

// accepting is checked before every challenge and verification: nil
// unless the facilitator's last /supported answer lacks the network.
func (p *Processor) accepting() error {
	if p.support == nil {
		return nil
	}
	return p.support.verdict()
}
