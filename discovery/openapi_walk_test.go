package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/snapshotstore"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// walkCasesPerOperation is how many requests the walk sends to each
// operation of each document (ASSAY_OPENAPI_WALK_CASES overrides it).
const walkCasesPerOperation = 24

// TestOpenAPIWalk walks every operation of every openapi.json the server
// serves (the origin root's and each service prefix's) with requests
// generated from the document itself — path, query and header parameters,
// credentials and bodies, valid and invalid, from a seeded generator — on
// a full server behind the real payment gate in dev mode (claims, niche
// catalogue, subscriptions with the development billing, commerce,
// snapshots, discovery; see newWalkEnv), and fails on any
// answer the document does not declare: a status the operation does not
// list, a media type its response does not list, a JSON body that does not
// validate against the declared schema; and on a refusal (400 or 422) of a
// request whose every part the document declares valid (the schemas, and
// the cross-field rules stated in x-cross-field-rules). Bodies that the
// schema accepts but that break a rule it can only state in prose
// (x-cross-field-rules: minimumSources <= maxSources) are sent too, and
// must be refused 422 for that rule and no other: a refusal of a
// schema-valid body for any other reason is a rule the schema could have
// stated.
//
// Known-good values (an order id and its token, a niche id, a subscriber
// token, a customer key, a quote id, unlock tokens) are mixed in, so that
// protected operations are reached with real credentials too, and a third
// of the valid calls of paid operations are paid (x402 v2 with the
// development wallet), so that their paid answers are checked as well.
func TestOpenAPIWalk(t *testing.T) {
	cases := walkCasesPerOperation
	if v, err := strconv.Atoi(os.Getenv("ASSAY_OPENAPI_WALK_CASES")); err == nil && v > 0 {
		cases = v
	}
	w := newWalkEnv(t)
	total := 0
	for _, doc := range []string{PathOpenAPI, DefaultClaimsPrefix + PathOpenAPI, "/niche-discovery" + PathOpenAPI} {
		n := w.walkDocument(t, doc, cases)
		total += n
	}
	for _, f := range w.failures {
		t.Error(f)
	}
	if total < 1000 {
		t.Errorf("only %d requests were sent", total)
	}
	if w.prose < 8 {
		t.Errorf("only %d bodies that break only a rule of x-cross-field-rules were sent", w.prose)
	}
	t.Logf("%d requests over %d operations (%d schema-valid bodies breaking only a prose rule); statuses seen: %s",
		total, len(w.seen), w.prose, w.summary())
}

// walkEnv is the server under the walk and what it knows.
type walkEnv struct {
	base     string       // the server's URL
	client   *http.Client // no redirects followed
	payer    *http.Client // pays 402 challenges with the development wallet (x402 v2)
	rng      *rand.Rand
	seeds    map[string][]string // by parameter or header name
	failures []string
	reported map[string]bool
	seen     map[string]map[int]bool // operation → statuses answered
	prose    int                     // bodies sent that break only a prose rule
	niche    *niche.Engine
}

// newWalkEnv serves everything a deployment serves — claims (scripted
// provider), the niche catalogue (demo) with subscriptions on the
// development billing, commerce, snapshots, metrics, readiness and
// discovery — behind the real payment gate in dev mode (x402 and MPP
// signatures verified, nothing settled on-chain), on loopback.
func newWalkEnv(t *testing.T) *walkEnv {
	t.Helper()
	db, eng, ne := demoEngines(t)
	signer, err := niche.NewUnlockSigner([]byte("unlock-key-for-the-openapi-walk-0123456789"), nil)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := niche.NewSubscriptionService(nichestore.New(db), localBilling(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	records := snapshotstore.New(db)
	snaps, err := snapshot.NewService(records, records, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snaps.Close)
	bundleKeys, err := evidence.LoadKeys(t.Context(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	bundles, err := evidence.New(snaps, bundleKeys, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	gate := devGate(t, db, hs)
	srv, err := New(Config{
		PublicBaseURL: base, AdminKey: testAdminKey, Paywall: gate,
		Claims:        ClaimsConfig{Engine: eng},
		Commerce:      CommerceConfig{Cashier: gate.Cashier()},
		Evidence:      server.EvidenceConfig{Builder: bundles},
		Niche:         NicheConfig{Engine: ne, Unlock: signer, Subscribers: subs},
		Subscriptions: SubscriptionConfig{Service: subs},
		Snapshots:     SnapshotsConfig{Service: snaps, Prefixes: []string{DefaultClaimsPrefix}},
		Discovery:     DiscoveryConfig{Enabled: true},
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			_, _ = io.WriteString(w, "# HELP up 1\nup 1\n")
		}),
		Ready: map[string]func(context.Context) error{"store": db.Ping},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(hs.Close)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	w := &walkEnv{base: base, rng: rand.New(rand.NewPCG(13, 2026)), seeds: map[string][]string{}, niche: ne,
		reported: map[string]bool{}, seen: map[string]map[int]bool{},
		client: &http.Client{CheckRedirect: noRedirect},
		payer: &http.Client{CheckRedirect: noRedirect, Transport: paying.NewTransport(paymenttest.DevWallet(), nil,
			&paying.TransportOptions{MaxPerCallMicroUSD: 1_000_000, BudgetMicroUSD: 1 << 40})}}
	w.seed(t)
	return w
}

// devGate is the real payment gate in dev mode (x402 and MPP signatures
// verified, nothing settled on-chain) of a server to be served by hs.
func devGate(t *testing.T, db *store.DB, hs *httptest.Server) *httpgate.Gate {
	t.Helper()
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("mpp-secret-for-the-discovery-tests-0123456789"), Realm: hs.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys},
		PublicBaseURL: "http://" + hs.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return gate
}

// schemaCompiler is a JSON Schema 2020-12 compiler (formats asserted)
// holding the document doc as the resource id.
func schemaCompiler(t *testing.T, id string, doc []byte) *jsonschema.Compiler {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(id, inst); err != nil {
		t.Fatal(err)
	}
	return c
}

// do sends a request (paid through the development wallet when pay is
// set) and returns its answer.
func (w *walkEnv) do(t *testing.T, pay bool, method, path, body string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	r := &walkReq{method: method, target: path, header: http.Header{}}
	if body != "" {
		r.body = []byte(body)
		r.header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		r.header.Set(k, v)
	}
	r.pay = pay
	return w.send(t, r)
}

// seed makes the known-good values: a paid verification (order, token,
// verification), a paid niche evaluation (its unlock token), a quote, a
// customer, a subscriber token and checkout sessions.
func (w *walkEnv) seed(t *testing.T) {
	st, _, b := w.do(t, false, "POST", DefaultClaimsPrefix+"/v1/admin/customers", `{"name":"Walk"}`, map[string]string{"X-Admin-Key": testAdminKey})
	var cu struct{ APIKey string }
	if err := json.Unmarshal(b, &cu); st != 200 || err != nil {
		t.Fatalf("seed customer: %d %s", st, b)
	}
	w.seeds["X-Agentic-Customer-Key"] = []string{cu.APIKey}
	st, hd, b := w.do(t, true, "POST", DefaultClaimsPrefix+"/v1/claims/verify", `{"claim":"The Base mainnet chain ID is 8453."}`,
		map[string]string{"X-Agentic-Customer-Key": cu.APIKey})
	if st != 200 {
		t.Fatalf("seed verification: %d %s", st, b)
	}
	var res struct{ VerificationID string }
	_ = json.Unmarshal(b, &res)
	w.seeds["order_id"] = []string{hd.Get("X-Agentic-Order-Id")}
	w.seeds["X-Agentic-Order-Token"] = []string{hd.Get("X-Agentic-Order-Token")}
	w.seeds["verification_id"] = []string{res.VerificationID}
	list, err := w.niche.List(context.Background(), niche.ListOptions{Limit: 1})
	if err != nil || len(list.Previews) == 0 {
		t.Fatalf("demo catalogue: %v", err)
	}
	id := list.Previews[0].ID
	w.seeds["niche_id"] = []string{id}
	st, _, b = w.do(t, true, "GET", "/niche-discovery/v1/niches/"+id+"/pay-per-call", "", nil)
	var full struct{ Access struct{ UnlockToken string } }
	if err := json.Unmarshal(b, &full); st != 200 || err != nil || full.Access.UnlockToken == "" {
		t.Fatalf("seed niche purchase: %d %s", st, b)
	}
	w.seeds["x-niche-paid-call"] = []string{full.Access.UnlockToken}
	st, _, b = w.do(t, false, "POST", DefaultClaimsPrefix+"/v1/quotes", `{"tier":"standard"}`, nil)
	var q struct{ QuoteID string }
	if err := json.Unmarshal(b, &q); st != 200 || err != nil {
		t.Fatalf("seed quote: %d %s", st, b)
	}
	w.seeds["X-Agentic-Quote-Id"] = []string{q.QuoteID}
	var sessions []string
	for range 3 {
		st, _, b = w.do(t, false, "POST", "/niche-discovery/v1/subscription/checkout", "", nil)
		var co struct{ SessionID string }
		if err := json.Unmarshal(b, &co); st != 200 || err != nil {
			t.Fatalf("seed checkout: %d %s", st, b)
		}
		sessions = append(sessions, co.SessionID)
	}
	st, _, b = w.do(t, false, "POST", "/niche-discovery/v1/subscription/local/checkout/"+sessions[0], "", map[string]string{"Accept": "application/json"})
	var tok struct{ Token string }
	if err := json.Unmarshal(b, &tok); st != 200 || err != nil || tok.Token == "" {
		t.Fatalf("seed subscription: %d %s", st, b)
	}
	w.seeds["session_id"] = sessions
	w.seeds["subscriber"] = []string{tok.Token}
}

// walkOp is one operation of a document.
type walkOp struct {
	Parameters []struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
		Schema   any    `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Required bool `json:"required"`
		Content  map[string]struct {
			Schema any `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema any `json:"schema"`
		} `json:"content"`
		Headers map[string]any `json:"headers"`
	} `json:"responses"`
	Security    []map[string][]string `json:"security"`
	OperationID string                `json:"operationId"`
	PaymentInfo any                   `json:"x-payment-info"`
}

// walkDoc is what the walk reads of a document.
type walkDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas         map[string]any `json:"schemas"`
		SecuritySchemes map[string]struct {
			Type, In, Name, Scheme string
		} `json:"securitySchemes"`
	} `json:"components"`
}

// walkDocument walks every operation of the document at docPath and
// returns the number of requests sent.
func (w *walkEnv) walkDocument(t *testing.T, docPath string, cases int) int {
	t.Helper()
	st, _, body := w.do(t, false, "GET", docPath, "", nil)
	if st != 200 {
		t.Fatalf("%s: %d", docPath, st)
	}
	var doc walkDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	docURL := "file:///walk" + strings.ReplaceAll(docPath, "/", "_")
	c := schemaCompiler(t, docURL, body)
	compiled := map[string]*jsonschema.Schema{}
	compile := func(ptr string) *jsonschema.Schema {
		if s, ok := compiled[ptr]; ok {
			return s
		}
		s, err := c.Compile(docURL + "#" + ptr)
		if err != nil {
			t.Fatalf("%s: compiling %s: %v", docPath, ptr, err)
		}
		compiled[ptr] = s
		return s
	}
	prefix := strings.TrimSuffix(docPath, PathOpenAPI)
	gen := &schemaGen{rng: w.rng, comps: doc.Components.Schemas}
	sent := 0
	_, hasOrders := doc.Paths["/v1/orders/{order_id}"]["get"]
	for _, path := range sortedMapKeys(doc.Paths) {
		for _, method := range sortedMapKeys(doc.Paths[path]) {
			var op walkOp
			if err := json.Unmarshal(doc.Paths[path][method], &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			if _, token := op.Responses["200"].Headers["X-Agentic-Order-Token"]; token && !hasOrders {
				w.fail(docPath+" orders", "%s: %s hands out an order token, but the document has no GET /v1/orders/{order_id} to read the order with",
					docPath, op.OperationID)
			}
			opPtr := "/paths/" + jsonPointerEscape(path) + "/" + method
			for k := range cases {
				req := w.build(t, gen, &doc, compile, opPtr, prefix, strings.ToUpper(method), path, &op, k)
				w.check(t, docPath, compile, opPtr, &op, req)
				sent++
			}
		}
	}
	return sent
}

func sortedMapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// walkReq is one generated request and its answer.
type walkReq struct {
	method, target string
	header         http.Header
	body           []byte
	valid          bool   // every part is valid per the document
	why            string // what was made invalid
	prose          string // the x-cross-field-rules rule a schema-valid body breaks
	pay            bool   // sent through the paying client
	status         int
	respHeader     http.Header
	respBody       []byte
}

// build generates the k-th request of an operation: even k valid, odd k
// with one part broken (when the operation has any input).
func (w *walkEnv) build(t *testing.T, g *schemaGen, doc *walkDoc, compile func(string) *jsonschema.Schema,
	opPtr, prefix, method, path string, op *walkOp, k int) *walkReq {
	t.Helper()
	r := &walkReq{method: method, header: http.Header{}, valid: true}
	// The part to break, among those the operation has.
	var parts []string
	for _, p := range op.Parameters {
		if p.In != "header" || p.Required || hasRestriction(g, p.Schema) {
			parts = append(parts, p.In+":"+p.Name)
		}
	}
	bodyMedia := ""
	if op.RequestBody != nil {
		bodyMedia = sortedMapKeys(op.RequestBody.Content)[0]
		parts = append(parts, "body")
	}
	broken := ""
	if k%2 == 1 && len(parts) > 0 {
		broken = parts[w.rng.IntN(len(parts))]
		r.valid, r.why = false, broken
	}
	// One request in four of an operation whose body has rules that only
	// prose states sends only what is required, with a body that the
	// schema accepts but that breaks such a rule (see validBody).
	proseCase := false
	if k%4 == 2 && bodyMedia != "" {
		_, proseCase = g.resolve(op.RequestBody.Content[bodyMedia].Schema)["x-cross-field-rules"]
	}
	query := url.Values{}
	target := prefix + path
	for i, p := range op.Parameters {
		key := p.In + ":" + p.Name
		if proseCase && !p.Required {
			continue
		}
		ptr := opPtr + "/parameters/" + strconv.Itoa(i) + "/schema"
		var val string
		present := p.Required || w.rng.IntN(2) == 0
		if (p.In == "header" && isCredential(doc, p.Name) || opaqueParams[p.Name]) && key != broken {
			// A credential is valid when it is a real one; another value
			// of the right type is not "valid per the document".
			if seeds := w.seeds[p.Name]; len(seeds) > 0 && w.rng.IntN(4) != 0 {
				r.header.Set(p.Name, seeds[w.rng.IntN(len(seeds))])
				continue
			}
			if !p.Required && w.rng.IntN(3) != 0 {
				continue
			}
			r.valid, r.why = false, "credential "+p.Name
		}
		switch {
		case key == broken && p.Required && w.rng.IntN(3) == 0:
			present = false
		case key == broken:
			present = true
			val = w.invalidParam(g, compile(ptr), p.Schema)
		default:
			val = w.validParam(g, compile(ptr), p.Name, p.Schema)
		}
		if !present {
			continue
		}
		switch p.In {
		case "path":
			target = strings.Replace(target, "{"+p.Name+"}", url.PathEscape(val), 1)
		case "query":
			query.Add(p.Name, val)
		case "header":
			r.header.Set(p.Name, val)
		}
	}
	if w.rng.IntN(4) == 0 {
		query.Add("unknownParameter", "1") // ignored, as FastAPI ignores it
	}
	// Credentials that are not header parameters: Authorization schemes.
	for _, alt := range op.Security {
		for name := range alt {
			sc := doc.Components.SecuritySchemes[name]
			if sc.Type == "http" && strings.EqualFold(sc.Scheme, "bearer") && !proseCase && w.rng.IntN(2) == 0 {
				r.header.Set("Authorization", "Bearer "+w.pick("subscriber", "nd_"+strconv.Itoa(w.rng.IntN(1000))))
			}
		}
	}
	// A third of the valid calls of a paid operation are paid (x402 v2,
	// the development wallet), so that its paid answers are checked too.
	r.pay = op.PaymentInfo != nil && broken == "" && w.rng.IntN(3) == 0
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	r.target = target
	if bodyMedia != "" {
		ptr := opPtr + "/requestBody/content/" + jsonPointerEscape(bodyMedia) + "/schema"
		schema := op.RequestBody.Content[bodyMedia].Schema
		r.header.Set("Content-Type", bodyMedia)
		if broken == "body" {
			r.body = w.invalidBody(g, compile(ptr), schema, bodyMedia, r)
		} else {
			r.body = w.validBody(t, g, compile(ptr), schema, bodyMedia, r, proseCase)
		}
	}
	return r
}

// opaqueParams are parameters whose valid values only the server makes
// (a page cursor from nextCursor): like credentials, only a known one is
// valid.
var opaqueParams = map[string]bool{"cursor": true}

// isCredential reports whether a header carries a credential (an apiKey
// security scheme of the document).
func isCredential(doc *walkDoc, header string) bool {
	for _, sc := range doc.Components.SecuritySchemes {
		if sc.Type == "apiKey" && strings.EqualFold(sc.Name, header) {
			return true
		}
	}
	return false
}

// pick returns a known-good value for name, or else alt.
func (w *walkEnv) pick(name, alt string) string {
	if s := w.seeds[name]; len(s) > 0 && w.rng.IntN(4) != 0 {
		return s[w.rng.IntN(len(s))]
	}
	return alt
}

// hasRestriction reports whether a parameter schema refuses some string.
func hasRestriction(g *schemaGen, raw any) bool {
	s := g.resolve(raw)
	for _, k := range []string{"pattern", "enum", "maxLength", "minLength", "minimum", "maximum", "const"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	t := types(s)
	return len(t) > 0 && !slices.Contains(t, "string")
}

// paramText is a parameter value as it travels: strings as they are,
// numbers and booleans as JSON writes them.
func paramText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (w *walkEnv) validParam(g *schemaGen, sch *jsonschema.Schema, name string, raw any) string {
	for range 20 {
		v := paramText(g.valid(raw, 0))
		if s := w.seeds[name]; len(s) > 0 && w.rng.IntN(3) != 0 {
			v = s[w.rng.IntN(len(s))]
		}
		if v != "" && paramValid(sch, v) {
			return v
		}
	}
	return "x"
}

func (w *walkEnv) invalidParam(g *schemaGen, sch *jsonschema.Schema, raw any) string {
	for range 20 {
		v := paramText(g.invalid(raw))
		if v != "" && !paramValid(sch, v) {
			return v
		}
	}
	return "%ZZ" // a malformed escape, kept as text (and then refused by most schemas)
}

// paramValid checks a parameter's text against its schema: as a string,
// else (numbers, booleans) as the JSON value it spells.
func paramValid(sch *jsonschema.Schema, v string) bool {
	if sch.Validate(v) == nil {
		return true
	}
	var x any
	if inst, err := jsonschema.UnmarshalJSON(strings.NewReader(v)); err == nil {
		x = inst
		return sch.Validate(x) == nil
	}
	return false
}

// validBody generates a body valid for the schema and the operation's
// cross-field rules — or, when prose is set, valid for the schema but
// breaking a rule of x-cross-field-rules (r.prose names it); a body the
// generator cannot make valid counts as not valid.
func (w *walkEnv) validBody(t *testing.T, g *schemaGen, sch *jsonschema.Schema, raw any, media string, r *walkReq, prose bool) []byte {
	t.Helper()
	for range 40 {
		v := normalizeJSON(g.valid(raw, 0))
		if sch.Validate(v) == nil && crossFieldRulesHold(t, g, raw, v) {
			// When asked (and every other part is valid), keep to the
			// schema but break a rule it states only in prose: refused,
			// and for that rule only.
			if prose && r.valid {
				if nv, rule := w.breakProseRule(t, g, sch, raw, v); rule != "" {
					r.valid, r.why, r.prose = false, "breaks "+rule, rule
					return encodeBody(nv, media)
				}
			}
			return encodeBody(v, media)
		}
	}
	r.valid, r.why = false, "no valid body generated"
	return encodeBody(normalizeJSON(g.valid(raw, 0)), media)
}

func (w *walkEnv) invalidBody(g *schemaGen, sch *jsonschema.Schema, raw any, media string, r *walkReq) []byte {
	switch w.rng.IntN(8) {
	case 0:
		return []byte(`{"a":`) // malformed JSON
	case 1:
		return nil // no body
	case 2:
		return []byte("{\"claim\":\"\xff\xfe\"}") // not UTF-8
	case 3:
		r.header.Set("Content-Type", "text/plain")
		return []byte(`plain text`)
	}
	for range 20 {
		v := normalizeJSON(g.invalid(raw))
		if sch.Validate(v) != nil {
			return encodeBody(v, media)
		}
	}
	return []byte(`[]`)
}

// normalizeJSON turns generated Go values into what jsonschema validates
// (json.Number for numbers).
func normalizeJSON(v any) any {
	b, _ := json.Marshal(v)
	out, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return out
}

func encodeBody(v any, media string) []byte {
	if media == "application/x-www-form-urlencoded" {
		q := url.Values{}
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				q.Set(k, paramText(x))
			}
		}
		return []byte(q.Encode())
	}
	b, _ := json.Marshal(v)
	return b
}

// crossFieldRulesHold evaluates the rules a body schema states in
// x-cross-field-rules (the rules no JSON Schema can state) on the value v;
// a rule the walk does not know fails the test (so that a new rule comes
// with its evaluation here).
func crossFieldRulesHold(t *testing.T, g *schemaGen, raw any, v any) bool {
	t.Helper()
	return brokenProseRule(t, g, raw, v) == ""
}

// brokenProseRule is the id of the first rule of x-cross-field-rules that
// v breaks, or "".
func brokenProseRule(t *testing.T, g *schemaGen, raw any, v any) string {
	t.Helper()
	rules, _ := g.resolve(raw)["x-cross-field-rules"].([]any)
	m, _ := v.(map[string]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		id, _ := rule["id"].(string)
		switch id {
		case "minimum-sources-within-max":
			if numberOf(m["minimumSources"], 2) > numberOf(m["maxSources"], 8) {
				return id
			}
		default:
			t.Fatalf("x-cross-field-rules names %q, which the walk cannot evaluate", id)
		}
	}
	return ""
}

// breakProseRule turns a valid body into one the schema still accepts but
// that breaks a rule of x-cross-field-rules, and returns that rule's id
// ("" when the schema states none or the body cannot be made so).
func (w *walkEnv) breakProseRule(t *testing.T, g *schemaGen, sch *jsonschema.Schema, raw any, v any) (any, string) {
	t.Helper()
	m, ok := v.(map[string]any)
	rules, _ := g.resolve(raw)["x-cross-field-rules"].([]any)
	if !ok || len(rules) == 0 {
		return v, ""
	}
	out := map[string]any{}
	for k, x := range m {
		out[k] = x
	}
	// minimumSources > maxSources, both within their bounds.
	min := 2 + w.rng.IntN(2)
	out["minimumSources"], out["maxSources"] = json.Number(strconv.Itoa(min)), json.Number(strconv.Itoa(min-1))
	if w.rng.IntN(2) == 0 {
		delete(out, "maxSources") // the default, 8
		out["minimumSources"] = json.Number("9")
	}
	nv := normalizeJSON(out)
	if sch.Validate(nv) != nil {
		return v, ""
	}
	return nv, brokenProseRule(t, g, raw, nv)
}

// proseRuleMessages is what the refusal of each x-cross-field-rules rule
// says.
var proseRuleMessages = map[string]string{"minimum-sources-within-max": "must not exceed maxSources"}

func numberOf(v any, def float64) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case float64:
		return x
	}
	return def
}

// check sends r and checks its answer against the operation.
func (w *walkEnv) check(t *testing.T, docPath string, compile func(string) *jsonschema.Schema, opPtr string, op *walkOp, r *walkReq) {
	t.Helper()
	st, hd, body := w.send(t, r)
	r.status, r.respHeader, r.respBody = st, hd, body
	if w.seen[op.OperationID] == nil {
		w.seen[op.OperationID] = map[int]bool{}
	}
	w.seen[op.OperationID][st] = true
	where := fmt.Sprintf("%s %s %s", docPath, r.method, r.target)
	code := strconv.Itoa(st)
	resp, ok := op.Responses[code]
	if !ok {
		resp, ok = op.Responses["default"]
	}
	if !ok {
		w.fail(op.OperationID+" status "+code, "%s: %s answers %d, which the document does not declare (declared: %v)\nbody: %.300s",
			where, op.OperationID, st, sortedMapKeys(op.Responses), body)
		return
	}
	if r.valid && (st == 400 || st == 422) {
		w.fail(op.OperationID+" refused valid "+code, "%s: a request valid per the document was refused %d: %.400s\nrequest body: %.400s",
			where, st, body, r.body)
	}
	if r.prose != "" {
		w.prose++
		// Every other part is valid: the refusal must be the prose rule's
		// (a refusal for anything else is a rule the schema could state).
		if st != 422 || !strings.Contains(string(body), proseRuleMessages[r.prose]) {
			w.fail(op.OperationID+" prose "+r.prose, "%s: a body the schema accepts but that breaks %q was answered %d, not refused for that rule: %.400s\nrequest body: %.400s",
				where, r.prose, st, body, r.body)
		}
	}
	if len(body) == 0 && (st == 304 || st == 204) {
		return
	}
	ct := hd.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		w.fail(op.OperationID+" "+code+" content-type", "%s: %d with Content-Type %q", where, st, ct)
		return
	}
	media, ok := resp.Content[mt]
	if !ok {
		w.fail(op.OperationID+" "+code+" "+mt, "%s: %d answered as %s, which the document does not declare for %d (declared: %v)",
			where, st, mt, st, sortedMapKeys(resp.Content))
		return
	}
	if media.Schema == nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		w.fail(op.OperationID+" "+code+" not json", "%s: %d %s body is not JSON: %.200s", where, st, mt, body)
		return
	}
	ptr := opPtr + "/responses/" + code + "/content/" + jsonPointerEscape(mt) + "/schema"
	if _, ok := op.Responses[code]; !ok {
		ptr = opPtr + "/responses/default/content/" + jsonPointerEscape(mt) + "/schema"
	}
	if err := compile(ptr).Validate(inst); err != nil {
		w.fail(op.OperationID+" "+code+" "+mt+" body", "%s: the %d body does not match its declared schema: %v\nbody: %.400s", where, st, err, body)
	}
}

func (w *walkEnv) send(t *testing.T, r *walkReq) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, w.base+r.target, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.header
	client := w.client
	if r.pay {
		client = w.payer
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// fail records a failure once per key.
func (w *walkEnv) fail(key, format string, args ...any) {
	if w.reported[key] {
		return
	}
	w.reported[key] = true
	w.failures = append(w.failures, fmt.Sprintf(format, args...))
}

func (w *walkEnv) summary() string {
	var b strings.Builder
	for _, id := range sortedMapKeys(w.seen) {
		var sts []int
		for s := range w.seen[id] {
			sts = append(sts, s)
		}
		slices.Sort(sts)
		fmt.Fprintf(&b, "\n  %s %v", id, sts)
	}
	return b.String()
}
