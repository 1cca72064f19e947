package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// componentSchemas compiles the components of an OpenAPI document served
// at path, for validating responses.
func componentSchemas(t *testing.T, h http.Handler, path string) (func(name string) *jsonschema.Schema, *openAPIDoc) {
	t.Helper()
	body := do(t, h, "GET", path, "").Body.Bytes()
	var oa openAPIDoc
	if err := json.Unmarshal(body, &oa); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("file:///openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	return func(name string) *jsonschema.Schema {
		t.Helper()
		s, err := c.Compile("file:///openapi.json#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		return s
	}, &oa
}

// Every documented response schema matches what the route answers: the
// niche routes (list, preview, evaluation with an unlock token, search,
// both pay-per-call routes, sources), the subscription routes, health,
// readiness and the capability list, on a server that charges nothing.
func TestDiscoveryResponsesMatchSchemas(t *testing.T) {
	e := newDiscoveryEnv(t, false, func(c *Config) {
		signer, err := niche.NewUnlockSigner([]byte("unlock-key-for-the-discovery-tests-0123456789"), nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Niche.Unlock = signer
		c.Ready = map[string]func(context.Context) error{"store": func(context.Context) error { return nil }}
		svc, err := niche.NewSubscriptionService(nichestore.New(e0db(t, c)), localBilling(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Subscriptions = SubscriptionConfig{Service: svc}
	})
	schema, _ := componentSchemas(t, e.srv, PathOpenAPI)
	id := e.params["niche_id"]
	check := func(method, path, body, component string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		rec := do(t, e.srv, method, path, body, hdr...)
		if rec.Code != 200 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		route := routeFor(t, e.srv, method, path)
		if got := responseSchemaName(route.ID); got != component {
			t.Errorf("%s documents %q, want %q", route.ID, got, component)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema(component).Validate(inst); err != nil {
			t.Errorf("%s %s does not match %s: %v\n%s", method, path, component, err, rec.Body)
		}
		return rec
	}
	check("GET", "/healthz", "", "Health")
	check("GET", "/readyz", "", "Readiness")
	check("GET", "/v1/capabilities", "", "CapabilitiesResponse")
	check("GET", "/niche-discovery/v1/niches?limit=2", "", "NicheListResponse")
	check("GET", "/niche-discovery/v1/niches/"+id+"/preview", "", "NichePreviewResponse")
	check("GET", "/niche-discovery/v1/search?q=dental+clinics", "", "NicheSearchResponse")
	check("GET", "/niche-discovery/v1/search/pay-per-call?q=dental+clinics&limit=3", "", "NichePaidSearchResponse")
	paid := check("GET", "/niche-discovery/v1/niches/"+id+"/pay-per-call", "", "NicheEvaluationResponse")
	check("GET", "/niche-discovery/v1/niches/"+id, "", "NicheEvaluationResponse", "X-Niche-Paid-Call", paid.Header().Get("X-Niche-Paid-Call"))
	check("GET", "/niche-discovery/v1/sources", "", "NicheSourcesResponse")
	check("GET", "/niche-discovery/v1/subscription/status", "", "SubscriptionStatus")
	check("POST", "/niche-discovery/v1/subscription/checkout", "", "SubscriptionCheckout")
	check("POST", "/claim-verification/v1/claims/verify", goodBody, "ClaimVerificationResult")
}

// e0db opens a store for a configuration hook (the subscription service
// needs its own).
func e0db(t *testing.T, _ *Config) *store.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// routeFor finds the route serving method and path.
func routeFor(t *testing.T, s *Server, method, path string) *Route {
	t.Helper()
	p, _, _ := strings.Cut(path, "?")
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, r := range s.Routes() {
		if r.Method != method {
			continue
		}
		for _, pat := range r.Patterns() {
			if matchPattern(pat, parts) {
				return r
			}
		}
	}
	t.Fatalf("no route serves %s %s", method, path)
	return nil
}

// Every public JSON operation of the documents has a response schema; the
// exceptions answer something other than a JSON object.
func TestDiscoveryEveryOperationHasAResponseSchema(t *testing.T) {
	e := newDiscoveryEnv(t, true, func(c *Config) {
		svc, err := niche.NewSubscriptionService(nichestore.New(e0db(t, c)), localBilling(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Subscriptions = SubscriptionConfig{Service: svc}
		c.Metrics = http.NotFoundHandler()
	})
	notJSON := nonJSONResponses()
	_, oa := componentSchemas(t, e.srv, PathOpenAPI)
	var missing []string
	for path, ops := range oa.Paths {
		for method, op := range ops {
			var resp struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			}
			_ = json.Unmarshal(op.Responses["200"], &resp)
			if types, ok := notJSON[op.OperationID]; ok {
				// Not (only) JSON: exactly its media types.
				var got []string
				for mt := range resp.Content {
					got = append(got, mt)
				}
				slices.Sort(got)
				want := slices.Sorted(slices.Values(types))
				if !slices.Equal(got, want) {
					t.Errorf("%s %s (%s): 200 media types %v, want %v", strings.ToUpper(method), path, op.OperationID, got, want)
				}
				continue
			}
			ref, _ := resp.Content["application/json"].Schema["$ref"].(string)
			if ref == "" {
				missing = append(missing, strings.ToUpper(method)+" "+path+" ("+op.OperationID+")")
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("operations without a response schema:\n%s", strings.Join(missing, "\n"))
	}
}

// New warns when the documents are built on a configured http base: the
// manifest would not validate against its schema (on a loopback host, a
// development machine, only at debug level).
func TestDiscoveryWarnsAboutHTTPBase(t *testing.T) {
	claimsCfg := newDiscoveryEnv(t, false, nil).srv.Config().Claims
	for _, tc := range []struct {
		base string
		warn bool
	}{{"http://api.example.com", true}, {"http://127.0.0.1:8080", false}, {"https://api.example.com", false}} {
		var buf bytes.Buffer
		_, err := New(Config{Logger: slog.New(slog.NewTextHandler(&buf, nil)), PublicBaseURL: tc.base, Paywall: httpgate.Free{},
			Claims: claimsCfg, Discovery: DiscoveryConfig{Enabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(buf.String(), "level=WARN msg=\"discovery: the public base URL is not https") &&
			strings.Contains(buf.String(), "will not validate against its schema")
		if got != tc.warn {
			t.Errorf("%s: warning %v, want %v; log:\n%s", tc.base, got, tc.warn, buf.String())
		}
	}
}
