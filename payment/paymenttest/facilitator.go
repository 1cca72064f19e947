package paymenttest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/x402"
)

//go:embed recorded/*.json
var recorded embed.FS

// Recorded returns a facilitator answer by name (the file names under
// recorded/: "supported", "verify_valid", "verify_insufficient_funds",
// "verify_nonce_used", "settle_success", "settle_failure",
// "settle_nonce_used", "settle_pending"). Placeholders {{payer}}, {{tx}}
// and {{network}} are filled from the request.
//
// Despite the directory name these are not captures of a live
// facilitator (the tests run without network): they are transcribed from
// the documented examples of the x402 specification (see the package
// documentation for which example each follows).
func Recorded(name string) string {
	b, err := recorded.ReadFile("recorded/" + name + ".json")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Reply is a scripted facilitator answer.
type Reply struct {
	// Status is the HTTP status (default 200).
	Status int
	// Body is sent as is after placeholder substitution; Recorded(name)
	// gives the documented shapes.
	Body string
	// Delay waits before answering (or until the client gives up).
	Delay time.Duration
}

// FacilitatorCall is one request the fake received.
type FacilitatorCall struct {
	Path   string
	Header http.Header
	Body   json.RawMessage
}

// FaultKind is how a faulty facilitator fails a call (Fault).
type FaultKind int

// The ways real facilitators fail, as a seller meets them.
const (
	// FaultStatus answers Fault.Status (default 500) with Fault.Body
	// (default {"error":"internal error"}); nothing is settled.
	FaultStatus FaultKind = iota + 1
	// FaultHang holds the request without answering until the client
	// gives up, the fault is healed or the fake is closed; nothing is
	// settled.
	FaultHang
	// FaultRefuse answers isValid/success false with Fault.Reason
	// (default insufficient_funds); nothing is settled.
	FaultRefuse
	// FaultLateSuccess settles at once (with a Chain) and answers only
	// after Fault.Delay: success after the client gave up.
	FaultLateSuccess
	// FaultReset settles at once (with a Chain), then closes the
	// connection without an answer.
	FaultReset
	// FaultPending submits the transaction, which is mined after
	// Fault.Delay, and answers success false with errorReason
	// settlement_pending and the transaction hash.
	FaultPending
)

// Fault is a failure a Facilitator applies to every call of one path
// until it is healed (SetFault, Heal).
type Fault struct {
	Kind   FaultKind
	Status int
	Body   string
	Reason string
	Delay  time.Duration
}

// FacilitatorOptions configure StartFacilitator. Nil means defaults.
type FacilitatorOptions struct {
	// Chain, when set, makes the fake a facilitator of that chain: /verify
	// checks the payment as the x402 reference does (requirements,
	// signature, window) and simulates it on the chain (used nonce,
	// balance); /settle submits transferWithAuthorization and waits for it
	// to be mined, and a repeat of a payment it already submitted is
	// reconciled: answered from that transaction (success once mined,
	// settlement_pending before) instead of being refused. Without a
	// Chain the fake keeps the minimal behaviour described on
	// Facilitator.
	Chain *Chain
	// MinedAfter is how long a submitted transaction waits in the mempool
	// before it is mined (with a Chain; default at once). /settle waits
	// for it like a real facilitator waits for the receipt.
	MinedAfter time.Duration
	// Networks are the CAIP-2 networks /supported lists (for x402 v2 and
	// their v1 names for v1); nil lists Base and Base Sepolia.
	Networks []string
	// Addr is the loopback address to listen on (default a free port).
	Addr string
}

// Facilitator is a fake x402 facilitator on a loopback HTTP server.
// Without a Chain and without a script, /verify says valid, /settle
// succeeds with a deterministic transaction hash, and /supported lists
// Base and Base Sepolia for x402 v1 and v2. Like a real facilitator (where
// the token contract keeps EIP-3009 nonces), it remembers every
// authorization it settled, keyed by network, asset, payer and nonce:
// /verify and /settle of an authorization already settled answer
// isValid/success false with ReasonNonceUsed. Scripted replies are sent
// as they are and settle nothing. With a Chain (FacilitatorOptions) it is
// a faithful facilitator of that chain instead.
//
// Faults (SetFault) and outages (SetOutage) make it fail the way real
// facilitators do, until healed.
type Facilitator struct {
	// URL is the base URL ("http://127.0.0.1:port").
	URL string

	chain      *Chain
	minedAfter time.Duration
	addr       string

	mu       sync.Mutex
	srv      *http.Server
	scripts  map[string][]Reply
	faults   map[string]Fault
	calls    []FacilitatorCall
	used     map[string]bool
	networks []string
	healed   chan struct{}
	done     chan struct{}
	closed   bool
}

// ReasonNonceUsed is the invalidReason / errorReason of an authorization
// whose nonce was already used, as the x402 reference facilitator names
// it.
const ReasonNonceUsed = "invalid_exact_evm_nonce_already_used"

// NewFacilitator starts a fake facilitator, closed at the end of the test.
func NewFacilitator(t testing.TB) *Facilitator {
	t.Helper()
	f, err := StartFacilitator(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// StartFacilitator starts a fake facilitator on loopback; Close stops it.
func StartFacilitator(o *FacilitatorOptions) (*Facilitator, error) {
	if o == nil {
		o = &FacilitatorOptions{}
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	f := &Facilitator{chain: o.Chain, minedAfter: o.MinedAfter, addr: ln.Addr().String(),
		scripts: map[string][]Reply{}, faults: map[string]Fault{}, used: map[string]bool{},
		networks: o.Networks, healed: make(chan struct{}), done: make(chan struct{})}
	f.URL = "http://" + f.addr
	f.serve(ln)
	return f, nil
}

func (f *Facilitator) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 10 * time.Second}
	f.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// Close stops the fake and ends every held request.
func (f *Facilitator) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	close(f.done)
	if f.srv != nil {
		_ = f.srv.Close()
	}
}

// Chain returns the chain the fake settles on (nil without one).
func (f *Facilitator) Chain() *Chain { return f.chain }

// Script queues replies for path ("/verify", "/settle", "/supported"); each
// request takes the next one, then the default behaviour resumes.
func (f *Facilitator) Script(path string, replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[path] = append(f.scripts[path], replies...)
}

// SetFault makes every call of path ("/verify", "/settle", "/supported")
// fail with ft until Heal.
func (f *Facilitator) SetFault(path string, ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[path] = ft
}

// SetNetworks replaces the networks /supported lists (nil: the default).
func (f *Facilitator) SetNetworks(networks []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.networks = networks
}

// SetOutage stops listening (on: connections are refused, and open ones
// are closed) or listens again on the same address (off).
func (f *Facilitator) SetOutage(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("paymenttest: facilitator closed")
	}
	if on {
		if f.srv != nil {
			err := f.srv.Close()
			f.srv = nil
			return err
		}
		return nil
	}
	if f.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	f.serve(ln)
	return nil
}

// Heal clears every fault and outage and ends every held request.
func (f *Facilitator) Heal() error {
	f.mu.Lock()
	f.faults = map[string]Fault{}
	close(f.healed)
	f.healed = make(chan struct{})
	f.mu.Unlock()
	return f.SetOutage(false)
}

// Calls returns the requests received on path ("" for all).
func (f *Facilitator) Calls(path string) []FacilitatorCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FacilitatorCall
	for _, c := range f.calls {
		if path == "" || c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

func (f *Facilitator) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.calls = append(f.calls, FacilitatorCall{Path: r.URL.Path, Header: r.Header.Clone(), Body: append(json.RawMessage(nil), body...)})
	healed := f.healed
	var reply *Reply
	fault, faulty := f.faults[r.URL.Path]
	if q := f.scripts[r.URL.Path]; len(q) > 0 && !faulty {
		reply = &q[0]
		f.scripts[r.URL.Path] = q[1:]
	}
	f.mu.Unlock()
	known := r.URL.Path == "/supported" && r.Method == http.MethodGet ||
		(r.URL.Path == "/verify" || r.URL.Path == "/settle") && r.Method == http.MethodPost
	switch {
	case !known:
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	case faulty:
		reply = f.faulty(w, r, fault, body, healed)
		if reply == nil {
			return
		}
	case reply == nil:
		reply = f.normal(r.URL.Path, body)
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		case <-f.done:
			return
		}
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, fill(reply.Body, body))
}

// normal is the answer without fault or script.
func (f *Facilitator) normal(path string, body []byte) *Reply {
	if path == "/supported" {
		return &Reply{Body: f.supported()}
	}
	if f.chain != nil {
		return f.onChain(path, body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := authorizationKey(body)
	switch {
	case path == "/verify" && f.used[key]:
		return &Reply{Body: Recorded("verify_nonce_used")}
	case path == "/verify":
		return &Reply{Body: Recorded("verify_valid")}
	case f.used[key]:
		return &Reply{Body: Recorded("settle_nonce_used")}
	}
	if key != "" {
		f.used[key] = true
	}
	return &Reply{Body: Recorded("settle_success")}
}

func (f *Facilitator) supported() string {
	f.mu.Lock()
	nets := f.networks
	f.mu.Unlock()
	if nets == nil {
		return Recorded("supported")
	}
	type kind struct {
		X402Version int    `json:"x402Version"`
		Scheme      string `json:"scheme"`
		Network     string `json:"network"`
	}
	kinds := []kind{}
	for _, n := range nets {
		kinds = append(kinds, kind{2, "exact", n})
		if en, ok := evm.LookupNetwork(n); ok {
			kinds = append(kinds, kind{1, "exact", en.V1Name})
		}
	}
	b, _ := json.Marshal(map[string]any{"kinds": kinds, "extensions": []string{}, "signers": map[string][]string{"eip155:*": {"0x1111111111111111111111111111111111111111"}}})
	return string(b)
}

// faulty applies ft to one call; it returns the reply to send, or nil when
// it has answered (or dropped) the call itself.
func (f *Facilitator) faulty(w http.ResponseWriter, r *http.Request, ft Fault, body []byte, healed chan struct{}) *Reply {
	verify := r.URL.Path == "/verify"
	switch ft.Kind {
	case FaultStatus:
		st, b := ft.Status, ft.Body
		if st == 0 {
			st = http.StatusInternalServerError
		}
		if b == "" {
			b = `{"error":"internal error"}`
		}
		return &Reply{Status: st, Body: b}
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-healed:
		case <-f.done:
		}
		ResetConn(w)
		return nil
	case FaultRefuse:
		reason := ft.Reason
		if reason == "" {
			reason = ReasonInsufficientFunds
		}
		if verify {
			return &Reply{Body: fmt.Sprintf(`{"isValid":false,"invalidReason":%q,"payer":"{{payer}}"}`, reason)}
		}
		if r.URL.Path == "/supported" {
			return &Reply{Status: http.StatusInternalServerError, Body: `{"error":"` + reason + `"}`}
		}
		return &Reply{Body: fmt.Sprintf(`{"success":false,"errorReason":%q,"transaction":"","network":"{{network}}","payer":"{{payer}}"}`, reason)}
	case FaultLateSuccess, FaultReset:
		reply := f.normal(r.URL.Path, body)
		if ft.Kind == FaultReset {
			ResetConn(w)
			return nil
		}
		reply.Delay = ft.Delay
		return reply
	case FaultPending:
		if verify || f.chain == nil {
			return &Reply{Body: Recorded("settle_pending")}
		}
		a, sig, err := parsePayment(body)
		if err != nil {
			return &Reply{Status: http.StatusBadRequest, Body: `{"error":"invalid_payload"}`}
		}
		tx, err := f.chain.Submit(a, sig, ft.Delay)
		if err != nil {
			return settleRefusal(err)
		}
		return &Reply{Body: fmt.Sprintf(`{"success":false,"errorReason":"settlement_pending","transaction":%q,"network":"{{network}}","payer":"{{payer}}"}`, tx.Hash)}
	}
	return &Reply{Status: http.StatusInternalServerError, Body: `{"error":"unknown fault"}`}
}

// ResetConn ends the call w answers without an answer: the connection
// is closed with a TCP reset (SO_LINGER 0), as a facilitator that drops
// a connection does. Fakes of other services (a proxy in front of the
// facilitator, say) use it to fail the same way.
func ResetConn(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// onChain answers /verify and /settle as a facilitator of f.chain.
func (f *Facilitator) onChain(path string, body []byte) *Reply {
	a, sig, err := parsePayment(body)
	if err != nil {
		return &Reply{Status: http.StatusBadRequest, Body: `{"isValid":false,"invalidReason":"invalid_payload"}`}
	}
	c := f.chain
	if path == "/settle" {
		// A payment already submitted is reconciled from its transaction.
		if tx := c.Tx(c.TxHash(a, sig)); tx != nil {
			return settleAnswer(tx)
		}
	}
	var req facilitatorBody
	_ = json.Unmarshal(body, &req)
	vr, err := (&x402.LocalVerifier{Now: c.now}).Verify(context.Background(), req.X402Version, req.PaymentPayload, req.PaymentRequirements)
	if err == nil && !vr.IsValid {
		if path == "/verify" {
			b, _ := json.Marshal(vr)
			return &Reply{Body: string(b)}
		}
		return settleRefusal(&RevertError{Reason: vr.InvalidReason})
	}
	if path == "/verify" {
		if err := c.Simulate(a, sig); err != nil {
			var re *RevertError
			errors.As(err, &re)
			return &Reply{Body: fmt.Sprintf(`{"isValid":false,"invalidReason":%q,"payer":"{{payer}}"}`, re.Reason)}
		}
		return &Reply{Body: Recorded("verify_valid")}
	}
	tx, err := c.Submit(a, sig, f.minedAfter)
	if err != nil {
		return settleRefusal(err)
	}
	// Wait for the receipt as a facilitator does (the client's timeout
	// may end the call first: the transaction is mined all the same).
	for tx.Block == 0 {
		time.Sleep(5 * time.Millisecond)
		tx = c.Tx(tx.Hash)
	}
	return settleAnswer(tx)
}

func settleAnswer(tx *ChainTx) *Reply {
	switch {
	case tx.Block == 0:
		return &Reply{Body: fmt.Sprintf(`{"success":false,"errorReason":"settlement_pending","transaction":%q,"network":"{{network}}","payer":"{{payer}}"}`, tx.Hash)}
	case !tx.Success:
		return &Reply{Body: fmt.Sprintf(`{"success":false,"errorReason":%q,"transaction":%q,"network":"{{network}}","payer":"{{payer}}"}`, tx.Reason, tx.Hash)}
	}
	return &Reply{Body: fmt.Sprintf(`{"success":true,"transaction":%q,"network":"{{network}}","payer":"{{payer}}"}`, tx.Hash)}
}

func settleRefusal(err error) *Reply {
	reason := "unexpected_settle_error"
	var re *RevertError
	if errors.As(err, &re) {
		reason = re.Reason
	}
	return &Reply{Body: fmt.Sprintf(`{"success":false,"errorReason":%q,"transaction":"","network":"{{network}}","payer":"{{payer}}"}`, reason)}
}

type facilitatorBody struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements"`
}

// parsePayment reads the EIP-3009 authorization and signature of a
// /verify or /settle body.
func parsePayment(body []byte) (*evm.TransferAuthorization, []byte, error) {
	var req facilitatorBody
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, err
	}
	var pl x402.PaymentPayload
	if err := json.Unmarshal(req.PaymentPayload, &pl); err != nil {
		return nil, nil, err
	}
	var ex x402.ExactEVMPayload
	if err := json.Unmarshal(pl.Payload, &ex); err != nil {
		return nil, nil, err
	}
	a, err := ex.Authorization.Parse()
	if err != nil {
		return nil, nil, err
	}
	sig, err := evm.ParseSignature(ex.Signature)
	if err != nil {
		return nil, nil, err
	}
	return a, sig, nil
}

// Authorized names the EIP-3009 authorization a /verify or /settle
// request body carries (AuthorizationIn).
type Authorized struct {
	// Network is the CAIP-2 id of the chain (a v1 name, "base" or
	// "base-sepolia", is given as its CAIP-2 id: one key space on-chain).
	Network string
	Asset   string
	// From is the payer; Nonce the authorization's nonce.
	From, Nonce string
}

// AuthorizationIn returns the EIP-3009 authorization of a /verify or
// /settle request body, and false when the body does not carry one.
// Fakes in front of the facilitator use it to tell payments apart.
func AuthorizationIn(reqBody []byte) (Authorized, bool) {
	var req struct {
		PaymentPayload struct {
			Network string `json:"network"`
			Payload struct {
				Authorization struct {
					From  string `json:"from"`
					Nonce string `json:"nonce"`
				} `json:"authorization"`
			} `json:"payload"`
		} `json:"paymentPayload"`
		PaymentRequirements struct {
			Network string `json:"network"`
			Asset   string `json:"asset"`
		} `json:"paymentRequirements"`
	}
	if json.Unmarshal(reqBody, &req) != nil {
		return Authorized{}, false
	}
	a := req.PaymentPayload.Payload.Authorization
	if a.From == "" || a.Nonce == "" {
		return Authorized{}, false
	}
	network := cmp.Or(req.PaymentRequirements.Network, req.PaymentPayload.Network)
	switch network {
	case "base":
		network = "eip155:8453"
	case "base-sepolia":
		network = "eip155:84532"
	}
	return Authorized{Network: network, Asset: req.PaymentRequirements.Asset, From: a.From, Nonce: a.Nonce}, true
}

// authorizationKey identifies the EIP-3009 authorization of a /verify or
// /settle request body: network, asset, payer and nonce (lowercase), or ""
// when the body does not carry one.
func authorizationKey(reqBody []byte) string {
	a, ok := AuthorizationIn(reqBody)
	if !ok {
		return ""
	}
	return strings.ToLower(a.Network + "|" + a.Asset + "|" + a.From + "|" + a.Nonce)
}

// fill substitutes {{payer}}, {{tx}} and {{network}} from a /verify or
// /settle request body.
func fill(tmpl string, reqBody []byte) string {
	var req struct {
		PaymentPayload struct {
			Network string `json:"network"`
			Payload struct {
				Authorization struct {
					From string `json:"from"`
				} `json:"authorization"`
			} `json:"payload"`
		} `json:"paymentPayload"`
		PaymentRequirements struct {
			Network string `json:"network"`
		} `json:"paymentRequirements"`
	}
	_ = json.Unmarshal(reqBody, &req)
	sum := sha256.Sum256(reqBody)
	network := req.PaymentRequirements.Network
	if network == "" {
		network = req.PaymentPayload.Network
	}
	return strings.NewReplacer(
		"{{payer}}", req.PaymentPayload.Payload.Authorization.From,
		"{{tx}}", "0x"+hex.EncodeToString(sum[:]),
		"{{network}}", network,
	).Replace(tmpl)
}
