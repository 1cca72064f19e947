package discovery

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ChallengeMethods reads the accepted payment methods of a 402 answer:
// the x402 v2 PAYMENT-REQUIRED header (or, without it, an x402 v1 body)
// and every MPP Payment challenge in WWW-Authenticate. Documents priced
// from it say exactly what the live challenge says.
func ChallengeMethods(h http.Header, body []byte) ([]Method, error) {
	var out []Method
	if v := h.Get("Payment-Required"); v != "" {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("discovery: PAYMENT-REQUIRED is not base64: %w", err)
		}
		var pr struct {
			Accepts []struct {
				Scheme  string         `json:"scheme"`
				Network string         `json:"network"`
				Amount  string         `json:"amount"`
				Asset   string         `json:"asset"`
				PayTo   string         `json:"payTo"`
				Extra   map[string]any `json:"extra"`
			} `json:"accepts"`
		}
		if err := json.Unmarshal(raw, &pr); err != nil {
			return nil, fmt.Errorf("discovery: PAYMENT-REQUIRED: %w", err)
		}
		for _, a := range pr.Accepts {
			out = append(out, Method{Protocol: "x402", Scheme: a.Scheme, Network: a.Network, Asset: a.Asset,
				AssetSymbol: assetSymbol(a.Asset, a.Extra), PayTo: a.PayTo, Amount: a.Amount})
		}
	} else if len(body) > 0 {
		var v1 struct {
			Version int `json:"x402Version"`
			Accepts []struct {
				Scheme  string         `json:"scheme"`
				Network string         `json:"network"`
				Amount  string         `json:"maxAmountRequired"`
				Asset   string         `json:"asset"`
				PayTo   string         `json:"payTo"`
				Extra   map[string]any `json:"extra"`
			} `json:"accepts"`
		}
		if json.Unmarshal(body, &v1) == nil && v1.Version == 1 {
			for _, a := range v1.Accepts {
				out = append(out, Method{Protocol: "x402", Scheme: a.Scheme, Network: caip2(a.Network), Asset: a.Asset,
					AssetSymbol: assetSymbol(a.Asset, a.Extra), PayTo: a.PayTo, Amount: a.Amount})
			}
		}
	}
	for _, v := range h.Values("Www-Authenticate") {
		chs, err := parseAuthChallenges(v)
		if err != nil {
			return nil, err
		}
		for _, c := range chs {
			if !strings.EqualFold(c.scheme, "Payment") {
				continue
			}
			m, err := mppMethod(c.params)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("discovery: the 402 answer offers no payment method")
	}
	return out, nil
}

func mppMethod(p map[string]string) (Method, error) {
	m := Method{Protocol: "mpp", Scheme: p["method"], Intent: p["intent"]}
	reqB64 := p["request"]
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(reqB64, "="))
	if err != nil {
		return m, fmt.Errorf("discovery: MPP request is not base64url: %w", err)
	}
	var req struct {
		Amount        string `json:"amount"`
		Currency      string `json:"currency"`
		Recipient     string `json:"recipient"`
		MethodDetails struct {
			ChainID   json.Number `json:"chainId"`
			NetworkID string      `json:"networkId"`
		} `json:"methodDetails"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			return m, fmt.Errorf("discovery: MPP request: %w", err)
		}
	}
	m.Amount, m.Asset, m.PayTo = req.Amount, req.Currency, req.Recipient
	switch {
	case req.MethodDetails.ChainID != "":
		m.Network = "eip155:" + req.MethodDetails.ChainID.String()
		m.AssetSymbol = assetSymbol(req.Currency, nil)
	case m.Scheme == "stripe":
		m.Network = "stripe"
		m.AssetSymbol = strings.ToUpper(req.Currency)
		if m.PayTo == "" {
			m.PayTo = req.MethodDetails.NetworkID
		}
	}
	return m, nil
}

// usdcAddresses are the USDC contracts of the networks assay accepts.
func usdcAddresses() map[string]bool {
	return map[string]bool{
		"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913": true, // Base
		"0x036cbd53842c5426634e7929541ec2318f3dcf7e": true, // Base Sepolia
	}
}

func assetSymbol(asset string, extra map[string]any) string {
	if usdcAddresses()[strings.ToLower(asset)] {
		return "USDC"
	}
	if n, ok := extra["name"].(string); ok && (n == "USD Coin" || n == "USDC") {
		return "USDC"
	}
	if len(asset) == 3 {
		return strings.ToUpper(asset)
	}
	return asset
}

// caip2 maps x402 v1 network names to CAIP-2.
func caip2(n string) string {
	switch n {
	case "base":
		return "eip155:8453"
	case "base-sepolia":
		return "eip155:84532"
	}
	return n
}

type authChallenge struct {
	scheme string
	params map[string]string
}

// parseAuthChallenges parses a WWW-Authenticate field value (RFC 9110
// §11.6.1): one or more challenges, each a scheme followed by
// comma-separated auth-params whose values are tokens or quoted strings.
func parseAuthChallenges(v string) ([]authChallenge, error) {
	var out []authChallenge
	i := 0
	skip := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == ',') {
			i++
		}
	}
	token := func() string {
		start := i
		for i < len(v) && !strings.ContainsRune(" \t,=\"", rune(v[i])) {
			i++
		}
		return v[start:i]
	}
	for {
		skip()
		if i >= len(v) {
			return out, nil
		}
		t := token()
		if t == "" {
			return nil, fmt.Errorf("discovery: bad WWW-Authenticate at %d", i)
		}
		// Skip whitespace to see whether t is a parameter name.
		j := i
		for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
			j++
		}
		if j < len(v) && v[j] == '=' && len(out) > 0 {
			i = j + 1
			for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
				i++
			}
			var val string
			if i < len(v) && v[i] == '"' {
				i++
				var b strings.Builder
				for i < len(v) && v[i] != '"' {
					if v[i] == '\\' && i+1 < len(v) {
						i++
					}
					b.WriteByte(v[i])
					i++
				}
				if i >= len(v) {
					return nil, errors.New("discovery: unterminated quoted string in WWW-Authenticate")
				}
				i++
				val = b.String()
			} else {
				val = token()
			}
			out[len(out)-1].params[strings.ToLower(t)] = val
			continue
		}
		out = append(out, authChallenge{scheme: t, params: map[string]string{}})
	}
}

// AmountInt returns the amount of m as an integer (0 when it is not one).
func (m Method) AmountInt() int64 {
	n, err := strconv.ParseInt(m.Amount, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
