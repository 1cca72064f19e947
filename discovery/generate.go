package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
)

// Documents is the route.Mount of the index and the discovery documents;
// list it after every other mount (it describes the routes before it).
// The zero value mounts them with the defaults below.
//
// The index: GET / and GET {prefix} of each service answer what is
// mounted (see index.go).
//
// Documents are generated from the routing table (every public route; admin
// routes never appear), the tier table (claims.Tiers) and the shapes' JSON
// Schemas, and priced from each route's offer and the payment options of
// the paywall's cashier (the processor's own structured description of
// what its 402 offers), so that no price is kept twice. Under
// each service prefix ({prefix} = "/claim-verification",
// "/niche-discovery", or the configured ones):
//
//   - {prefix}/openapi.json — OpenAPI 3.1 of the service's operations;
//   - {prefix}/.well-known/agent-service.json — manifest 0.1;
//   - {prefix}/.well-known/x402 — legacy x402scan list (paid servers only):
//     every paid operation, as a callable URL (with an example query when
//     it needs one) or, when it needs an identifier, as a URL template in
//     resourceTemplates; so it exists under every service prefix;
//   - {prefix}/.well-known/mcp/server.json — MCP registry entry (when the
//     service has an MCP endpoint at {prefix}/mcp);
//   - {prefix}/.well-known/agent-card.json — A2A 1.0 card (when it has an
//     A2A endpoint at {prefix}/a2a).
//
// At the origin root (crawlers probe RFC 8615 paths): /openapi.json and
// /.well-known/x402 cover every service, and /.well-known/agent-service.json,
// /.well-known/agent-card.json and /.well-known/mcp/server.json are the
// primary service's (claim verification when mounted, else niche
// discovery).
//
// Every document is served with Content-Type application/json, a strong
// ETag (SHA-256 of the bytes; If-None-Match answers 304) and
// Cache-Control public, max-age=300 (agent card 3600). When the base URL
// comes from the request (no PublicBaseURL), responses vary by the headers
// it was built from.
//
// Every URL is absolute, built on PublicBaseURL (or the request). The
// manifest schema requires https for service.id, service.homepage and
// transports[].url: on an http base (the example server's default,
// http://127.0.0.1:8080) the documents are served but the manifest does
// not validate, and New logs a warning when the configured base is http
// (at debug level on a loopback host).
//
// The manifest lists every MCP tool of the service as an operation on the
// MCP transport with the input schema tools/list publishes (so the
// tier-capped schema of a verify tool), niche discovery's search_niches
// and get_niche included; the agent card states every tier's price and
// that params.metadata.tier chooses it. Response schemas are reflected
// from the Go types the handlers encode (niche, subscription, commerce,
// health and readiness routes included).
//
// Choices where the interface documents are silent: the homepage defaults
// to the service's openapi.json, the terms and privacy links to the
// manifest's own policies member (#policies); an unpaid server (no
// Paywall, or httpgate.Free) publishes the tier-table prices as list prices
// with no payee, transport authorization "none", no 402 responses, no
// x-payment-info, no x402 document and no agent-card payment extensions.
type Documents struct {
	// IndexOnly mounts the index without the documents (services that
	// share one prefix cannot each have their documents under it).
	IndexOnly bool
	// PublicBaseURL is the scheme, host and mount path under which clients
	// reach the server, e.g. "https://api.example.com" (the value given to
	// httpgate.Options.PublicBaseURL). Every URL in every document is
	// built from it. Empty means server.Config.PublicBaseURL. It should be https:
	// with http, New logs a warning, since the manifest then fails its
	// schema (see above).
	PublicBaseURL string
	// TrustForwardedHeaders builds the base URL from X-Forwarded-Proto and
	// X-Forwarded-Host when PublicBaseURL is empty. Only set it behind a
	// proxy that overwrites those headers. With neither, the base URL is
	// the request's own scheme and Host, and documents are cached
	// privately only.
	TrustForwardedHeaders bool
	// Provider operates the service: ID (a URI), Name, Contact (an email)
	// and URL. SigningKey is filled in with the JWKS URL when the JWKS is
	// served. Defaults describe the assay project.
	Provider Provider
	// Homepage, Terms and Privacy are absolute URLs; see the defaults
	// above.
	Homepage, Terms, Privacy string
	// Repository is the source repository URL of the MCP registry entry.
	Repository string
	// MCPNamespace is the reverse-DNS namespace of the MCP registry name
	// ("<namespace>/<service key>"); "" means "io.github.assaykit".
	MCPNamespace string
	// Services overrides the published texts of a service, by key
	// ("claim-verification", "niche-discovery"). Zero fields keep the
	// defaults.
	Services map[string]ServiceText
	// Schemas returns the JSON Schemas of the request shapes as OpenAPI
	// components ("#/components/schemas/<name>" references). Nil means the
	// shapes package's.
	Schemas func() (map[string]json.RawMessage, error)
}

// ServiceText is what a service says about itself in its documents.
type ServiceText struct {
	Name        string
	Description string
	Summary     string // ≤ 100 characters (MCP registry)
	Version     string
	Lifecycle   string
	Tags        []string
	Categories  []string
	Capability  Capability
	Provenance  Provenance
	Policies    Policies
	Skills      []Skill
}

// Discovery document route ids (per service: "discovery.<key>.<doc>").
const (
	docOpenAPI   = "openapi"
	docManifest  = "manifest"
	docX402      = "x402"
	docMCP       = "mcp-server"
	docAgentCard = "agent-card"
)

// Routes implements route.Mount: the index, then the documents.
func (cfg Documents) Routes(s route.Host) ([]*route.Route, error) {
	idx := indexRoutes(s, cfg)
	if cfg.IndexOnly {
		return idx, nil
	}
	docs, err := documentRoutes(s, cfg, append(slices.Clone(s.Routes()), idx...))
	if err != nil {
		return nil, err
	}
	return append(idx, docs...), nil
}

// documentRoutes returns the routes of the discovery documents of the
// routing table.
func documentRoutes(s route.Host, cfg Documents, table []*route.Route) ([]*route.Route, error) {
	if cfg.PublicBaseURL == "" {
		cfg.PublicBaseURL = s.PublicBaseURL()
	}
	if err := checkBase(s.Logger(), cfg.PublicBaseURL); err != nil {
		return nil, err
	}
	d := &discoverer{s: s, cfg: cfg, cache: map[string]*docSet{}, prices: map[string]*Price{}}
	d.table = table
	d.services = d.findServices()
	if len(d.services) == 0 {
		return nil, nil
	}
	// Generate once now so that a misconfiguration fails New, not the
	// first crawler; which documents exist does not depend on the base.
	probe, err := d.generate(context.Background(), "https://discovery.invalid")
	if err != nil {
		return nil, err
	}
	var routes []*route.Route
	add := func(id, path, summary, doc, key string) {
		routes = append(routes, &route.Route{ID: id, Summary: summary, Status: "stable", Method: http.MethodGet, Path: path,
			Handler: d.handler(key, doc)})
	}
	for _, sv := range d.services {
		p, k := sv.prefix, sv.key
		add("discovery."+k+"."+docOpenAPI, p+PathOpenAPI, "OpenAPI 3.1 description of "+sv.text.Name+" with payment extensions.", docOpenAPI, k)
		add("discovery."+k+"."+docManifest, p+PathManifest, "Agent-service manifest 0.1 of "+sv.text.Name+".", docManifest, k)
		if probe.docs[k][docX402] != nil {
			add("discovery."+k+"."+docX402, p+PathX402, "x402 discovery: the paid resources of "+sv.text.Name+".", docX402, k)
		}
		if sv.mcp != nil {
			add("discovery."+k+"."+docMCP, p+PathMCPServer, "MCP registry entry of "+sv.text.Name+".", docMCP, k)
		}
		if sv.a2a != nil {
			add("discovery."+k+"."+docAgentCard, p+PathAgentCard, "A2A 1.0 agent card of "+sv.text.Name+".", docAgentCard, k)
		}
	}
	add("discovery."+docOpenAPI, PathOpenAPI, "OpenAPI 3.1 description of every public operation.", docOpenAPI, rootKey)
	if probe.docs[rootKey][docX402] != nil {
		add("discovery."+docX402, PathX402, "x402 discovery: every paid resource.", docX402, rootKey)
	}
	primary := d.services[0]
	add("discovery."+docManifest, PathManifest, "Agent-service manifest of "+primary.text.Name+".", docManifest, primary.key)
	if primary.mcp != nil {
		add("discovery."+docMCP, PathMCPServer, "MCP registry entry of "+primary.text.Name+".", docMCP, primary.key)
	}
	if primary.a2a != nil {
		add("discovery."+docAgentCard, PathAgentCard, "A2A 1.0 agent card of "+primary.text.Name+".", docAgentCard, primary.key)
	}
	return routes, nil
}

// checkBase refuses a public base URL that is not an http(s) base URL,
// and says once, short, that an http one will not validate (on a loopback
// host, a development machine, only at debug level).
func checkBase(log *slog.Logger, base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("discovery: PublicBaseURL %q is not an http(s) base URL", base)
	}
	if u.Scheme == "https" {
		return nil
	}
	level := slog.LevelWarn
	if ip, err := netip.ParseAddr(u.Hostname()); u.Hostname() == "localhost" || (err == nil && ip.IsLoopback()) {
		level = slog.LevelDebug
	}
	log.Log(context.Background(), level, "discovery: the public base URL is not https: the manifest will not validate against its schema")
	log.Debug("discovery: every document carries http URLs; service.id, service.homepage and transports[].url must be https: serve the documents behind https",
		"publicBaseURL", base)
	return nil
}

// rootKey names the origin-root pseudo-service (every operation).
const rootKey = ""

// discoverer generates and serves the documents.
type discoverer struct {
	s        route.Host
	cfg      Documents
	table    []*route.Route
	services []*svcDef

	mu     sync.Mutex
	cache  map[string]*docSet // by base URL
	prices map[string]*Price
}

// docSet is every document for one base URL, by service key and document.
type docSet struct {
	docs map[string]map[string]*servedDoc
}

type servedDoc struct {
	body []byte
	etag string
}

// maxCachedBases bounds the documents kept for request-derived base URLs.
const maxCachedBases = 32

// svcDef is a service found in the routing table.
type svcDef struct {
	key    string
	prefix string
	text   ServiceText
	routes []*route.Route
	mcp    *route.Route
	a2a    *route.Route
}

// paid reports whether a real paywall (not nil, not httpgate.Free) is
// configured.
func (d *discoverer) paid() bool {
	switch d.s.Paywall().(type) {
	case nil, httpgate.Free, *httpgate.Free:
		return false
	}
	return true
}

// families are the services assay knows, in primary-first order: the
// route-id family that defines each and its default texts.
func serviceFamilies() []struct {
	family string
	key    string
	text   func() ServiceText
} {
	return []struct {
		family string
		key    string
		text   func() ServiceText
	}{
		{"claims.verify.", route.ClaimsServiceKey, claimsText},
		{"niche.", route.NicheServiceKey, nicheText},
	}
}

// findServices groups the public routes by service: a service exists when
// a route of its family exists; its prefix is that route's first prefix;
// its operations are every public route served under that prefix.
func (d *discoverer) findServices() []*svcDef {
	var out []*svcDef
	for _, f := range serviceFamilies() {
		var anchor *route.Route
		for _, r := range d.table {
			if strings.HasPrefix(r.ID, f.family) && r.Published() && len(r.Prefixes) > 0 {
				anchor = r
				break
			}
		}
		if anchor == nil {
			continue
		}
		prefix := strings.TrimRight(anchor.Prefixes[0], "/")
		if prefix == "" {
			continue
		}
		sv := &svcDef{key: f.key, prefix: prefix, text: f.text()}
		if o, ok := d.cfg.Services[f.key]; ok {
			sv.text = mergeText(sv.text, o)
		}
		for _, r := range d.table {
			if !r.Published() || strings.HasPrefix(r.ID, "discovery.") {
				continue
			}
			for _, pat := range r.Patterns() {
				switch pat {
				case prefix + "/mcp":
					sv.mcp = r
				case prefix + "/a2a":
					sv.a2a = r
				}
			}
			if sv.mcp == r || sv.a2a == r {
				continue
			}
			if slices.ContainsFunc(r.Prefixes, func(p string) bool { return strings.TrimRight(p, "/") == prefix }) {
				sv.routes = append(sv.routes, r)
			}
		}
		out = append(out, sv)
	}
	return out
}

func mergeText(def, o ServiceText) ServiceText {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&def.Name, o.Name)
	set(&def.Description, o.Description)
	set(&def.Summary, o.Summary)
	set(&def.Version, o.Version)
	set(&def.Lifecycle, o.Lifecycle)
	if o.Tags != nil {
		def.Tags = o.Tags
	}
	if o.Categories != nil {
		def.Categories = o.Categories
	}
	if o.Capability.ID != "" {
		def.Capability = o.Capability
	}
	if o.Provenance.Summary != "" {
		def.Provenance = o.Provenance
	}
	if o.Policies.DataRetentionDays != 0 || o.Policies.AllowedUse != nil {
		def.Policies = o.Policies
	}
	if o.Skills != nil {
		def.Skills = o.Skills
	}
	return def
}

// baseURL is the public base URL for r (see DiscoveryConfig) and whether
// it came from the request.
func (d *discoverer) baseURL(r *http.Request) (string, bool) {
	if d.cfg.PublicBaseURL != "" {
		return strings.TrimRight(d.cfg.PublicBaseURL, "/"), false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if d.cfg.TrustForwardedHeaders {
		if p := firstHeaderValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstHeaderValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	return scheme + "://" + host, true
}

func firstHeaderValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// validHost accepts a host[:port] made of the characters a host name or an
// IP literal can contain, so that a forged Host cannot inject anything
// into a document.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune(".-:[]_", c):
		default:
			return false
		}
	}
	return true
}

// handler serves one document.
func (d *discoverer) handler(key, doc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base, fromRequest := d.baseURL(r)
		if fromRequest {
			if u, err := url.Parse(base); err != nil || !validHost(u.Host) {
				writeDetail(w, http.StatusBadRequest, "Invalid Host header")
				return
			}
		}
		set, err := d.documents(r.Context(), base, fromRequest)
		if err != nil {
			d.s.Logger().ErrorContext(r.Context(), "discovery: generating documents", "err", err)
			writeDetail(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		sd := set.docs[key][doc]
		if sd == nil {
			writeDetail(w, http.StatusNotFound, "Not Found")
			return
		}
		h := w.Header()
		maxAge := 300
		if doc == docAgentCard {
			maxAge = 3600
		}
		if fromRequest {
			h.Set("Cache-Control", "private, max-age="+strconv.Itoa(maxAge))
			vary := "Host"
			if d.cfg.TrustForwardedHeaders {
				vary += ", X-Forwarded-Host, X-Forwarded-Proto"
			}
			h.Set("Vary", vary)
		} else {
			h.Set("Cache-Control", "public, max-age="+strconv.Itoa(maxAge))
		}
		h.Set("ETag", sd.etag)
		if etagMatches(r.Header.Get("If-None-Match"), sd.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(sd.body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(sd.body)
		}
	})
}

func writeDetail(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"detail": msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// etagMatches implements the weak comparison of If-None-Match (RFC 9110
// §13.1.2): "*" or any listed tag equal to etag, W/ prefixes ignored.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// documents returns the documents for base, generating them once per base.
func (d *discoverer) documents(ctx context.Context, base string, fromRequest bool) (*docSet, error) {
	d.mu.Lock()
	set, ok := d.cache[base]
	d.mu.Unlock()
	if ok {
		return set, nil
	}
	set, err := d.generate(ctx, base)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if !fromRequest || len(d.cache) < maxCachedBases {
		d.cache[base] = set
	}
	d.mu.Unlock()
	return set, nil
}

func newServed(v any) (*servedDoc, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	default:
		var err error
		if b, err = marshalDoc(v); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(b)
	return &servedDoc{body: b, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}, nil
}

func marshalDoc(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// generate builds every document for base.
func (d *discoverer) generate(ctx context.Context, base string) (*docSet, error) {
	comps, err := d.components()
	if err != nil {
		return nil, err
	}
	set := &docSet{docs: map[string]map[string]*servedDoc{}}
	put := func(key, doc string, v any) error {
		sd, err := newServed(v)
		if err != nil {
			return err
		}
		if set.docs[key] == nil {
			set.docs[key] = map[string]*servedDoc{}
		}
		set.docs[key][doc] = sd
		return nil
	}
	for _, sv := range d.services {
		svc, err := d.service(ctx, base, sv, comps)
		if err != nil {
			return nil, err
		}
		oa, err := OpenAPI(svc)
		if err != nil {
			return nil, err
		}
		m, err := NewManifest(svc)
		if err != nil {
			return nil, err
		}
		if err := put(sv.key, docOpenAPI, oa); err != nil {
			return nil, err
		}
		if err := put(sv.key, docManifest, m); err != nil {
			return nil, err
		}
		if x := NewX402Legacy(svc); svc.Paid && !x.Empty() {
			if err := put(sv.key, docX402, x); err != nil {
				return nil, err
			}
		}
		if svc.MCP != nil {
			ms, err := NewMCPServer(svc)
			if err != nil {
				return nil, err
			}
			if err := put(sv.key, docMCP, ms); err != nil {
				return nil, err
			}
		}
		if svc.A2A != nil {
			c, err := NewAgentCard(svc)
			if err != nil {
				return nil, err
			}
			if signer, jwks := d.cardSigner(base); signer != nil {
				if err := SignAgentCard(c, signer, jwks); err != nil {
					return nil, err
				}
			}
			if err := put(sv.key, docAgentCard, c); err != nil {
				return nil, err
			}
		}
	}
	root, err := d.rootService(ctx, base, comps)
	if err != nil {
		return nil, err
	}
	oa, err := OpenAPI(root)
	if err != nil {
		return nil, err
	}
	if err := put(rootKey, docOpenAPI, oa); err != nil {
		return nil, err
	}
	if x := NewX402Legacy(root); root.Paid && !x.Empty() {
		if err := put(rootKey, docX402, x); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// components are the shapes' schemas plus the reflected response schemas.
func (d *discoverer) components() (map[string]json.RawMessage, error) {
	src := d.cfg.Schemas
	if src == nil {
		src = func() (map[string]json.RawMessage, error) { return shapeSchemas(publicShapes(d.table)) }
	}
	shp, err := src()
	if err != nil {
		return nil, fmt.Errorf("server: discovery: shape schemas: %w", err)
	}
	comps := map[string]json.RawMessage{}
	for k, v := range shp {
		comps[k] = v
	}
	if err := addResponseSchemas(comps); err != nil {
		return nil, err
	}
	if err := publishTierNames(comps); err != nil {
		return nil, err
	}
	for _, r := range d.table {
		if !r.Published() {
			continue // never published
		}
		for _, n := range []string{r.Body, r.Query} {
			if n == "" {
				continue
			}
			if _, ok := comps[n]; !ok {
				return nil, fmt.Errorf("discovery: route %s names shape %q, which has no JSON Schema", r.ID, n)
			}
		}
	}
	return comps, nil
}

// publicShapes lists the shapes the public routes of table name.
func publicShapes(table []*route.Route) []string {
	var out []string
	for _, r := range table {
		if !r.Published() {
			continue
		}
		for _, n := range []string{r.Body, r.Query} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func (d *discoverer) provider(base string, sv *svcDef) Provider {
	p := d.cfg.Provider
	if p.Name == "" {
		p.Name = "assay"
	}
	if p.ID == "" {
		p.ID = "https://github.com/assaykit/assay"
	}
	if p.URL == "" {
		p.URL = p.ID
	}
	if p.Contact == "" {
		p.Contact = "support@assaykit.dev"
	}
	if p.SigningKey == "" && sv != nil {
		for _, r := range sv.routes {
			if r.ID == "commerce.jwks" {
				p.SigningKey = base + sv.prefix + r.Path
			}
		}
	}
	return p
}

// service describes one service for base.
func (d *discoverer) service(ctx context.Context, base string, sv *svcDef, comps map[string]json.RawMessage) (*Service, error) {
	sbase := base + sv.prefix
	t := sv.text
	svc := &Service{
		Key: sv.key, Name: t.Name, Description: t.Description, Summary: t.Summary, Version: t.Version,
		Lifecycle: t.Lifecycle, Tags: t.Tags, Categories: t.Categories, Base: sbase, Prefix: sv.prefix,
		Provider: d.provider(base, sv), Components: comps, Provenance: t.Provenance, Policies: t.Policies,
		Paid: d.paid(), Repository: d.cfg.Repository, Capabilities: []Capability{t.Capability},
		SecuritySchemes: securitySchemes(d.webhookHeader()),
	}
	if sv.key == route.ClaimsServiceKey {
		svc.Provenance.Coverage = withProviders(svc.Provenance.Coverage, d.s.App().Claims)
	}
	svc.Homepage = d.cfg.Homepage
	if svc.Homepage == "" {
		svc.Homepage = sbase + PathOpenAPI
	}
	if svc.Policies.Terms = d.cfg.Terms; svc.Policies.Terms == "" {
		svc.Policies.Terms = sbase + PathManifest + "#policies"
	}
	if svc.Policies.Privacy = d.cfg.Privacy; svc.Policies.Privacy == "" {
		svc.Policies.Privacy = sbase + PathManifest + "#policies"
	}
	ns := d.cfg.MCPNamespace
	if ns == "" {
		ns = "io.github.assaykit"
	}
	svc.MCPName = ns + "/" + sv.key
	commerceUsed := false
	links := map[string]any{}
	for _, r := range sv.routes {
		op, err := d.operation(ctx, sbase, r, t.Capability.ID)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(r.ID, "commerce.") {
			commerceUsed = true
			op.Capability = commerceCapability().ID
		}
		svc.Operations = append(svc.Operations, op)
		if link, ok := commerceLinks()[r.ID]; ok {
			links[link] = sbase + r.Path
		}
		if p := op.Price; p != nil {
			for _, m := range p.Methods {
				if strings.HasPrefix(m.PayTo, "0x") && !slices.Contains(svc.OwnershipProofs, m.PayTo) {
					svc.OwnershipProofs = append(svc.OwnershipProofs, m.PayTo)
				}
			}
		}
	}
	if commerceUsed {
		svc.Capabilities = append(svc.Capabilities, commerceCapability())
	}
	svc.Extensions = map[string]any{}
	if len(links) > 0 {
		svc.Extensions["commerce"] = links
	}
	if sv.key == route.ClaimsServiceKey {
		svc.Extensions["verificationTiers"] = tierExtension(d.s.App().Catalogue, sv.prefix)
	}
	if sv.mcp != nil {
		svc.MCP = &MCP{Path: "/mcp"}
		tools, err := d.mcpTools(ctx, sbase+svc.MCP.Path, sv.key, t.Capability.ID)
		if err != nil {
			return nil, err
		}
		svc.MCP.Tools = tools
	}
	if sv.a2a != nil {
		svc.A2A = &A2A{Path: "/a2a", Skills: t.Skills}
		svc.A2A.InputSchema = sv.a2a.InputSchema
		if sv.a2a.Offer != nil {
			p, err := d.price(ctx, *sv.a2a.Offer, sbase+"/a2a", http.MethodPost)
			if err != nil {
				return nil, err
			}
			svc.A2A.Price = p
			// Every tier a message can choose with params.metadata.tier
			// (the A2A handler's offers are the tier routes').
			offers := d.s.App().TierOffers()
			for _, tr := range claims.Tiers() {
				o, ok := offers[tr.Name]
				if !ok {
					continue
				}
				tp, err := d.price(ctx, o, sbase+"/a2a", http.MethodPost)
				if err != nil {
					return nil, err
				}
				svc.A2A.Tiers = append(svc.A2A.Tiers, A2ATier{Name: tr.Name, Price: tp, Default: o.ID == sv.a2a.Offer.ID})
			}
			svc.A2A.TierKey = inputschema.A2ATierKey
		}
	}
	return svc, nil
}

// mcpTools describes the MCP tools of service key, with the schemas
// tools/list publishes and the prices of their paid calls.
func (d *discoverer) mcpTools(ctx context.Context, endpoint, key, capability string) ([]Tool, error) {
	var out []Tool
	for _, r := range d.table {
		if r.ID != "mcp" {
			continue
		}
		for _, mt := range r.Tools {
			if mt.Service != key {
				continue
			}
			tl := Tool{Name: mt.Name, Summary: mt.Summary, Capability: capability, InputSchema: mt.InputSchema,
				OutputSchema: mt.OutputSchema, TimeoutSeconds: int(mt.Timeout / time.Second), Idempotent: mt.Idempotent}
			if mt.Offer != nil {
				p, err := d.price(ctx, *mt.Offer, endpoint, http.MethodPost)
				if err != nil {
					return nil, err
				}
				tl.Price = p
			}
			out = append(out, tl)
		}
	}
	return out, nil
}

// rootService describes every public operation at the origin root.
func (d *discoverer) rootService(ctx context.Context, base string, comps map[string]json.RawMessage) (*Service, error) {
	primary := d.services[0]
	svc := &Service{
		Key: "assay", Name: d.s.Service(), Version: sell.Version, Base: base, Provider: d.provider(base, nil),
		Description: "Every public operation of this server: " + serviceNames(d.services) + ".",
		Homepage:    d.cfg.Homepage, Components: comps, Paid: d.paid(), Categories: primary.text.Categories,
		SecuritySchemes: securitySchemes(d.webhookHeader()),
	}
	if svc.Homepage == "" {
		svc.Homepage = base + PathOpenAPI
	}
	for _, r := range d.table {
		if !r.Published() || strings.HasPrefix(r.ID, "discovery.") || r.Method == "" {
			continue
		}
		if (primary.mcp != nil && r == primary.mcp) || (primary.a2a != nil && r == primary.a2a) || r.ID == "mcp" {
			continue // agent endpoints, described by their own documents
		}
		skip := false
		for _, sv := range d.services {
			if r == sv.mcp || r == sv.a2a {
				skip = true
			}
		}
		if skip {
			continue
		}
		op, err := d.operation(ctx, base, r, "")
		if err != nil {
			return nil, err
		}
		svc.Operations = append(svc.Operations, op)
		if p := op.Price; p != nil {
			for _, m := range p.Methods {
				if strings.HasPrefix(m.PayTo, "0x") && !slices.Contains(svc.OwnershipProofs, m.PayTo) {
					svc.OwnershipProofs = append(svc.OwnershipProofs, m.PayTo)
				}
			}
		}
	}
	return svc, nil
}

func serviceNames(svs []*svcDef) string {
	var n []string
	for _, s := range svs {
		n = append(n, s.text.Name)
	}
	return strings.Join(n, " and ")
}

// commerceCapability is the capability of the commerce routes.
func commerceCapability() Capability {
	return Capability{ID: "commerce.orders",
		Summary: "Quotes, orders, signed receipts and their verification, and the receipt signing keys.",
		Domains: []string{"payments", "receipts"}}
}

// commerceLinks name the commerce routes published in the manifest.
func commerceLinks() map[string]string {
	return map[string]string{
		"commerce.quotes.create":          "quote",
		"commerce.orders.get":             "orderByAccessToken",
		"commerce.receipts.verify":        "receiptVerification",
		"commerce.customer.orders.list":   "customerOrders",
		"commerce.jwks":                   "receiptKeys",
		"commerce.receipts.verify.stored": "storedReceiptVerification",
	}
}

// servedAs are the media types r answers besides JSON when the Accept
// header asks for them: alsoServedAs, and text/html when a page shares
// its method and path (route.Route.Page).
func (d *discoverer) servedAs(r *route.Route) []string {
	out := slices.Clone(alsoServedAs[r.ID])
	for _, p := range d.table {
		if p.Page && p.Method == r.Method && slices.ContainsFunc(p.Patterns(), func(pat string) bool { return slices.Contains(r.Patterns(), pat) }) &&
			!slices.Contains(out, "text/html") {
			out = append(out, "text/html")
		}
	}
	return out
}

// operation describes route r, whose paths are relative to sbase.
func (d *discoverer) operation(ctx context.Context, sbase string, r *route.Route, capability string) (Operation, error) {
	op := Operation{ID: r.ID, Capability: capability, Summary: r.Summary, Method: r.Method, Path: r.Path,
		Body: r.Body, Query: r.Query, Output: responseSchemaName(r.ID), OutputMediaTypes: append(nonJSONResponses()[r.ID], d.servedAs(r)...),
		ExampleQuery: queryExample(r.Query),
		Idempotent:   r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodPut || r.Method == http.MethodDelete}
	params := inputschema.PathParams()
	for _, seg := range strings.Split(r.Path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			if sch, ok := params[name]; ok {
				if op.Params == nil {
					op.Params = map[string]json.RawMessage{}
				}
				op.Params[name] = sch
			}
		}
	}
	d.contract(r, &op)
	op.Responses = mergeResponses(op.Responses)
	if t, ok := tierOfRoute(r); ok {
		op.Idempotent = true // declared idempotent by the interface document
		op.TimeoutSeconds = int(t.Timeout / time.Second)
		l, _ := d.s.App().Catalogue.Tier(t.Name)
		op.Extra = map[string]any{"verification-tier": tierInfo(t, l)}
		op.Example = json.RawMessage(claimExample)
	}
	if r.Offer != nil {
		if op.TimeoutSeconds == 0 && r.Offer.WorkTimeout > 0 {
			op.TimeoutSeconds = int(r.Offer.WorkTimeout / time.Second)
		}
		p, err := d.price(ctx, *r.Offer, sbase+r.Path, r.Method)
		if err != nil {
			return op, err
		}
		op.Price = p
	}
	return op, nil
}

// queryExample is the example of a query shape (the one the 402's bazaar
// extension carries) as a query string, "" when it has none: the x402
// list names a paid operation that needs a query with it, so that a
// crawler calling it as listed gets the 402 challenge (not a 422).
func queryExample(shape string) string {
	q := url.Values{}
	for k, v := range queryExamples()[shape] {
		q.Set(k, v)
	}
	return q.Encode()
}

// tierOfRoute finds the tier a claims route sells.
func tierOfRoute(r *route.Route) (claims.Tier, bool) {
	if r.Offer == nil || r.Offer.Product == "" || !strings.HasPrefix(r.ID, "claims.verify.") {
		return claims.Tier{}, false
	}
	return claims.TierByName(r.Offer.Product)
}

// tierInfo describes a tier: what it checks (the tier table) and how it
// is sold (the catalogue).
func tierInfo(t claims.Tier, l sell.Listing) map[string]any {
	return map[string]any{"name": t.Name, "priceUsd": payment.MicroUSD(l.AmountMicroUSD).Decimal(), "cardPriceUsd": payment.MicroUSD(l.CardMicroUSD).Decimal(),
		"maxToolCalls": t.MaxToolActions, "maxOutputTokens": t.MaxOutputTokens, "maxSources": t.MaxCitedSources,
		"snapshotMode": string(t.SnapshotMode), "maxSnapshots": t.MaxSnapshots, "timeoutSeconds": int(t.Timeout / time.Second),
		"mcpTool": l.MCPTool, "noVerdictNoCharge": noVerdictNoCharge(l.Waiver), "chargePolicy": sell.ChargePolicy(l.Waiver)}
}

// noVerdictNoCharge says whether insufficient_evidence verdicts of a tier
// are free, and how many per payer per UTC day.
func noVerdictNoCharge(w *payment.Waiver) map[string]any {
	if w == nil {
		return map[string]any{"enabled": false}
	}
	return map[string]any{"enabled": true, "freeVerdictsPerPayerPerDay": w.PerPayerPerDay}
}

// tierExtension is the manifest's verificationTiers, from the tier table
// and the catalogue.
func tierExtension(cat *sell.Catalogue, prefix string) map[string]any {
	out := map[string]any{}
	for _, t := range claims.Tiers() {
		l, _ := cat.Tier(t.Name)
		info := tierInfo(t, l)
		info["path"] = prefix + l.HTTPPath
		out[t.Name] = info
	}
	return out
}

// price is what offer costs: the payment options of the paywall's
// cashier (payment.Cashier.PaymentOptions, the processor's own structured
// description, the same a quote lists and the 402 offers), or the offer's
// list price when nothing is charged.
func (d *discoverer) price(_ context.Context, offer payment.Offer, _, _ string) (*Price, error) {
	d.mu.Lock()
	p, ok := d.prices[offer.ID]
	d.mu.Unlock()
	if ok {
		return p, nil
	}
	p = &Price{AmountMicroUSD: offer.AmountMicroUSD, CardMicroUSD: offer.CardMicroUSD, Description: offer.Description}
	if d.paid() {
		p.Methods, p.ChallengeMediaType = d.methods(offer), MediaProblem
		if !slices.ContainsFunc(p.Methods, func(m Method) bool { return m.Scheme == "stripe" }) {
			p.CardMicroUSD = 0
		}
	}
	d.mu.Lock()
	d.prices[offer.ID] = p
	d.mu.Unlock()
	return p, nil
}

// cardSigner is the key that signs the agent cards and the URL of the
// JWKS that publishes it: the receipt keys of the commerce routes' Cashier,
// whose /.well-known/jwks.json is served at the origin root. Without the
// commerce routes the cards are not signed (the signature is optional in
// A2A 1.0).
func (d *discoverer) cardSigner(base string) (CardSigner, string) {
	c := d.s.App().Cashier
	if c == nil || c.Keys() == nil {
		return nil, ""
	}
	for _, r := range d.table {
		if r.ID == "commerce.jwks" && r.Path == PathJWKS {
			return c.Keys(), strings.TrimSuffix(base, "/") + PathJWKS
		}
	}
	return nil, ""
}

// cashierer is implemented by paywalls built on a payment.Cashier
// (*httpgate.Gate).
type cashierer interface {
	Cashier() *payment.Cashier
}

// methods are the accepted payment methods of offer, from the cashier's
// payment options. Paywalls that do not expose a cashier are described by
// the cashier-neutral defaults (x402 and MPP).
func (d *discoverer) methods(offer payment.Offer) []Method {
	cw, ok := d.s.Paywall().(cashierer)
	if !ok || cw.Cashier() == nil {
		return []Method{{Protocol: payment.ProtocolX402, Scheme: "exact"}, {Protocol: payment.ProtocolMPP, Scheme: "evm", Intent: "charge"}}
	}
	var out []Method
	for _, o := range cw.Cashier().PaymentOptions(offer) {
		m := Method{Protocol: payment.ProtocolX402, Scheme: o.Method, Network: o.Network, Asset: o.Asset, PayTo: o.PayTo,
			Amount: o.Amount, AssetSymbol: assetSymbol(o.Asset, nil)}
		if o.Protocol != payment.ProtocolX402 {
			m.Protocol, m.Intent = payment.ProtocolMPP, "charge"
		}
		if o.Method == mpp.MethodStripe {
			m.AssetSymbol = strings.ToUpper(o.Asset)
		}
		out = append(out, m)
	}
	return out
}

// withProviders adds to the claims coverage text which search providers
// answer (claims.Engine.ProviderNames), so a buyer knows whose index the
// verdicts rest on.
func withProviders(coverage string, e *claims.Engine) string {
	if e == nil {
		return coverage
	}
	names := e.ProviderNames()
	switch len(names) {
	case 0:
		return coverage
	case 1:
		return coverage + " Search provider: " + names[0] + "."
	}
	return coverage + " Search providers: " + names[0] + " (every tier), corroborated by " + strings.Join(names[1:], ", ") + " on the deep and research tiers."
}
