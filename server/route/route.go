// Package route holds the routing table of the HTTP server and the seam
// through which the optional mounts (the MCP and A2A endpoints of
// server/agents, the discovery documents of package discovery) add
// routes to it: a Mount builds its routes over a Host, the interface the
// server implements, so that neither the mounts nor the documents import
// package server.
//
// The table is the one description of what is served: the router, the
// capability list and every discovery document are generated from it,
// and each route states its request and response shapes beside its
// handler (Body, Query, Response).
package route

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
)

// Route is one operation of the routing table. Capabilities, discovery
// documents and the router are all generated from the table.
type Route struct {
	// ID names the operation, e.g. "niches.list", "claims.verify.deep".
	ID string
	// Summary is one sentence for capabilities and discovery documents.
	Summary string
	// Status is the lifecycle label, e.g. "stable", "paid-preview".
	Status string
	// Method is the HTTP method (GET routes also answer HEAD).
	Method string
	// Path is the canonical pattern, e.g. "/v1/niches/{niche_id}".
	// A {name} segment matches one non-empty segment, available to the
	// handler as r.PathValue(name).
	Path string
	// Prefixes are service prefixes under which Path is also served, e.g.
	// "/claim-verification" serves "/claim-verification/v1/...".
	Prefixes []string
	// Aliases are further full patterns served by the same handler
	// (legacy paths). They are not listed as separate operations.
	Aliases []string
	// Handler serves the operation.
	Handler http.Handler
	// Offer is set on paid operations (discovery documents read it).
	Offer *payment.Offer
	// InputSchema is the JSON Schema of a request that is not a shapes
	// body (the A2A SendMessage params), for the discovery documents.
	InputSchema json.RawMessage
	// Tools are the tools an MCP endpoint serves, for the discovery
	// documents.
	Tools []Tool
	// Body names the shapes type of the JSON request body, if any.
	Body string
	// Query names the shapes type of the query parameters, if any.
	Query string
	// Response is the shape of the success answer, for the discovery
	// documents (nil: none published).
	Response *Response
	// MaxBodyBytes overrides the server's body limit for this route.
	MaxBodyBytes int64
	// Admin marks curator/operator operations (admin key required); they
	// are listed in capabilities but left out of public discovery documents.
	Admin bool
	// Page marks a page for people (HTML, package pages): it is left out
	// of the capability list and the discovery documents. A page may share
	// its method and pattern with an operation: it then answers the
	// requests whose Accept header ranks text/html above application/json
	// (browsers), and the operation answers every other request.
	Page bool
	// NotFound marks the page a browser gets for a path no route serves
	// (Page must be set too; its Path is not served). At most one.
	NotFound bool
}

// Published reports whether the route is an operation of the public
// discovery documents (neither an admin operation nor a page).
func (rt *Route) Published() bool { return !rt.Admin && !rt.Page }

// Response is the shape of a route's success answer: a schema name and a
// value of the Go type the handler writes (its JSON Schema is reflected
// from it).
type Response struct {
	Name  string
	Value any
}

// Patterns returns every pattern the route is served under: the canonical
// path, the path under each prefix, then the aliases.
func (rt *Route) Patterns() []string {
	out := []string{rt.Path}
	for _, p := range rt.Prefixes {
		out = append(out, strings.TrimRight(p, "/")+rt.Path)
	}
	return append(out, rt.Aliases...)
}

// Service keys of the discovery documents.
const (
	ClaimsServiceKey = "claim-verification"
	NicheServiceKey  = "niche-discovery"
)

// Tool is one MCP tool as the discovery documents describe it.
type Tool struct {
	// Name is the tool name (tools/list).
	Name string
	// Service is the key of the service whose documents list the tool
	// ("claim-verification", "niche-discovery").
	Service string
	// Summary is its one-sentence manifest summary.
	Summary string
	// InputSchema and OutputSchema are the schemas tools/list publishes
	// (OutputSchema nil when none).
	InputSchema, OutputSchema json.RawMessage
	// Idempotent is the tool's idempotentHint.
	Idempotent bool
	// Offer is what a paid call (or the paid mode) costs; nil when free.
	Offer *payment.Offer
	// Timeout bounds a call (0: not published).
	Timeout time.Duration
}

// A Mount adds routes built over the host's services. Routes is called
// once, after the services' routes are in h.Routes.
type Mount interface {
	Routes(h Host) ([]*Route, error)
}

// Host is what a Mount sees of the server it is mounted in.
type Host interface {
	// Routes returns the routing table built so far (shared; do not
	// modify).
	Routes() []*Route
	// App is the application the server sells.
	App() *sell.App
	// Service names the server (capabilities, documents, MCP).
	Service() string
	// PublicBaseURL is the absolute URL clients reach the server at, ""
	// when URLs are built from each request.
	PublicBaseURL() string
	// MaxBodyBytes is the server's request body limit.
	MaxBodyBytes() int64
	// Paywall is the server's HTTP paywall (nil when none).
	Paywall() httpgate.Paywall
	// Paid returns h sold for offer through the paywall.
	Paid(offer payment.Offer, h http.Handler) http.Handler
	// Status is the server's one mapping of an error to its HTTP status
	// and detail.
	Status(ctx context.Context, err error) (int, string)
	// ClaimsPrefix is the claim verification service prefix.
	ClaimsPrefix() string
	// EvidencePath is the path of a verification's evidence bundle, ""
	// when bundles are not served.
	EvidencePath(verificationID string) string
	// Logger is the server's logger (never nil).
	Logger() *slog.Logger
}
