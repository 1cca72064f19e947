package discovery

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/server/agents"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// Config is what the tests configure: the server's configuration with
// the MCP and A2A endpoints always mounted and the documents as the
// Discovery field (mounted when Enabled), as they were configured when
// they were part of server.
type Config struct {
	Logger        *slog.Logger
	AdminKey      string
	Paywall       httpgate.Paywall
	PublicBaseURL string
	MaxBodyBytes  int64
	Metrics       http.Handler
	Ready         map[string]func(context.Context) error
	Claims        ClaimsConfig
	Niche         NicheConfig
	Commerce      CommerceConfig
	Snapshots     SnapshotsConfig
	Subscriptions SubscriptionConfig
	Evidence      server.EvidenceConfig
	Discovery     DiscoveryConfig
	// Mounts come after MCP and A2A, before the documents.
	Mounts []Mount
}

// DiscoveryConfig is Documents with the switch that mounts the documents
// (without it, only the index is mounted).
type DiscoveryConfig struct {
	Enabled                  bool
	PublicBaseURL            string
	TrustForwardedHeaders    bool
	Provider                 Provider
	Homepage, Terms, Privacy string
	Repository               string
	MCPNamespace             string
	Services                 map[string]ServiceText
	Schemas                  func() (map[string]json.RawMessage, error)
}

type (
	Server             = server.Server
	Route              = server.Route
	Mount              = server.Mount
	ClaimsConfig       = server.ClaimsConfig
	NicheConfig        = server.NicheConfig
	CommerceConfig     = server.CommerceConfig
	SnapshotsConfig    = server.SnapshotsConfig
	SubscriptionConfig = server.SubscriptionConfig
)

const (
	ClaimsServiceKey    = server.ClaimsServiceKey
	NicheServiceKey     = server.NicheServiceKey
	DefaultClaimsPrefix = server.DefaultClaimsPrefix
)

// New builds the server of c.
func New(c Config) (*Server, error) {
	cfg := server.Config{Logger: c.Logger, AdminKey: c.AdminKey, Paywall: c.Paywall, PublicBaseURL: c.PublicBaseURL,
		MaxBodyBytes: c.MaxBodyBytes, Metrics: c.Metrics, Ready: c.Ready, Claims: c.Claims, Niche: c.Niche,
		Commerce: c.Commerce, Snapshots: c.Snapshots, Subscriptions: c.Subscriptions, Evidence: c.Evidence}
	cfg.Mounts = append([]server.Mount{agents.MCP{}, agents.A2A{}}, c.Mounts...)
	d := c.Discovery
	cfg.Mounts = append(cfg.Mounts, Documents{IndexOnly: !d.Enabled, PublicBaseURL: d.PublicBaseURL, TrustForwardedHeaders: d.TrustForwardedHeaders,
		Provider: d.Provider, Homepage: d.Homepage, Terms: d.Terms, Privacy: d.Privacy, Repository: d.Repository,
		MCPNamespace: d.MCPNamespace, Services: d.Services, Schemas: d.Schemas})
	return server.New(cfg)
}

const (
	testAdminKey = "admin-secret"
	goodBody     = `{"claim":"Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026."}`
)

func do(t *testing.T, h http.Handler, method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func localBilling(t *testing.T) *niche.LocalBilling {
	t.Helper()
	l, err := niche.NewLocalBilling(nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// matchPattern reports whether a route pattern ("/v1/niches/{niche_id}")
// matches a path's segments ({name} matches one non-empty segment).
func matchPattern(pattern string, parts []string) bool {
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(segs) != len(parts) {
		return false
	}
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if parts[i] == "" {
				return false
			}
			continue
		}
		if s != parts[i] {
			return false
		}
	}
	return true
}

// demoCatalogue is a database holding the demo catalogue, loaded once and
// copied for each test.
var demoCatalogue = storetest.Template{Prepare: func(ctx context.Context, db *store.DB) error {
	neng, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		return err
	}
	_, err = nichedemo.Load(ctx, neng, nil)
	return err
}}

// demoEngines opens an in-memory database with claim verification on the
// scripted "confirmed" fixture and the niche catalogue holding the demo.
func demoEngines(t *testing.T) (*store.DB, *claims.Engine, *niche.Engine) {
	t.Helper()
	db := demoCatalogue.Open(t, nil)
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(f.Provider(), claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	neng, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		t.Fatal(err)
	}
	return db, eng, neng
}
