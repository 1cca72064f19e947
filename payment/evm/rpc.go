package evm

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/internal/eip712"
)

// The chain reads settlement resolution needs are three Ethereum JSON-RPC
// calls (eth_call of authorizationState, eth_getTransactionReceipt and
// eth_getLogs). They are written here by hand, over net/http and
// encoding/json, instead of with go-ethereum's ethclient: that module
// would add well over a hundred packages to every seller's binary for
// three requests whose encoding is two 32-byte words.

// EIP-3009 and ERC-20 identifiers the chain reads use.
var (
	// selectorAuthorizationState is the 4-byte selector of
	// authorizationState(address,bytes32).
	selectorAuthorizationState = selector("authorizationState(address,bytes32)")
	// TopicAuthorizationUsed is topic 0 of EIP-3009's
	// AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce).
	TopicAuthorizationUsed = eip712.Keccak256([]byte("AuthorizationUsed(address,bytes32)"))
	// TopicTransfer is topic 0 of ERC-20's Transfer(address indexed from,
	// address indexed to, uint256 value).
	TopicTransfer = eip712.Keccak256([]byte("Transfer(address,address,uint256)"))
)

func selector(sig string) [4]byte {
	h := eip712.Keccak256([]byte(sig))
	return [4]byte{h[0], h[1], h[2], h[3]}
}

// SelectorAuthorizationState returns the selector of
// authorizationState(address,bytes32) (for doubles of the token contract).
func SelectorAuthorizationState() [4]byte { return selectorAuthorizationState }

// RPCOptions configure NewRPC. Nil means defaults, but URL is required.
type RPCOptions struct {
	// URL is the JSON-RPC endpoint (http or https).
	URL string
	// HTTPClient supplies the transport; nil uses one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one call (default 10 s).
	Timeout time.Duration
}

// RPC reads token state from a chain through its JSON-RPC endpoint. It is
// safe for concurrent use.
type RPC struct {
	url string
	hc  *http.Client
	id  atomic.Int64
}

// ErrRPC is matched (errors.Is) by every failure of a chain read: the
// endpoint could not be reached, answered an error or an unreadable
// result. Such a failure decides nothing about a payment.
var ErrRPC = errors.New("evm: chain RPC failed")

// NewRPC returns a client of the JSON-RPC endpoint o.URL.
func NewRPC(o *RPCOptions) (*RPC, error) {
	if o == nil || o.URL == "" {
		return nil, errors.New("evm: an RPC URL is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("evm: RPC URL %q is not an http(s) URL", o.URL)
	}
	hc := o.HTTPClient
	if hc == nil {
		t := o.Timeout
		if t <= 0 {
			t = 10 * time.Second
		}
		hc = &http.Client{Timeout: t}
	}
	return &RPC{url: o.URL, hc: hc}, nil
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends one JSON-RPC request and decodes its result into out.
func (c *RPC) call(ctx context.Context, method string, out any, params ...any) error {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.id.Add(1), Method: method, Params: params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrRPC, method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrRPC, method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrRPC, method, err)
	}
	var r rpcResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil {
		return fmt.Errorf("%w: %s: HTTP %d", ErrRPC, method, resp.StatusCode)
	}
	if r.Error != nil {
		return fmt.Errorf("%w: %s: error %d: %.200s", ErrRPC, method, r.Error.Code, r.Error.Message)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("%w: %s: unreadable result: %v", ErrRPC, method, err)
	}
	return nil
}

// AuthorizationState reports whether the token on network n has used the
// EIP-3009 nonce of authorizer (authorizationState(authorizer, nonce), at
// the latest block): true once a transfer with it executed or it was
// cancelled.
func (c *RPC) AuthorizationState(ctx context.Context, n Network, authorizer Address, nonce [32]byte) (bool, error) {
	data := make([]byte, 0, 4+64)
	data = append(data, selectorAuthorizationState[:]...)
	who := eip712.Address(authorizer)
	data = append(data, who[:]...)
	data = append(data, nonce[:]...)
	var out string
	call := map[string]string{"to": n.USDC.Hex(), "data": "0x" + hex.EncodeToString(data)}
	if err := c.call(ctx, "eth_call", &out, call, "latest"); err != nil {
		return false, err
	}
	word, err := decodeHex(out)
	if err != nil || len(word) != 32 {
		return false, fmt.Errorf("%w: eth_call: result %q is not one word", ErrRPC, clip(out))
	}
	return word[31] == 1, nil
}

// Log is one event log of a transaction receipt or of eth_getLogs.
type Log struct {
	Address     Address
	Topics      [][32]byte
	Data        []byte
	TxHash      string
	BlockNumber uint64
}

// Receipt is a mined transaction's receipt.
type Receipt struct {
	TxHash      string
	BlockNumber uint64
	// Success is status 0x1 (the transaction did not revert).
	Success bool
	Logs    []Log
}

type wireLog struct {
	Address     string   `json:"address"`
	Topics      []string `json:"topics"`
	Data        string   `json:"data"`
	TxHash      string   `json:"transactionHash"`
	BlockNumber string   `json:"blockNumber"`
}

func (w wireLog) parse() (Log, error) {
	a, err := ParseAddress(w.Address)
	if err != nil {
		return Log{}, err
	}
	l := Log{Address: a, TxHash: strings.ToLower(w.TxHash)}
	for _, t := range w.Topics {
		b, err := ParseBytes32(t)
		if err != nil {
			return Log{}, err
		}
		l.Topics = append(l.Topics, b)
	}
	if l.Data, err = decodeHex(w.Data); err != nil {
		return Log{}, err
	}
	if l.BlockNumber, err = parseQuantity(w.BlockNumber); err != nil {
		return Log{}, err
	}
	return l, nil
}

// TransactionReceipt returns the receipt of a mined transaction, or nil
// and no error when the chain does not know it (unknown or not mined yet).
func (c *RPC) TransactionReceipt(ctx context.Context, txHash string) (*Receipt, error) {
	if _, err := ParseBytes32(txHash); err != nil {
		return nil, fmt.Errorf("evm: transaction hash %q: %w", clip(txHash), err)
	}
	var w *struct {
		TxHash      string    `json:"transactionHash"`
		BlockNumber string    `json:"blockNumber"`
		Status      string    `json:"status"`
		Logs        []wireLog `json:"logs"`
	}
	if err := c.call(ctx, "eth_getTransactionReceipt", &w, txHash); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, nil
	}
	r := &Receipt{TxHash: strings.ToLower(w.TxHash), Success: w.Status == "0x1"}
	var err error
	if r.BlockNumber, err = parseQuantity(w.BlockNumber); err != nil {
		return nil, fmt.Errorf("%w: eth_getTransactionReceipt: %v", ErrRPC, err)
	}
	for _, wl := range w.Logs {
		l, err := wl.parse()
		if err != nil {
			return nil, fmt.Errorf("%w: eth_getTransactionReceipt: log: %v", ErrRPC, err)
		}
		r.Logs = append(r.Logs, l)
	}
	return r, nil
}

// AuthorizationUses returns the AuthorizationUsed logs of (authorizer,
// nonce) emitted by the token on network n since block from (0: the
// earliest block the endpoint serves). The token emits at most one.
func (c *RPC) AuthorizationUses(ctx context.Context, n Network, authorizer Address, nonce [32]byte, from uint64) ([]Log, error) {
	who := eip712.Address(authorizer)
	filter := map[string]any{
		"address":   n.USDC.Hex(),
		"fromBlock": "0x" + strconv.FormatUint(from, 16),
		"toBlock":   "latest",
		"topics": []string{"0x" + hex.EncodeToString(TopicAuthorizationUsed[:]),
			"0x" + hex.EncodeToString(who[:]), "0x" + hex.EncodeToString(nonce[:])},
	}
	var ws []wireLog
	if err := c.call(ctx, "eth_getLogs", &ws, filter); err != nil {
		return nil, err
	}
	out := make([]Log, 0, len(ws))
	for _, w := range ws {
		l, err := w.parse()
		if err != nil {
			return nil, fmt.Errorf("%w: eth_getLogs: %v", ErrRPC, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// TransferOf reports whether the receipt shows the EIP-3009 transfer of a
// on network n: a successful transaction whose logs hold the token's
// AuthorizationUsed(a.From, a.Nonce) and its Transfer(a.From, a.To,
// a.Value). A transaction that used the nonce for another transfer (the
// payer spending the same nonce elsewhere first) is not it.
func TransferOf(r *Receipt, n Network, a *TransferAuthorization) bool {
	if r == nil || !r.Success {
		return false
	}
	from, to := eip712.Address(a.From), eip712.Address(a.To)
	used, moved := false, false
	for _, l := range r.Logs {
		if l.Address != n.USDC || len(l.Topics) == 0 {
			continue
		}
		switch {
		case l.Topics[0] == TopicAuthorizationUsed && len(l.Topics) == 3:
			used = used || (l.Topics[1] == from && l.Topics[2] == a.Nonce)
		case l.Topics[0] == TopicTransfer && len(l.Topics) == 3:
			v := new(big.Int).SetBytes(l.Data)
			moved = moved || (l.Topics[1] == from && l.Topics[2] == to && a.Value != nil && v.Cmp(a.Value) == 0)
		}
	}
	return used && moved
}

func decodeHex(s string) ([]byte, error) {
	t, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return nil, fmt.Errorf("%q is not 0x-prefixed hex", clip(s))
	}
	return hex.DecodeString(t)
}

func parseQuantity(s string) (uint64, error) {
	t, ok := strings.CutPrefix(s, "0x")
	if !ok || t == "" {
		return 0, fmt.Errorf("%q is not a hex quantity", clip(s))
	}
	return strconv.ParseUint(t, 16, 64)
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
