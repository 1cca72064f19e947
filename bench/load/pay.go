package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/x402"
)

// Payment protocols a client answers a 402 with.
const (
	protoX402V2 = "x402v2"
	protoX402V1 = "x402v1"
	protoMPP    = "mpp"
)

// protocols lists them in rotation order.
var protocols = [...]string{protoX402V2, protoX402V1, protoMPP}

// credential is one signed payment: the header that carries it and the
// single-use key the server reserves for it (the same string the server
// stores as the order's reservation key), so that a client can count its
// own payments without trusting the server's order ids.
type credential struct {
	Protocol string
	Header   string
	Value    string
	Key      string // x402:<chain>:<from>:<nonce> or mpp:<challenge id>
	// OrderKey is the reservation key the server's order records (the
	// EIP-3009 key, for MPP too).
	OrderKey string
	Nonce    string // <payer address>/<EIP-3009 nonce>: the client's own account of its payment
	Amount   int64
}

// challenge is a parsed 402 answer.
type challenge struct {
	v2  *x402.PaymentRequired
	v1  *x402.PaymentRequiredV1
	mpp []mpp.Challenge
}

// parseChallenge reads the three offers of one 402 answer.
func parseChallenge(h http.Header, body []byte) (*challenge, error) {
	c := &challenge{}
	if v := h.Get(x402.HeaderPaymentRequired); v != "" {
		var pr x402.PaymentRequired
		if err := x402.DecodeHeader(v, &pr); err == nil && pr.X402Version == 2 && len(pr.Accepts) > 0 {
			c.v2 = &pr
		}
	}
	var doc x402.PaymentRequiredV1
	if json.Unmarshal(body, &doc) == nil && doc.X402Version == 1 && len(doc.Accepts) > 0 {
		c.v1 = &doc
	}
	if cs, err := mpp.ParseChallenges(h.Values(mpp.HeaderWWWAuthenticate)); err == nil {
		for _, ch := range cs {
			if ch.Method == mpp.MethodEVM && ch.Intent == mpp.IntentCharge {
				c.mpp = append(c.mpp, ch)
			}
		}
	}
	if c.v2 == nil && c.v1 == nil && len(c.mpp) == 0 {
		return nil, errors.New("402 without a payable offer")
	}
	return c, nil
}

// pay signs a credential for the challenge with the given protocol.
func (c *challenge) pay(ctx context.Context, signer evm.Signer, proto string, now time.Time) (*credential, error) {
	switch proto {
	case protoX402V2:
		if c.v2 == nil {
			return nil, errors.New("no x402 v2 offer")
		}
		req := &c.v2.Accepts[0]
		pl, err := paying.PayX402V2(ctx, signer, c.v2, req, now)
		if err != nil {
			return nil, err
		}
		key, nonce, err := x402Key(req.Network, pl.Payload)
		if err != nil {
			return nil, err
		}
		v, err := x402.EncodeHeader(pl)
		if err != nil {
			return nil, err
		}
		return &credential{Protocol: proto, Header: x402.HeaderPaymentSignature, Value: v, Key: key, OrderKey: key, Nonce: nonce, Amount: atoi64(req.Amount)}, nil
	case protoX402V1:
		if c.v1 == nil {
			return nil, errors.New("no x402 v1 offer")
		}
		req := &c.v1.Accepts[0]
		pl, err := paying.PayX402V1(ctx, signer, req, now)
		if err != nil {
			return nil, err
		}
		key, nonce, err := x402Key(req.Network, pl.Payload)
		if err != nil {
			return nil, err
		}
		v, err := x402.EncodeHeader(pl)
		if err != nil {
			return nil, err
		}
		return &credential{Protocol: proto, Header: x402.HeaderXPayment, Value: v, Key: key, OrderKey: key, Nonce: nonce, Amount: atoi64(req.MaxAmountRequired)}, nil
	case protoMPP:
		if len(c.mpp) == 0 {
			return nil, errors.New("no MPP evm offer")
		}
		ch := c.mpp[0]
		cred, err := paying.PayMPPEVM(ctx, signer, ch, now)
		if err != nil {
			return nil, err
		}
		v, err := cred.Encode()
		if err != nil {
			return nil, err
		}
		var req mpp.EVMRequest
		_ = ch.MPPRequest(&req)
		nonce := signer.Address().Hex() + "/" + strings.ToLower(mpp.Nonce(ch.ID, ch.Realm))
		var orderKey string
		var auth evm.EIP3009Authorization
		if n, ok := evm.LookupNetwork(strconv.FormatUint(req.MethodDetails.ChainID, 10)); ok && json.Unmarshal(cred.Payload, &auth) == nil {
			if a, err := auth.Parse(); err == nil {
				orderKey = a.ReservationKey(n)
			}
		}
		return &credential{Protocol: proto, Header: mpp.HeaderAuthorization, Value: v, Key: "mpp:" + ch.ID, OrderKey: orderKey, Nonce: nonce, Amount: atoi64(req.Amount)}, nil
	}
	return nil, fmt.Errorf("unknown protocol %q", proto)
}

// x402Key returns the reservation key of an exact EVM payload and the
// payer's own nonce.
func x402Key(network string, payload json.RawMessage) (key, nonce string, err error) {
	n, ok := evm.LookupNetwork(network)
	if !ok {
		return "", "", fmt.Errorf("unknown network %q", network)
	}
	var ex x402.ExactEVMPayload
	if err := json.Unmarshal(payload, &ex); err != nil {
		return "", "", err
	}
	a, err := ex.Authorization.Parse()
	if err != nil {
		return "", "", err
	}
	nonce = strings.ToLower(ex.Authorization.Nonce)
	return a.ReservationKey(n), a.From.Hex() + "/" + nonce, nil
}

func atoi64(s string) int64 {
	var n int64
	_, _ = fmt.Sscan(s, &n)
	return n
}
