// Package gatetest provides a deterministic fake payment.Processor for
// tests of paid routes (HTTP gate, MCP, A2A): it issues readable
// challenges, accepts credentials of the form
// "payer=0x…;nonce=…[;amount=…][;quote=quo_…][;method=stripe]" in the
// X-Test-Payment header (ReadCredential, httpgate.Options.ReadCredential)
// or in MCP _meta (ParseCredential), and records every settlement and
// void so tests can assert that nothing was charged twice. It identifies
// no payment offline: a credential used once is refused as used, never
// answered from its order.
//
// Special nonces steer verification: a nonce starting with "bad" fails
// verification (402 verification-failed), "expired" fails as expired
// (402 payment-expired), "down" fails as an unavailable processor (a plain
// error). Settlement outcomes are set per nonce with SetSettleError.
package gatetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/payment"
)

// Header carries the fake credential.
const Header = "X-Test-Payment"

// Network is the network the fake reports.
const Network = "eip155:84532"

// Credential returns a header value paying with payer and nonce.
func Credential(payer, nonce string) string { return "payer=" + payer + ";nonce=" + nonce }

// Processor is the fake. The zero value is ready to use.
type Processor struct {
	// SettleDelay is slept in Settle (to widen race windows).
	SettleDelay time.Duration
	// Check answers CheckSettlement; nil answers ErrSettlementPending.
	Check func(o *payment.Order) (*payment.Settlement, error)

	mu         sync.Mutex
	settleErr  map[string]error
	settled    map[string]int
	voided     map[string]int
	challenges []payment.Resource
	verified   int
}

var _ payment.Processor = (*Processor)(nil)

// SetSettleError makes Settle of the payment with nonce return err
// (payment.ErrSettlementPending, a *payment.Problem, ...); nil clears it.
func (p *Processor) SetSettleError(nonce string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.settleErr == nil {
		p.settleErr = map[string]error{}
	}
	p.settleErr[nonce] = err
}

// Settled returns how many times the payment with nonce (of any payer)
// was settled.
func (p *Processor) Settled(payer, nonce string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settled[strings.ToLower(payer)+":"+nonce]
}

// TotalSettled returns the number of settlements.
func (p *Processor) TotalSettled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.settled {
		n += c
	}
	return n
}

// Voided returns how many times the payment was voided.
func (p *Processor) Voided(payer, nonce string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.voided[strings.ToLower(payer)+":"+nonce]
}

// Challenges returns the resources of every challenge issued.
func (p *Processor) Challenges() []payment.Resource {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]payment.Resource(nil), p.challenges...)
}

// Challenge implements payment.Processor.
func (p *Processor) Challenge(ctx context.Context, offer payment.Offer, res payment.Resource) (*payment.Challenge, error) {
	p.mu.Lock()
	p.challenges = append(p.challenges, res)
	p.mu.Unlock()
	req := map[string]any{
		"x402Version": 2, "error": "payment required",
		"resource": map[string]any{"url": res.URL, "description": res.Description, "mimeType": res.MimeType},
		"accepts":  []any{map[string]any{"scheme": "test", "network": Network, "amount": strconv.FormatInt(offer.AmountMicroUSD, 10)}},
	}
	pr, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	mppChallenge := fmt.Sprintf(`Payment id="test", method="test", intent="charge", opaque=%q, digest=%q`, res.QuoteID, res.BodyDigest)
	body, err := json.Marshal(map[string]any{
		"type": payment.ProblemTypeBase + "payment-required", "title": "Payment Required", "status": 402,
		"detail": "Payment required", "x402Version": 1, "error": "X-PAYMENT header is required",
		"accepts": []any{map[string]any{"scheme": "test", "network": Network, "maxAmountRequired": strconv.FormatInt(offer.AmountMicroUSD, 10), "resource": res.URL}},
	})
	if err != nil {
		return nil, err
	}
	return &payment.Challenge{PaymentRequired: pr, Body: body, MPP: []string{mppChallenge}}, nil
}

// ParseCredential reads a fake credential value.
func ParseCredential(v string) (*payment.Credential, error) {
	fields := map[string]string{}
	for _, part := range strings.Split(v, ";") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, &payment.Problem{Status: 400, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed payment credential"}
		}
		fields[k] = val
	}
	if fields["payer"] == "" || fields["nonce"] == "" {
		return nil, &payment.Problem{Status: 400, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Payment credential lacks payer or nonce"}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	c := &payment.Credential{Protocol: payment.ProtocolX402, Header: Header, Version: 2, Method: "exact", Raw: raw}
	if fields["method"] == "stripe" {
		c.Protocol, c.Version, c.Method = payment.ProtocolMPP, 0, "stripe"
	}
	return c, nil
}

// ReadCredential reads the fake credential of the X-Test-Payment header
// (for httpgate.Options.ReadCredential).
func ReadCredential(h http.Header) (*payment.Credential, error) {
	v := h.Get(Header)
	if v == "" {
		return nil, nil
	}
	return ParseCredential(v)
}

// Verify implements payment.Processor.
func (p *Processor) Verify(ctx context.Context, offer payment.Offer, res payment.Resource, c *payment.Credential) (*payment.Authorization, error) {
	var f map[string]string
	if err := json.Unmarshal(c.Raw, &f); err != nil {
		return nil, &payment.Problem{Status: 402, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed payment credential"}
	}
	nonce := f["nonce"]
	switch {
	case strings.HasPrefix(nonce, "bad"):
		return nil, &payment.Problem{Status: 402, Type: "verification-failed", Reason: "invalid_exact_evm_payload_signature", Detail: "The payment signature does not verify"}
	case strings.HasPrefix(nonce, "expired"):
		return nil, &payment.Problem{Status: 402, Type: "payment-expired", Reason: "invalid_exact_evm_payload_authorization_valid_before", Detail: "The payment has expired"}
	case strings.HasPrefix(nonce, "down"):
		return nil, errors.New("facilitator timeout")
	}
	want := offer.AmountMicroUSD
	a := &payment.Authorization{Protocol: payment.ProtocolX402, Method: "exact", Network: Network}
	if c.Method == "stripe" {
		want, a.Protocol, a.Method, a.Network = offer.CardMicroUSD, payment.ProtocolMPPStripe, "stripe", "stripe"
		if want == 0 {
			return nil, &payment.Problem{Status: 400, Type: "method-unsupported", Detail: "Cards are not accepted here"}
		}
	}
	amount := want
	if s := f["amount"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, &payment.Problem{Status: 402, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Bad amount"}
		}
		amount = n
	}
	if amount != want {
		return nil, &payment.Problem{Status: 402, Type: "payment-insufficient", Reason: "invalid_exact_evm_payload_authorization_value_mismatch",
			Detail: fmt.Sprintf("The payment is for %d, the price is %d", amount, want)}
	}
	p.mu.Lock()
	p.verified++
	p.mu.Unlock()
	a.Payer = strings.ToLower(f["payer"])
	a.ReservationKey = a.Payer + ":" + nonce
	a.AmountMicroUSD = amount
	a.ValidUntil = time.Now().Add(time.Hour)
	a.QuoteID = f["quote"]
	a.Dev = f["dev"] == "true"
	a.State = nonce
	return a, nil
}

// Settle implements payment.Processor.
func (p *Processor) Settle(ctx context.Context, a *payment.Authorization) (*payment.Settlement, error) {
	if p.SettleDelay > 0 {
		time.Sleep(p.SettleDelay)
	}
	nonce, _ := a.State.(string)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.settleErr[nonce]; err != nil {
		return nil, err
	}
	if p.settled == nil {
		p.settled = map[string]int{}
	}
	p.settled[a.ReservationKey]++
	ref := "0xtx-" + nonce
	meta, _ := json.Marshal(map[string]any{"success": true, "transaction": ref, "network": a.Network, "payer": a.Payer})
	return &payment.Settlement{Reference: ref, Network: a.Network, Protocol: payment.ProtocolX402, X402Version: 2, Meta: meta, Dev: a.Dev}, nil
}

// Void implements payment.Processor.
func (p *Processor) Void(ctx context.Context, a *payment.Authorization) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.voided == nil {
		p.voided = map[string]int{}
	}
	p.voided[a.ReservationKey]++
	return nil
}

// Record implements payment.Processor: the payment's nonce.
func (p *Processor) Record(a *payment.Authorization) ([]byte, error) {
	nonce, _ := a.State.(string)
	return []byte(nonce), nil
}

// CheckSettlement implements payment.Processor through Check.
func (p *Processor) CheckSettlement(ctx context.Context, o *payment.Order) (*payment.Settlement, error) {
	if p.Check == nil {
		return nil, payment.ErrSettlementPending
	}
	return p.Check(o)
}

// IdentifyPayment implements payment.Processor: the fake identifies no
// payment offline (payment.ErrUnidentified).
func (p *Processor) IdentifyPayment(c *payment.Credential) (*payment.PaymentIdentity, error) {
	return nil, payment.ErrUnidentified
}

// NamedQuote implements payment.Processor: a fake credential's quote
// prices the call through the Authorization (Verify), never before it.
func (p *Processor) NamedQuote(c *payment.Credential) string { return "" }

// Hold implements payment.Processor: the fake places no hold.
func (p *Processor) Hold(ctx context.Context, a *payment.Authorization) error { return nil }

// PaymentOptions implements payment.Processor: USDC over x402 and MPP
// (evm), and cards over MPP (stripe) when the offer has a card price, on
// no particular network.
func (p *Processor) PaymentOptions(offer payment.Offer) []payment.PaymentOption {
	usdc := strconv.FormatInt(offer.AmountMicroUSD, 10)
	out := []payment.PaymentOption{
		{Protocol: payment.ProtocolX402, Method: "exact", Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD},
		{Protocol: payment.ProtocolMPP, Method: "evm", Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD},
	}
	if offer.CardMicroUSD > 0 {
		out = append(out, payment.PaymentOption{Protocol: payment.ProtocolMPP, Method: "stripe", Asset: "usd",
			Amount: strconv.FormatInt(offer.CardMicroUSD/10_000, 10), AmountMicroUSD: offer.CardMicroUSD})
	}
	return out
}
