package paymenttest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
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

// Facilitator is a fake x402 facilitator on a loopback httptest server.
// Without a script, /verify says valid, /settle succeeds with a
// deterministic transaction hash, and /supported lists Base and Base
// Sepolia for x402 v1 and v2. Like a real facilitator (where the token
// contract keeps EIP-3009 nonces), it remembers every authorization it
// settled, keyed by network, asset, payer and nonce: /verify and /settle
// of an authorization already settled answer isValid/success false with
// ReasonNonceUsed. Scripted replies are sent as they are and settle
// nothing.
type Facilitator struct {
	*httptest.Server

	mu      sync.Mutex
	scripts map[string][]Reply
	calls   []FacilitatorCall
	used    map[string]bool
	done    chan struct{}
}

// ReasonNonceUsed is the invalidReason / errorReason of an authorization
// whose nonce was already used, as the x402 reference facilitator names
// it.
const ReasonNonceUsed = "invalid_exact_evm_nonce_already_used"

// NewFacilitator starts a fake facilitator, closed at the end of the test.
func NewFacilitator(t testing.TB) *Facilitator {
	f := &Facilitator{scripts: map[string][]Reply{}, used: map[string]bool{}, done: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.done)
		f.Server.Close()
	})
	return f
}

// Script queues replies for path ("/verify", "/settle", "/supported"); each
// request takes the next one, then the default behaviour resumes.
func (f *Facilitator) Script(path string, replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[path] = append(f.scripts[path], replies...)
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

func (f *Facilitator) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.calls = append(f.calls, FacilitatorCall{Path: r.URL.Path, Header: r.Header.Clone(), Body: append(json.RawMessage(nil), body...)})
	var reply *Reply
	if q := f.scripts[r.URL.Path]; len(q) > 0 {
		reply = &q[0]
		f.scripts[r.URL.Path] = q[1:]
	}
	if reply == nil {
		key := authorizationKey(body)
		switch {
		case r.URL.Path == "/supported" && r.Method == http.MethodGet:
			reply = &Reply{Body: Recorded("supported")}
		case r.URL.Path == "/verify" && r.Method == http.MethodPost && f.used[key]:
			reply = &Reply{Body: Recorded("verify_nonce_used")}
		case r.URL.Path == "/verify" && r.Method == http.MethodPost:
			reply = &Reply{Body: Recorded("verify_valid")}
		case r.URL.Path == "/settle" && r.Method == http.MethodPost && f.used[key]:
			reply = &Reply{Body: Recorded("settle_nonce_used")}
		case r.URL.Path == "/settle" && r.Method == http.MethodPost:
			if key != "" {
				f.used[key] = true
			}
			reply = &Reply{Body: Recorded("settle_success")}
		default:
			f.mu.Unlock()
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
	}
	f.mu.Unlock()

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

// authorizationKey identifies the EIP-3009 authorization of a /verify or
// /settle request body: network, asset, payer and nonce (lowercase), or ""
// when the body does not carry one.
func authorizationKey(reqBody []byte) string {
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
		return ""
	}
	a := req.PaymentPayload.Payload.Authorization
	if a.From == "" || a.Nonce == "" {
		return ""
	}
	network := req.PaymentRequirements.Network
	if network == "" {
		network = req.PaymentPayload.Network
	}
	// v1 names ("base") and CAIP-2 ids ("eip155:8453") of one chain are
	// one key space on-chain.
	switch network {
	case "base":
		network = "eip155:8453"
	case "base-sepolia":
		network = "eip155:84532"
	}
	return strings.ToLower(network + "|" + req.PaymentRequirements.Asset + "|" + a.From + "|" + a.Nonce)
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
