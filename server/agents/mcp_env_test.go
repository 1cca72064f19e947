package agents

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// agentsTestBase is the public base URL of the test servers.
const agentsTestBase = "https://api.example.test"

// paidEnv is a full server on loopback: the claims engine with a scripted
// provider, the real Gate and Cashier on an in-memory ledger with the fake
// processor of gatetest, the commerce routes, MCP and A2A.
type paidEnv struct {
	t      testing.TB
	db     *store.DB
	proc   *gatetest.Processor
	gate   *httpgate.Gate
	prov   *claimstest.Provider
	eng    *claims.Engine
	srv    *Server
	hs     *httptest.Server
	client *http.Client
	niche  *niche.Engine
}

type envOptions struct {
	// provider replaces the fixture's scripted provider.
	provider *claimstest.Provider
	// search, when set, is the engine's provider (provider still counts
	// calls when search wraps it).
	search claims.SearchProvider
	// paywall replaces the gate (nil keeps the gate).
	paywall httpgate.Paywall
	// niche loads the demo catalogue and serves niche discovery.
	niche bool
	// config edits the server configuration before New.
	config func(*Config)
}

// gatetestCredential reads the fake processor's credential from MCP _meta
// (a string "payer=…;nonce=…").
func gatetestCredential(raw json.RawMessage) (*payment.Credential, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &payment.Problem{Status: 400, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed payment credential"}
	}
	return gatetest.ParseCredential(s)
}

// The databases of the test environments, prepared once and copied for
// each: migrated and empty, or holding the demo catalogue too.
var (
	emptyDB       storetest.Template
	demoCatalogue = storetest.Template{Prepare: func(ctx context.Context, db *store.DB) error {
		ne, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
		if err != nil {
			return err
		}
		_, err = nichedemo.Load(ctx, ne, nil)
		return err
	}}
)

func newPaidEnv(t testing.TB, o *envOptions) *paidEnv {
	t.Helper()
	if o == nil {
		o = &envOptions{}
	}
	ctx := context.Background()
	tmpl := &emptyDB
	if o.niche {
		tmpl = &demoCatalogue
	}
	db := tmpl.Open(t, nil)
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	prov := o.provider
	if prov == nil {
		prov = f.Provider()
	}
	var sp claims.SearchProvider = prov
	if o.search != nil {
		sp = o.search
	}
	eng, err := claims.New(sp, claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &paidEnv{t: t, db: db, prov: prov, eng: eng, proc: &gatetest.Processor{}}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	env.gate, err = httpgate.New(env.proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: agentsTestBase, ReadCredential: gatetest.ReadCredential})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Claims:   ClaimsConfig{Engine: eng},
		Commerce: CommerceConfig{Cashier: env.gate.Cashier()},
		MCP:      MCPConfig{PublicBaseURL: agentsTestBase, ReadCredential: gatetestCredential},
		A2A:      A2AConfig{PublicBaseURL: agentsTestBase},
	}
	if o.niche {
		ne, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
		if err != nil {
			t.Fatal(err)
		}
		signer, err := niche.NewUnlockSigner([]byte("unlock-key-for-transport-tests-0123456789"), nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Niche = NicheConfig{Engine: ne, Unlock: signer}
		env.niche = ne
	}
	switch {
	case o.paywall != nil:
		cfg.Paywall = o.paywall
	default:
		cfg.Paywall = env.gate
	}
	if o.config != nil {
		o.config(&cfg)
	}
	env.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env.hs = newLoopbackServer(t, env.srv)
	env.client = env.hs.Client()
	return env
}

// order returns the stored order.
func (e *paidEnv) order(id string) *payment.Order {
	e.t.Helper()
	o, err := paymentstore.New(e.db).Order(context.Background(), id)
	if err != nil {
		e.t.Fatalf("order %s: %v", id, err)
	}
	return o
}

// receipt returns the verified stored receipt of an order.
func (e *paidEnv) receipt(orderID string) *payment.Receipt {
	e.t.Helper()
	data, err := paymentstore.New(e.db).Receipt(context.Background(), orderID)
	if err != nil {
		e.t.Fatalf("receipt of %s: %v", orderID, err)
	}
	r, err := payment.VerifyReceipt(data, e.gate.Cashier().Keys())
	if err != nil {
		e.t.Fatalf("receipt of %s does not verify: %v", orderID, err)
	}
	return r
}

// countOrders counts the orders in the ledger.
func (e *paidEnv) countOrders() int {
	e.t.Helper()
	var n int
	_, r := e.db.SQL()
	if err := r.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM payment_orders").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// progressLog collects progress notifications.
type progressLog struct {
	mu  sync.Mutex
	got []string
}

func (p *progressLog) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, s)
}

func (p *progressLog) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// wait returns the notifications once n have arrived (the client handles
// them on its own goroutine, possibly after the call returned), or what
// arrived within 30 seconds: a bound for a loaded machine, not a timing
// assertion (n arrive within milliseconds).
func (p *progressLog) wait(n int) []string {
	deadline := time.Now().Add(30 * time.Second)
	for len(p.list()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return p.list()
}

// post sends a JSON body and returns the status and body.
func (e *paidEnv) post(path, body string, headers map[string]string) (int, []byte) {
	e.t.Helper()
	st, _, b := e.do(http.MethodPost, path, body, headers)
	return st, b
}

// get sends a GET and returns the status and body.
func (e *paidEnv) get(path string, headers map[string]string) (int, []byte) {
	e.t.Helper()
	st, _, b := e.do(http.MethodGet, path, "", headers)
	return st, b
}

// do sends a request; a "Host" header sets the request's Host.
func (e *paidEnv) do(method, path, body string, headers map[string]string) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.hs.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// newLoopbackServer serves h on a loopback port until the test ends.
func newLoopbackServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// Config is what the tests configure: the server's configuration, with the
// MCP and A2A mounts as fields (mounted unless NoMCP / NoA2A), as they were
// configured before they moved out of server.
type Config struct {
	Paywall       httpgate.Paywall
	PublicBaseURL string
	Claims        ClaimsConfig
	Commerce      CommerceConfig
	Niche         NicheConfig
	Discovery     DiscoveryConfig
	AdminKey      string
	MCP           MCPConfig
	A2A           A2AConfig
	Evidence      server.EvidenceConfig
	Catalogue     *sell.Catalogue
	NoMCP, NoA2A  bool
}

type (
	Server         = server.Server
	ClaimsConfig   = server.ClaimsConfig
	CommerceConfig = server.CommerceConfig
	NicheConfig    = server.NicheConfig
	MCPConfig      = MCP
	A2AConfig      = A2A
)

// DiscoveryConfig mounts the discovery documents when Enabled (the index
// is always mounted, as it was when it was part of server).
type DiscoveryConfig struct {
	Enabled       bool
	PublicBaseURL string
}

// New builds the server of c.
func New(c Config) (*Server, error) {
	cfg := server.Config{Paywall: c.Paywall, PublicBaseURL: c.PublicBaseURL, Claims: c.Claims, Commerce: c.Commerce,
		Niche: c.Niche, AdminKey: c.AdminKey, Evidence: c.Evidence, Catalogue: c.Catalogue}
	if !c.NoMCP {
		cfg.Mounts = append(cfg.Mounts, c.MCP)
	}
	if !c.NoA2A {
		cfg.Mounts = append(cfg.Mounts, c.A2A)
	}
	cfg.Mounts = append(cfg.Mounts, discovery.Documents{IndexOnly: !c.Discovery.Enabled, PublicBaseURL: c.Discovery.PublicBaseURL})
	return server.New(cfg)
}
