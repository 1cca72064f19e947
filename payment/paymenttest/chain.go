package paymenttest

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/eip712"
	"github.com/assaykit/assay/payment/evm"
)

// Chain is an in-memory chain holding the USDC token of one network, with
// the EIP-3009 semantics a facilitator's settlement meets on Base: a
// transferWithAuthorization executes only with a signature by the
// authorization's from, inside its validity window (validAfter < block
// time < validBefore), with an unused nonce and enough balance; it then
// moves the value, marks the (authorizer, nonce) used and logs
// AuthorizationUsed and Transfer. Submitted transactions wait in a
// mempool until they are mined (at once, or after a delay), and are
// checked again when mined, as on a real chain.
//
// RPC serves the Ethereum JSON-RPC reads that settlement resolution makes
// (eth_chainId, eth_blockNumber, eth_call of authorizationState and
// balanceOf, eth_getTransactionReceipt, eth_getLogs). Every payer starts
// with ChainOptions.Balance. It is safe for concurrent use.
type Chain struct {
	net evm.Network
	now func() time.Time

	mu       sync.Mutex
	balance  *big.Int
	balances map[evm.Address]*big.Int
	used     map[string]string // authorizer|nonce → tx hash
	txs      map[string]*ChainTx
	mempool  []*ChainTx
	block    uint64
	logs     []evm.Log
}

// ChainTx is a transferWithAuthorization transaction.
type ChainTx struct {
	Hash          string
	Authorization evm.TransferAuthorization
	// Block is the block it was mined in (0 while pending).
	Block uint64
	// Success is false when the transaction reverted (Reason says why).
	Success bool
	Reason  string
	// due is when a pending transaction is mined.
	due time.Time
}

// ChainOptions configure NewChain. Nil means defaults.
type ChainOptions struct {
	// Network is the CAIP-2 id of the chain (default eip155:8453).
	Network string
	// Balance is every payer's starting USDC balance in atomic units
	// (default 1,000 USDC).
	Balance int64
	// Now is the block clock (default time.Now).
	Now func() time.Time
}

// Reasons a transferWithAuthorization reverts, named as the x402
// facilitators report them.
const (
	ReasonInsufficientFunds = "insufficient_funds"
	ReasonValidBefore       = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonValidAfter        = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonSignature         = "invalid_exact_evm_payload_signature"
)

// NewChain returns an empty chain at block 1.
func NewChain(o *ChainOptions) (*Chain, error) {
	if o == nil {
		o = &ChainOptions{}
	}
	name := o.Network
	if name == "" {
		name = "eip155:8453"
	}
	n, ok := evm.LookupNetwork(name)
	if !ok {
		return nil, fmt.Errorf("paymenttest: unknown network %q", name)
	}
	c := &Chain{net: n, now: o.Now, balance: big.NewInt(o.Balance), balances: map[evm.Address]*big.Int{},
		used: map[string]string{}, txs: map[string]*ChainTx{}, block: 1}
	if o.Balance <= 0 {
		c.balance = big.NewInt(1_000_000_000)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Network returns the chain's network.
func (c *Chain) Network() evm.Network { return c.net }

func nonceKey(from evm.Address, nonce [32]byte) string {
	return from.Hex() + "|" + hex.EncodeToString(nonce[:])
}

// TxHash is the hash a signed authorization's transaction has on this
// chain: keccak256 of the authorization's digest and signature, so that a
// repeat of the same payment names the same transaction.
func (c *Chain) TxHash(a *evm.TransferAuthorization, sig []byte) string {
	d, _ := a.Digest(c.net)
	h := eip712.Keccak256(d[:], sig)
	return "0x" + hex.EncodeToString(h[:])
}

// SetBalance sets the USDC balance of addr in atomic units.
func (c *Chain) SetBalance(addr evm.Address, v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.balances[addr] = big.NewInt(v)
}

// Balance returns the USDC balance of addr.
func (c *Chain) Balance(addr evm.Address) *big.Int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	return new(big.Int).Set(c.balanceLocked(addr))
}

func (c *Chain) balanceLocked(addr evm.Address) *big.Int {
	b, ok := c.balances[addr]
	if !ok {
		b = new(big.Int).Set(c.balance)
		c.balances[addr] = b
	}
	return b
}

// ErrChainRevert is matched by the error of a transaction that would
// revert; errors.As finds a *RevertError with the reason.
var ErrChainRevert = errors.New("paymenttest: transaction reverts")

// RevertError is a reverted transferWithAuthorization.
type RevertError struct{ Reason string }

func (e *RevertError) Error() string        { return "paymenttest: transaction reverts: " + e.Reason }
func (e *RevertError) Is(target error) bool { return target == ErrChainRevert }

// check says why a would revert now, "" when it would execute. The
// signature is checked by the caller.
func (c *Chain) checkLocked(a *evm.TransferAuthorization) string {
	now := big.NewInt(c.now().Unix())
	switch {
	case c.used[nonceKey(a.From, a.Nonce)] != "":
		return ReasonNonceUsed
	case a.ValidAfter.Cmp(now) >= 0:
		return ReasonValidAfter
	case a.ValidBefore.Cmp(now) <= 0:
		return ReasonValidBefore
	case c.balanceLocked(a.From).Cmp(a.Value) < 0:
		return ReasonInsufficientFunds
	}
	return ""
}

// Simulate reports why a signed authorization would revert if sent now
// (a *RevertError), or nil when it would execute: what a facilitator's
// /verify checks with eth_call.
func (c *Chain) Simulate(a *evm.TransferAuthorization, sig []byte) error {
	if err := c.checkSignature(a, sig); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	if r := c.checkLocked(a); r != "" {
		return &RevertError{Reason: r}
	}
	return nil
}

func (c *Chain) checkSignature(a *evm.TransferAuthorization, sig []byte) error {
	d, err := a.Digest(c.net)
	if err != nil {
		return &RevertError{Reason: ReasonSignature}
	}
	if from, err := evm.RecoverAddress(d, sig); err != nil || from != a.From {
		return &RevertError{Reason: ReasonSignature}
	}
	return nil
}

// Submit sends transferWithAuthorization(a, sig) to the mempool; it is
// mined once minedAfter has passed (at once when 0). It returns the
// transaction hash, or a *RevertError when the transaction would revert
// now (a facilitator simulates before it submits). A repeat of a
// transaction already known returns it unchanged.
func (c *Chain) Submit(a *evm.TransferAuthorization, sig []byte, minedAfter time.Duration) (*ChainTx, error) {
	if err := c.checkSignature(a, sig); err != nil {
		return nil, err
	}
	hash := c.TxHash(a, sig)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	if tx, ok := c.txs[hash]; ok {
		cp := *tx
		return &cp, nil
	}
	if r := c.checkLocked(a); r != "" {
		return nil, &RevertError{Reason: r}
	}
	tx := &ChainTx{Hash: hash, Authorization: *a, due: c.now().Add(minedAfter)}
	c.txs[hash] = tx
	c.mempool = append(c.mempool, tx)
	c.mineDueLocked()
	cp := *tx
	return &cp, nil
}

// Tx returns the transaction with hash, nil when the chain does not know
// it.
func (c *Chain) Tx(hash string) *ChainTx {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	tx, ok := c.txs[strings.ToLower(hash)]
	if !ok {
		return nil
	}
	cp := *tx
	return &cp
}

// Mine mines every pending transaction now, whatever its delay.
func (c *Chain) Mine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tx := range c.mempool {
		tx.due = time.Time{}
	}
	c.mineDueLocked()
}

// mineDueLocked mines the pending transactions whose time has come, each
// in a block of its own, checking them again as the chain would.
func (c *Chain) mineDueLocked() {
	now := c.now()
	kept := c.mempool[:0]
	for _, tx := range c.mempool {
		if !tx.due.IsZero() && now.Before(tx.due) {
			kept = append(kept, tx)
			continue
		}
		c.block++
		tx.Block = c.block
		a := &tx.Authorization
		if r := c.checkLocked(a); r != "" {
			tx.Reason = r
			continue
		}
		tx.Success = true
		c.balanceLocked(a.From).Sub(c.balanceLocked(a.From), a.Value)
		c.balanceLocked(a.To).Add(c.balanceLocked(a.To), a.Value)
		c.used[nonceKey(a.From, a.Nonce)] = tx.Hash
		c.logs = append(c.logs,
			evm.Log{Address: c.net.USDC, Topics: [][32]byte{evm.TopicAuthorizationUsed, eip712.Address(a.From), a.Nonce}, TxHash: tx.Hash, BlockNumber: tx.Block},
			evm.Log{Address: c.net.USDC, Topics: [][32]byte{evm.TopicTransfer, eip712.Address(a.From), eip712.Address(a.To)},
				Data: word(a.Value), TxHash: tx.Hash, BlockNumber: tx.Block})
	}
	c.mempool = kept
}

func word(v *big.Int) []byte {
	w, _ := eip712.Uint256(v)
	return w[:]
}

// Used returns the hash of the transaction that used (authorizer, nonce),
// "" when it is unused.
func (c *Chain) Used(authorizer evm.Address, nonce [32]byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	return c.used[nonceKey(authorizer, nonce)]
}

// Transfers returns every successful transaction, in block order.
func (c *Chain) Transfers() []ChainTx {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	var out []ChainTx
	for _, tx := range c.txs {
		if tx.Success {
			out = append(out, *tx)
		}
	}
	sortTxs(out)
	return out
}

func sortTxs(txs []ChainTx) {
	for i := 1; i < len(txs); i++ {
		for j := i; j > 0 && txs[j].Block < txs[j-1].Block; j-- {
			txs[j], txs[j-1] = txs[j-1], txs[j]
		}
	}
}

// ---- JSON-RPC ----

// RPC returns the chain's Ethereum JSON-RPC handler.
func (c *Chain) RPC() http.Handler { return http.HandlerFunc(c.serveRPC) }

type rpcCall struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

func (c *Chain) serveRPC(w http.ResponseWriter, r *http.Request) {
	var call rpcCall
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.Method != http.MethodPost || json.Unmarshal(body, &call) != nil {
		http.Error(w, "not a JSON-RPC call", http.StatusBadRequest)
		return
	}
	result, err := c.answer(call)
	resp := map[string]any{"jsonrpc": "2.0", "id": call.ID}
	if err != nil {
		resp["error"] = map[string]any{"code": -32602, "message": err.Error()}
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func quantity(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func hex0x(b []byte) string { return "0x" + hex.EncodeToString(b) }

func (c *Chain) answer(call rpcCall) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mineDueLocked()
	switch call.Method {
	case "eth_chainId":
		return quantity(c.net.ChainID), nil
	case "eth_blockNumber":
		return quantity(c.block), nil
	case "eth_call":
		var tx struct{ To, Data string }
		if len(call.Params) == 0 || json.Unmarshal(call.Params[0], &tx) != nil {
			return nil, errors.New("eth_call needs a call object")
		}
		to, err := evm.ParseAddress(tx.To)
		data, derr := hex.DecodeString(strings.TrimPrefix(tx.Data, "0x"))
		if err != nil || derr != nil || to != c.net.USDC || len(data) < 4 {
			return nil, errors.New("execution reverted")
		}
		sel := [4]byte(data[:4])
		switch {
		case sel == evm.SelectorAuthorizationState() && len(data) == 4+64:
			var who evm.Address
			copy(who[:], data[4+12:4+32])
			used := c.used[nonceKey(who, [32]byte(data[4+32:]))] != ""
			w := make([]byte, 32)
			if used {
				w[31] = 1
			}
			return hex0x(w), nil
		case sel == [4]byte{0x70, 0xa0, 0x82, 0x31} && len(data) == 4+32: // balanceOf(address)
			var who evm.Address
			copy(who[:], data[4+12:])
			return hex0x(word(c.balanceLocked(who))), nil
		}
		return nil, errors.New("execution reverted")
	case "eth_getTransactionReceipt":
		var h string
		if len(call.Params) == 0 || json.Unmarshal(call.Params[0], &h) != nil {
			return nil, errors.New("eth_getTransactionReceipt needs a hash")
		}
		tx, ok := c.txs[strings.ToLower(h)]
		if !ok || tx.Block == 0 {
			return nil, nil
		}
		status := "0x0"
		logs := []any{}
		if tx.Success {
			status = "0x1"
			for _, l := range c.logs {
				if l.TxHash == tx.Hash {
					logs = append(logs, wireLog(l))
				}
			}
		}
		return map[string]any{"transactionHash": tx.Hash, "blockNumber": quantity(tx.Block), "status": status, "logs": logs}, nil
	case "eth_getLogs":
		var f struct {
			Address   string   `json:"address"`
			FromBlock string   `json:"fromBlock"`
			Topics    []string `json:"topics"`
		}
		if len(call.Params) == 0 || json.Unmarshal(call.Params[0], &f) != nil {
			return nil, errors.New("eth_getLogs needs a filter")
		}
		from := uint64(0)
		if v, err := strconv.ParseUint(strings.TrimPrefix(f.FromBlock, "0x"), 16, 64); err == nil {
			from = v
		}
		out := []any{}
		for _, l := range c.logs {
			if l.BlockNumber < from || !strings.EqualFold(f.Address, l.Address.Hex()) || !topicsMatch(f.Topics, l.Topics) {
				continue
			}
			out = append(out, wireLog(l))
		}
		return out, nil
	}
	return nil, fmt.Errorf("method %s is not served by this chain", call.Method)
}

func topicsMatch(want []string, got [][32]byte) bool {
	for i, t := range want {
		if t == "" {
			continue
		}
		if i >= len(got) || !strings.EqualFold(t, hex0x(got[i][:])) {
			return false
		}
	}
	return true
}

func wireLog(l evm.Log) map[string]any {
	topics := make([]string, len(l.Topics))
	for i, t := range l.Topics {
		topics[i] = hex0x(t[:])
	}
	data := l.Data
	if data == nil {
		data = []byte{}
	}
	return map[string]any{"address": l.Address.Hex(), "topics": topics, "data": hex0x(data),
		"transactionHash": l.TxHash, "blockNumber": quantity(l.BlockNumber)}
}
