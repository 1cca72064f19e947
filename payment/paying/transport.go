package paying

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
)

// TransportOptions configures the paying Transport. Nil means defaults.
type TransportOptions struct {
	// MaxPerCallMicroUSD is the most one call may cost (default
	// 1 000 000 = USD 1, the @x402/core default). Dearer challenges are
	// not paid: the 402 is returned as is.
	MaxPerCallMicroUSD int64
	// BudgetMicroUSD caps the total the Transport signs for over its
	// lifetime; 0 means no total cap. An amount counts as spent when it is
	// signed, whatever the server does with it.
	BudgetMicroUSD int64
	// PreferMPP answers MPP evm challenges before x402 ones. By default
	// x402 v2 is preferred, then x402 v1, then MPP evm.
	PreferMPP bool
	// PaymentID, when set, returns an x402 payment-identifier for a request
	// (idempotency across retries); "" sends none.
	PaymentID func(*http.Request) string
	// MaxBodyBytes bounds request bodies buffered for replay (default
	// 10 MiB).
	MaxBodyBytes int64
	// Retries is how many times a paid request whose answer was lost is
	// sent again with the same credential (default 3; negative: never).
	// Lost means a transport error while the request's context is live, a
	// 502, 503 or 504 (a proxy or a server that could not answer), or a
	// 409 with Retry-After (the payment's first request is still being
	// processed). The same credential buys nothing twice: an assay server
	// answers it with the order it opened (the same bytes, order id and
	// receipt, and a fresh order token), or runs it if it never started.
	Retries int
	// RetryWait is the pause before a retry when the answer names none
	// (default 1 s); MaxRetryWait caps a Retry-After (default 30 s).
	RetryWait    time.Duration
	MaxRetryWait time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Transport is an http.RoundTripper that pays HTTP 402 challenges (x402 v2
// and v1, MPP evm) with a Signer and sends the request again with the
// credential — and with the same credential again while that answer is
// lost (TransportOptions.Retries): the credential is the purchase, so a
// retry recovers what was bought instead of paying twice. Use it as an
// http.Client's Transport; read what was paid with ResponseInfo.
type Transport struct {
	signer evm.Signer
	base   http.RoundTripper
	opts   TransportOptions

	mu    sync.Mutex
	spent int64
}

// NewTransport returns a paying transport over base (nil:
// http.DefaultTransport).
func NewTransport(signer evm.Signer, base http.RoundTripper, opts *TransportOptions) *Transport {
	t := &Transport{signer: signer, base: base}
	if opts != nil {
		t.opts = *opts
	}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.opts.MaxPerCallMicroUSD <= 0 {
		t.opts.MaxPerCallMicroUSD = 1_000_000
	}
	if t.opts.MaxBodyBytes <= 0 {
		t.opts.MaxBodyBytes = 10 << 20
	}
	if t.opts.Now == nil {
		t.opts.Now = time.Now
	}
	if t.opts.Retries == 0 {
		t.opts.Retries = 3
	}
	if t.opts.RetryWait <= 0 {
		t.opts.RetryWait = time.Second
	}
	if t.opts.MaxRetryWait <= 0 {
		t.opts.MaxRetryWait = 30 * time.Second
	}
	return t
}

// Spent returns the micro-USD signed for so far.
func (t *Transport) Spent() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent
}

// reserve counts amount against the budget, or reports that it does not fit.
func (t *Transport) reserve(amount int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if amount <= 0 || amount > t.opts.MaxPerCallMicroUSD {
		return false
	}
	if t.opts.BudgetMicroUSD > 0 && t.spent+amount > t.opts.BudgetMicroUSD {
		return false
	}
	t.spent += amount
	return true
}

func (t *Transport) release(amount int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spent -= amount
}

func (t *Transport) fits(amount int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return amount > 0 && amount <= t.opts.MaxPerCallMicroUSD && (t.opts.BudgetMicroUSD <= 0 || t.spent+amount <= t.opts.BudgetMicroUSD)
}

// PaymentInfo describes what the Transport paid for a response.
type PaymentInfo struct {
	// Protocol is x402.Protocol or mpp.Protocol; Version the x402 version.
	Protocol string
	Version  int
	// AmountMicroUSD was signed for; Network is the CAIP-2 id; PayTo the
	// payee.
	AmountMicroUSD int64
	Network        string
	PayTo          string
	// Settlement is the decoded PAYMENT-RESPONSE / X-PAYMENT-RESPONSE, and
	// Receipt the decoded Payment-Receipt, when the server sent them.
	Settlement *x402.SettleResponse
	Receipt    *mpp.Receipt
	// Order headers of assay services (X-Agentic-Order-Id,
	// X-Agentic-Order-Token, X-Agentic-Receipt-Id).
	OrderID, OrderToken, ReceiptID string
}

type paidKey struct{}

// ResponseInfo returns what the Transport paid for resp, with the
// settlement, receipt and order headers read from resp. ok is false when
// the response was not paid for by a Transport.
func ResponseInfo(resp *http.Response) (info *PaymentInfo, ok bool) {
	if resp == nil || resp.Request == nil {
		return nil, false
	}
	p, ok := resp.Request.Context().Value(paidKey{}).(*PaymentInfo)
	if !ok {
		return nil, false
	}
	out := *p
	h := resp.Header
	for _, name := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		if v := h.Get(name); v != "" {
			var sr x402.SettleResponse
			if x402.DecodeHeader(v, &sr) == nil {
				out.Settlement = &sr
				break
			}
		}
	}
	if v := h.Get(mpp.HeaderPaymentReceipt); v != "" {
		if r, err := mpp.DecodeReceipt(v); err == nil {
			out.Receipt = r
		}
	}
	out.OrderID = h.Get("X-Agentic-Order-Id")
	out.OrderToken = h.Get("X-Agentic-Order-Token")
	out.ReceiptID = h.Get("X-Agentic-Receipt-Id")
	return &out, true
}

// ErrBodyTooLarge reports a request body too large to replay.
var ErrBodyTooLarge = errors.New("payment: request body too large to replay after a 402")

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	first, err := t.replayable(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(first)
	if err != nil || resp.StatusCode != http.StatusPaymentRequired {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("payment: reading the 402 body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))

	opt := t.choose(resp.Header, body)
	if opt == nil || !t.reserve(opt.amount) {
		return resp, nil
	}
	name, value, info, err := opt.pay(req.Context(), t, req)
	if err != nil {
		t.release(opt.amount) // nothing was signed
		return nil, err
	}
	paid := first.WithContext(context.WithValue(first.Context(), paidKey{}, info))
	paid.Header = first.Header.Clone()
	paid.Header.Set(name, value)
	return t.sendPaid(paid)
}

// sendPaid sends the paid request, and again with the same credential
// while its answer is lost (see TransportOptions.Retries).
func (t *Transport) sendPaid(paid *http.Request) (*http.Response, error) {
	ctx := paid.Context()
	for attempt := 0; ; attempt++ {
		r, err := t.replayable(paid)
		if err != nil {
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		if attempt >= t.opts.Retries || !lostAnswer(ctx, resp, err) {
			return resp, err
		}
		wait := t.opts.RetryWait
		if resp != nil {
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s >= 0 {
				wait = min(time.Duration(s)*time.Second, t.opts.MaxRetryWait)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// lostAnswer reports whether a paid request's answer was lost: the
// credential is then presented again.
func lostAnswer(ctx context.Context, resp *http.Response, err error) bool {
	if err != nil {
		return ctx.Err() == nil
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusConflict:
		return resp.Header.Get("Retry-After") != ""
	}
	return false
}

// replayable returns a clone of req whose body can be sent again.
func (t *Transport) replayable(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
		return r, nil
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, t.opts.MaxBodyBytes+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > t.opts.MaxBodyBytes {
		return nil, ErrBodyTooLarge
	}
	get := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	r.Body, _ = get()
	r.GetBody = get
	r.ContentLength = int64(len(data))
	return r, nil
}

// option is one way to pay a 402.
type option struct {
	amount int64
	pay    func(ctx context.Context, t *Transport, req *http.Request) (header, value string, info *PaymentInfo, err error)
}

// choose picks the preferred payable option of a 402 answer.
func (t *Transport) choose(h http.Header, body []byte) *option {
	var v2, v1, viaMPP []*option
	if v := h.Get(x402.HeaderPaymentRequired); v != "" {
		var pr x402.PaymentRequired
		if x402.DecodeHeader(v, &pr) == nil && pr.X402Version == 2 {
			for i := range pr.Accepts {
				if o := t.optionV2(&pr, &pr.Accepts[i]); o != nil {
					v2 = append(v2, o)
				}
			}
		}
	}
	if len(v2) == 0 {
		var doc x402.PaymentRequiredV1
		if json.Unmarshal(body, &doc) == nil && doc.X402Version == 1 {
			for i := range doc.Accepts {
				if o := t.optionV1(&doc.Accepts[i]); o != nil {
					v1 = append(v1, o)
				}
			}
		}
	}
	if cs, _ := mpp.ParseChallenges(h.Values(mpp.HeaderWWWAuthenticate)); len(cs) > 0 {
		for _, c := range cs {
			if o := t.optionMPP(c); o != nil {
				viaMPP = append(viaMPP, o)
			}
		}
	}
	order := [][]*option{v2, v1, viaMPP}
	if t.opts.PreferMPP {
		order = [][]*option{viaMPP, v2, v1}
	}
	for _, list := range order {
		for _, o := range list {
			if t.fits(o.amount) {
				return o
			}
		}
	}
	return nil
}

func atomicAmount(s string) (int64, bool) {
	v, err := evm.ParseUint256(s)
	if err != nil || !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

func (t *Transport) optionV2(pr *x402.PaymentRequired, req *x402.PaymentRequirements) *option {
	n, err := knownUSDC(req.Network, req.Asset, req.ExtraString("name"), req.ExtraString("version"))
	amount, ok := atomicAmount(req.Amount)
	if err != nil || !ok || req.Scheme != x402.SchemeExact {
		return nil
	}
	return &option{amount: amount, pay: func(ctx context.Context, t *Transport, r *http.Request) (string, string, *PaymentInfo, error) {
		pl, err := PayX402V2(ctx, t.signer, pr, req, t.opts.Now())
		if err != nil {
			return "", "", nil, err
		}
		if t.opts.PaymentID != nil {
			if id := t.opts.PaymentID(r); id != "" {
				if pl.Extensions, err = x402.WithPaymentIdentifier(pl.Extensions, id); err != nil {
					return "", "", nil, err
				}
			}
		}
		v, err := x402.EncodeHeader(pl)
		return x402.HeaderPaymentSignature, v, &PaymentInfo{Protocol: x402.Protocol, Version: 2, AmountMicroUSD: amount, Network: n.CAIP2, PayTo: req.PayTo}, err
	}}
}

func (t *Transport) optionV1(req *x402.PaymentRequirementsV1) *option {
	name, _ := req.Extra["name"].(string)
	version, _ := req.Extra["version"].(string)
	n, err := knownUSDC(req.Network, req.Asset, name, version)
	amount, ok := atomicAmount(req.MaxAmountRequired)
	if err != nil || !ok || req.Scheme != x402.SchemeExact || n.V1Name != req.Network {
		return nil
	}
	return &option{amount: amount, pay: func(ctx context.Context, t *Transport, _ *http.Request) (string, string, *PaymentInfo, error) {
		pl, err := PayX402V1(ctx, t.signer, req, t.opts.Now())
		if err != nil {
			return "", "", nil, err
		}
		v, err := x402.EncodeHeader(pl)
		return x402.HeaderXPayment, v, &PaymentInfo{Protocol: x402.Protocol, Version: 1, AmountMicroUSD: amount, Network: n.CAIP2, PayTo: req.PayTo}, err
	}}
}

func (t *Transport) optionMPP(c mpp.Challenge) *option {
	if c.Method != mpp.MethodEVM || c.Intent != mpp.IntentCharge {
		return nil
	}
	var req MPPEVMRequest
	if c.MPPRequest(&req) != nil || req.MethodDetails.Decimals != 6 {
		return nil
	}
	n, ok := evm.LookupNetwork(strconv.FormatUint(req.MethodDetails.ChainID, 10))
	amount, ok2 := atomicAmount(req.Amount)
	if !ok || !ok2 {
		return nil
	}
	if _, err := knownUSDC(n.CAIP2, req.Currency, "", ""); err != nil {
		return nil
	}
	return &option{amount: amount, pay: func(ctx context.Context, t *Transport, _ *http.Request) (string, string, *PaymentInfo, error) {
		cred, err := PayMPPEVM(ctx, t.signer, c, t.opts.Now())
		if err != nil {
			return "", "", nil, err
		}
		v, err := cred.Encode()
		return mpp.HeaderAuthorization, v, &PaymentInfo{Protocol: mpp.Protocol, AmountMicroUSD: amount, Network: n.CAIP2, PayTo: req.Recipient}, err
	}}
}
