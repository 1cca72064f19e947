// Package server serves assay over HTTP: one set of routes per service
// (niche discovery, claim verification, URL snapshots, commerce), composed
// by New into one http.Handler that a host can mount anywhere in its own
// mux. Every optional surface built over those services is a Mount, listed
// in Config.Mounts (opt-in, in order): the MCP and A2A endpoints of package
// server/agents, then the index and discovery documents of package
// discovery. A host that lists none links no agent protocol.
//
// New returns a *Server, which is an http.Handler (ServeHTTP) and also
// exposes its routing table (Routes), from which /v1/capabilities, the
// mounts and the discovery documents are generated. Hosts that only mount
// it can treat it as a plain http.Handler.
//
// server is the only package where errors become status codes. Bodies
// follow FastAPI: {"detail":"..."} for errors, the Pydantic list for 422,
// {"detail":"Not Found"} for unknown paths and {"detail":"Method Not
// Allowed"} with an Allow header for wrong methods.
//
// Where the interface documents leave a choice, this package chooses:
//   - Paths ending in "/" that would match without it redirect (307) to the
//     path without it, as FastAPI does.
//   - GET routes also answer HEAD.
//   - Bodies over the configured limit get 413 {"detail":"Request body too
//     large"} before any handler work.
//   - A service whose engine is not configured has no routes (404).
//   - 422 bodies carry loc "body", "query" or "header" (Idempotency-Key).
//     There is no 422 with loc "path": every path parameter of the
//     interface documents is a string, so any non-empty segment is valid
//     input, and one that names nothing (unknown id, NUL or invalid UTF-8)
//     is a 404.
//   - Every request is logged once at info level ("request": method, path,
//     route id, status, bytes, duration); a panic is logged at error level
//     with its value and stack and answered 500 {"detail":"Internal Server
//     Error"} when nothing was written yet.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/shapes"
)

// Version is the service version: reported by /v1/capabilities, as the
// MCP serverInfo.version, and as the version of every discovery document
// (manifest service.version, OpenAPI info.version, server.json version,
// agent card version). It is the interface documents' service version.
const Version = sell.Version

// ErrNoPaywall is returned by New for a server that sells something
// (claim verification, niche pay-per-call, a Mount's paid calls) without a
// Config.Paywall; the error names the offers.
var ErrNoPaywall = errors.New("server: paid routes need Config.Paywall (httpgate.Free serves them without charging)")

// DefaultMaxBodyBytes bounds request bodies when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// Config configures New. Zero values mean defaults; a service whose engine
// is nil is not mounted.
type Config struct {
	// Logger receives one line per request and every server error.
	// Nil discards them.
	Logger *slog.Logger
	// Service names this server in /v1/capabilities. Empty means "assay".
	Service string
	// MaxBodyBytes bounds request bodies (413 above). 0 means 1 MiB.
	MaxBodyBytes int64
	// CORSOrigins are the browser origins allowed to read responses;
	// empty or "*" allows any origin (without credentials).
	CORSOrigins []string
	// Paywall sells the paid routes. A server with a paid route and no
	// Paywall is refused by New; use httpgate.Free to serve them without
	// charging.
	Paywall httpgate.Paywall
	// PublicBaseURL is the absolute URL clients reach this handler at
	// (scheme, host and mount path, e.g. https://api.example.com). Services
	// whose own setting is empty (discovery documents, subscription
	// checkout pages) use it; the payment gate takes the same value in
	// httpgate.Options. Empty: URLs are built from each request's Host.
	PublicBaseURL string
	// AdminKey guards the /v1/admin/ routes (compared in constant time).
	// Empty disables them (403).
	AdminKey string
	// Observers see every finished request: route id ("" when no route
	// matched), status and duration. Metrics hook in here.
	Observers []func(r *http.Request, routeID string, status int, d time.Duration)
	// Ready lists named readiness checks for GET /readyz.
	Ready map[string]func(context.Context) error
	// Metrics, when set, is served at GET /metrics (for example
	// (*metrics.Metrics).Handler()).
	Metrics http.Handler

	// Catalogue prices every offer (sell.NewCatalogue). Nil means today's
	// prices, with the claim offers' work timeout taken from the claims
	// engine.
	Catalogue *sell.Catalogue

	Niche         NicheConfig
	Subscriptions SubscriptionConfig
	Claims        ClaimsConfig
	Snapshots     SnapshotsConfig
	Commerce      CommerceConfig
	Evidence      EvidenceConfig

	// Mounts add routes built over the services above, in order, after
	// the services' own routes: the MCP and A2A endpoints (agents.MCP,
	// agents.A2A), then the index and the discovery documents
	// (discovery.Documents), which describe every route before them.
	Mounts []Mount
}

// A Mount adds routes built over the server's services (route.Mount).
type Mount = route.Mount

var _ route.Host = (*Server)(nil)

// Server is the composed handler returned by New.
type Server struct {
	cfg     Config
	app     *sell.App
	log     *slog.Logger
	routes  []*Route
	handler http.Handler
	// niche is the resolved niche service (nil when not mounted).
	niche *nicheService
	// unpaid are the offers of paid routes built without a Paywall.
	unpaid []string
}

// New builds the handler for every configured service.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.Service == "" {
		s.cfg.Service = "assay"
	}
	if s.cfg.MaxBodyBytes <= 0 {
		s.cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.cfg.Catalogue == nil {
		o := &sell.CatalogueOptions{}
		if s.cfg.Claims.Engine != nil {
			// The deadline, and the grace of the checks of an answer
			// that arrived before it.
			o.ClaimsWorkTimeout = s.cfg.Claims.Engine.Timeout() + s.cfg.Claims.Engine.CheckGrace()
		}
		c, err := sell.NewCatalogue(o)
		if err != nil {
			return nil, err
		}
		s.cfg.Catalogue = c
	}
	s.app = &sell.App{Catalogue: s.cfg.Catalogue, Claims: s.cfg.Claims.Engine, Tiers: s.cfg.Claims.Tiers,
		Subscriptions: s.cfg.Subscriptions.Service, Cashier: s.cfg.Commerce.Cashier}
	switch pw := s.cfg.Paywall.(type) {
	case *httpgate.Gate:
		if s.app.Cashier == nil {
			s.app.Cashier = pw.Cashier()
		}
	case httpgate.Free, *httpgate.Free:
		s.app.Free = true
	}
	builders := []func() ([]*Route, error){
		s.coreRoutes,
		s.nicheRoutes,
		s.subscriptionRoutes,
		s.snapshotRoutes,
		s.claimsRoutes,
		s.commerceRoutes,
		s.prefixCoreRoutes,
		s.mountRoutes,
	}
	for _, b := range builders {
		rs, err := b()
		if err != nil {
			return nil, err
		}
		s.routes = append(s.routes, rs...)
	}
	if len(s.unpaid) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoPaywall, strings.Join(slices.Compact(s.unpaid), ", "))
	}
	rt := &router{maxBody: s.cfg.MaxBodyBytes}
	for _, r := range s.routes {
		if r.ID == "" || r.Method == "" || r.Handler == nil {
			return nil, errorf("incomplete route %+v", r)
		}
		if r.NotFound {
			if !r.Page || rt.notFound != nil {
				return nil, errorf("route %s: a not-found route must be a page, and there may be one only", r.ID)
			}
			rt.notFound = r
			continue
		}
		for _, p := range r.Patterns() {
			if err := rt.add(r.Method, p, r); err != nil {
				return nil, err
			}
		}
	}
	s.handler = s.observe(s.cors(rt))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Routes returns the routing table (shared; do not modify). While New
// runs, it holds the routes built so far.
func (s *Server) Routes() []*Route { return s.routes }

// Config returns the configuration with defaults applied (Service,
// MaxBodyBytes).
func (s *Server) Config() Config { return s.cfg }

// App returns the application the server sells.
func (s *Server) App() *sell.App { return s.app }

// Service names the server (Config.Service, "assay" by default).
func (s *Server) Service() string { return s.cfg.Service }

// PublicBaseURL is Config.PublicBaseURL.
func (s *Server) PublicBaseURL() string { return s.cfg.PublicBaseURL }

// MaxBodyBytes is the request body limit in use.
func (s *Server) MaxBodyBytes() int64 { return s.cfg.MaxBodyBytes }

// Paywall is Config.Paywall.
func (s *Server) Paywall() httpgate.Paywall { return s.cfg.Paywall }

// Catalogue returns the catalogue of offers the server sells (never nil).
func (s *Server) Catalogue() *sell.Catalogue { return s.cfg.Catalogue }

// Logger returns the server's logger (never nil).
func (s *Server) Logger() *slog.Logger { return s.log }

// mountRoutes adds the routes of Config.Mounts to the table, in order, so
// that each mount sees the routes built before it; it returns none itself.
func (s *Server) mountRoutes() ([]*Route, error) {
	for _, m := range s.cfg.Mounts {
		if m == nil {
			continue
		}
		rs, err := m.Routes(s)
		if err != nil {
			return nil, err
		}
		s.routes = append(s.routes, rs...)
	}
	return nil, nil
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("server: "+format, args...)
}

// Paid wraps a paid route's handler in the configured paywall (Mounts sell
// through it too). Without a Paywall, New fails naming the paid route.
func (s *Server) Paid(offer payment.Offer, h http.Handler) http.Handler {
	if s.cfg.Paywall == nil {
		s.unpaid = append(s.unpaid, offer.ID)
		return h
	}
	return s.cfg.Paywall.Gate(offer, h)
}

// errorMappers translate domain errors into statuses and detail messages.
// Each service file contributes one; the first that recognises an error wins.
func (s *Server) errorMappers() []func(error) (int, string, bool) {
	return []func(error) (int, string, bool){
		nicheStatus, snapshotStatus, claimsStatus, commerceStatus,
	}
}

// writeError answers with the status and body for err. Validation errors
// must already carry their loc prefix.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ve *shapes.ValidationError
	if errors.As(err, &ve) {
		httpjson.Write(w, http.StatusUnprocessableEntity, ve)
		return
	}
	if rf, ok := sell.Refuse(err); ok {
		writeRefusal(w, rf)
		return
	}
	status, msg := s.status(r.Context(), err, "path", r.URL.Path)
	if status == statusClientClosed {
		w.WriteHeader(status)
		return
	}
	if ra := snapshotRetryAfter(err); ra != "" && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", ra)
	}
	httpjson.Detail(w, status, msg)
}

// refusalDetail is the detail of a refusal's body.
func refusalDetail(rf sell.Refusal) string {
	switch b := rf.Body.(type) {
	case httpjson.DetailBody:
		return b.Detail
	case sell.NicheLocked:
		return b.Detail
	case sell.NicheQuotaBody:
		return b.Detail
	}
	return http.StatusText(rf.Status)
}

// writeRefusal writes a refusal of the application (sell.Refuse).
func writeRefusal(w http.ResponseWriter, rf sell.Refusal) {
	hd := w.Header()
	if rf.RetryAfter > 0 {
		hd.Set("Retry-After", strconv.Itoa(rf.RetryAfter))
	}
	if rf.Authenticate != "" {
		hd.Set("WWW-Authenticate", rf.Authenticate)
	}
	if rf.NoStore {
		hd.Set("Cache-Control", "no-store")
	}
	httpjson.Write(w, rf.Status, rf.Body)
}

// Status returns the HTTP status and detail the HTTP routes give for err
// (see writeError), without writing anything: transports that are not
// HTTP routes (MCP, A2A) report errors with it.
func (s *Server) Status(ctx context.Context, err error) (int, string) {
	var re *claims.RequestError
	if errors.As(err, &re) {
		return http.StatusUnprocessableEntity, re.Msg
	}
	return s.status(ctx, err)
}

// statusClientClosed is what proxies log for a request whose client went
// away; nothing is written for it.
const statusClientClosed = 499

// status is the one mapping of errors to statuses: the services' error
// mappers, then deadlines and cancellation, else 500 (logged with attrs).
func (s *Server) status(ctx context.Context, err error, attrs ...any) (int, string) {
	if rf, ok := sell.Refuse(err); ok {
		return rf.Status, refusalDetail(rf)
	}
	for _, m := range s.errorMappers() {
		if status, msg, ok := m(err); ok {
			if status >= 500 {
				s.log.WarnContext(ctx, "request failed", append(attrs, "status", status, "err", err)...)
			}
			return status, msg
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "The request timed out"
	case errors.Is(err, context.Canceled):
		return statusClientClosed, "The request was canceled"
	}
	s.log.ErrorContext(ctx, "internal error", append(attrs, "err", err)...)
	return http.StatusInternalServerError, "Internal Server Error"
}
