package discovery

import (
	"bytes"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
)

// The index: GET / and GET {prefix} of each service answer what is
// mounted, so that a person opening the server in a browser, or an agent
// given only its address, finds the services, the capability list, the
// discovery documents, the MCP and A2A endpoints and the documentation.
//
// Everything in it is read from the routing table when a request comes, so
// it never lists a route that is not served nor misses one that is. The
// answer is negotiated on Accept: JSON (ServiceIndex in the OpenAPI
// documents) unless the client ranks text/html above application/json, as
// browsers do, then a small inert HTML page (html/template escaping,
// nosniff, a CSP that allows no script). The negotiation is written here
// rather than taken from a library: the one in the module graph
// (munnerz/goautoneg) ignores q=0 and breaks ties by the header's order,
// and two media types need only the rule of RFC 9110 §12.5.1 (each type
// takes the q of its most specific matching range).
//
// Links are absolute URLs on the public base URL when one is configured,
// else absolute-path references (with the prefix a host stripped in front
// of the handler, if any), which a client resolves against the index's own
// URL.

// DefaultRepository is the source repository the index links to for the
// documentation and the paying client when Documents.Repository is
// empty.
const DefaultRepository = "https://github.com/assaykit/assay"

// ServiceIndex is the JSON index.
type ServiceIndex struct {
	// Service names the server (Config.Service) and Version its version.
	Service string `json:"service"`
	Version string `json:"version"`
	// Services are the mounted services (only the one asked for at a
	// service prefix).
	Services []IndexService `json:"services"`
	// Links are the server-wide entry points: capabilities, the origin
	// root's discovery documents, MCP, health, documentation.
	Links []IndexLink `json:"links"`
}

// IndexService is one mounted service.
type IndexService struct {
	Key     string      `json:"key"`
	Name    string      `json:"name"`
	Summary string      `json:"summary"`
	URL     string      `json:"url"`
	Links   []IndexLink `json:"links"`
}

// IndexLink is one entry point: its relation, URL, method (omitted for
// GET) and what it is.
type IndexLink struct {
	Rel    string `json:"rel"`
	Href   string `json:"href"`
	Method string `json:"method,omitempty"`
	Title  string `json:"title"`
}

// indexRels names the routes the index links to, by route id, and the
// relation each is listed under; discovery documents ("discovery.<doc>"
// and "discovery.<service>.<doc>") are named by their document.
var indexRels = map[string]string{
	"capabilities":              "capabilities",
	"mcp":                       "mcp",
	"a2a":                       "a2a",
	"health.live":               "health",
	"health.ready":              "readiness",
	"commerce.jwks":             "receipt-keys",
	"discovery." + docOpenAPI:   "openapi",
	"discovery." + docManifest:  "agent-service",
	"discovery." + docX402:      "x402",
	"discovery." + docMCP:       "mcp-server",
	"discovery." + docAgentCard: "agent-card",
}

// mountedService is a service found in the routing table.
type mountedService struct {
	key, prefix string
	text        ServiceText
}

// mountedServices finds the services in table, primary first: a service is
// mounted when a public route of its family is served under a prefix, and
// that route's first prefix is the service's.
func mountedServices(table []*route.Route, texts map[string]ServiceText) []mountedService {
	var out []mountedService
	for _, f := range serviceFamilies() {
		for _, r := range table {
			if !strings.HasPrefix(r.ID, f.family) || !r.Published() || len(r.Prefixes) == 0 {
				continue
			}
			if p := strings.TrimRight(r.Prefixes[0], "/"); p != "" {
				sv := mountedService{key: f.key, prefix: p, text: f.text()}
				if o, ok := texts[f.key]; ok {
					sv.text = mergeText(sv.text, o)
				}
				out = append(out, sv)
			}
			break
		}
	}
	return out
}

// indexRoutes returns GET / (and, through its prefixes, GET {prefix}/ and
// GET {prefix} of every mounted service). It runs before the discovery
// builder, so the documents describe it; its handler reads the whole table
// when it answers.
func indexRoutes(s route.Host, cfg Documents) []*route.Route {
	ix := &index{s: s, cfg: cfg}
	var prefixes, aliases []string
	for _, sv := range mountedServices(s.Routes(), cfg.Services) {
		if !slices.Contains(prefixes, sv.prefix) { // services may share one
			prefixes = append(prefixes, sv.prefix)
			aliases = append(aliases, sv.prefix)
		}
	}
	return []*route.Route{{ID: "index", Summary: "Index of this server: its services, capabilities, discovery documents, agent endpoints and documentation (HTML for browsers).",
		Status: "stable", Method: http.MethodGet, Path: "/", Prefixes: prefixes, Aliases: aliases,
		Handler: http.HandlerFunc(ix.serve)}}
}

// index answers the index from the routing table at request time.
type index struct {
	s   route.Host
	cfg Documents
}

func (ix *index) serve(w http.ResponseWriter, r *http.Request) {
	body := ix.indexFor(r)
	w.Header().Set("Vary", "Accept")
	if !prefersHTML(r.Header.Values("Accept")) {
		w.Header().Set("Cache-Control", "no-cache")
		httpjson.Write(w, http.StatusOK, body)
		return
	}
	var buf bytes.Buffer
	if err := indexPage.Execute(&buf, body); err != nil {
		ix.s.Logger().ErrorContext(r.Context(), "index page", "err", err)
		httpjson.Detail(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	httpjson.HTMLPage(w, r, http.StatusOK, buf.Bytes(), "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// indexFor builds the index answered at r's path: every service at the
// root, one service at its prefix.
func (ix *index) indexFor(r *http.Request) ServiceIndex {
	base := strings.TrimRight(ix.cfg.PublicBaseURL, "/")
	if base == "" {
		base = strings.TrimRight(ix.s.PublicBaseURL(), "/")
	}
	if base == "" {
		// The prefix a host stripped (http.StripPrefix) before us.
		base = strings.TrimSuffix(httpjson.ExternalPath(r), r.URL.Path)
	}
	services := mountedServices(ix.s.Routes(), ix.cfg.Services)
	if at := strings.TrimRight(r.URL.Path, "/"); at != "" {
		// A service prefix: the services under it (usually one).
		services = slices.DeleteFunc(slices.Clone(services), func(sv mountedService) bool { return sv.prefix != at })
	}
	out := ServiceIndex{Service: ix.s.Service(), Version: sell.Version, Services: []IndexService{}, Links: []IndexLink{}}
	for _, sv := range services {
		out.Services = append(out.Services, IndexService{Key: sv.key, Name: sv.text.Name, Summary: sv.text.Summary,
			URL: base + sv.prefix, Links: ix.indexLinks(base, sv.prefix, sv.key, nil)})
	}
	out.Links = append(ix.indexLinks(base, "", "", mountedServices(ix.s.Routes(), ix.cfg.Services)), ix.docLinks()...)
	return out
}

// serverWide are the routes of the whole server, linked once at the root
// although they are served under every service prefix too.
var serverWide = map[string]bool{"capabilities": true, "health.live": true, "health.ready": true}

// indexLinks lists the routes of indexRels served under prefix (key names
// the service's discovery documents), or at the origin root when prefix is
// "": those no service of services owns.
func (ix *index) indexLinks(base, prefix, key string, services []mountedService) []IndexLink {
	var out []IndexLink
	for _, rt := range ix.s.Routes() {
		if !rt.Published() {
			continue
		}
		id := rt.ID
		if doc, ok := strings.CutPrefix(id, "discovery."+key+"."); ok {
			id = "discovery." + doc
		} else if strings.HasPrefix(id, "discovery.") && strings.Count(id, ".") > 1 {
			continue // another service's document, or a service's at the root
		}
		if strings.HasPrefix(id, "mcp.") {
			id = "mcp" // a service prefix's own MCP endpoint
		}
		rel, ok := indexRels[id]
		if !ok || (prefix != "" && serverWide[id]) {
			continue
		}
		for _, p := range rt.Patterns() {
			// A route's pattern belongs to prefix when it is its path there;
			// origin-root links are those no service prefix owns.
			if !strings.HasPrefix(p, prefix+"/") || slices.ContainsFunc(services, func(sv mountedService) bool {
				return strings.HasPrefix(p, sv.prefix+"/")
			}) {
				continue
			}
			l := IndexLink{Rel: rel, Href: base + p, Title: rt.Summary}
			if rt.Method != http.MethodGet {
				l.Method = rt.Method
			}
			out = append(out, l)
			break
		}
	}
	return out
}

// docLinks are the documentation links: the README, and the paying client
// when calls are paid.
func (ix *index) docLinks() []IndexLink {
	repo := strings.TrimRight(ix.cfg.Repository, "/")
	if repo == "" {
		repo = DefaultRepository
	}
	out := []IndexLink{{Rel: "docs", Href: repo + "#readme", Title: "Documentation: quick start, configuration, transports, payments."}}
	switch ix.s.Paywall().(type) {
	case nil, httpgate.Free, *httpgate.Free:
	default:
		out = append(out, IndexLink{Rel: "paying-client", Href: repo + "/tree/main/examples/client",
			Title: "A paying client: answers each 402 with an x402 payment and checks the signed receipt."})
	}
	return out
}

// prefersHTML reports whether the Accept values rank text/html strictly
// above application/json (httpjson.PrefersHTML).
func prefersHTML(accept []string) bool { return httpjson.PrefersHTML(accept) }

// indexPage renders the index for browsers. html/template escapes every
// value (names, summaries, URLs).
var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Service}} {{.Version}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
code{background:#f3f3f3;padding:0 .2rem}li{margin:.2rem 0}.m{color:#555;font-size:.9rem}</style></head><body>
<h1>{{.Service}} <span class="m">{{.Version}}</span></h1>
<p>Services for agents and apps. Agents: request this address with <code>Accept: application/json</code> for this index as JSON, or start from the capability list and the discovery documents below.</p>
{{range .Services}}<h2><a href="{{.URL}}">{{.Name}}</a></h2>
<p>{{.Summary}}</p>
<ul>{{range .Links}}<li><a href="{{.Href}}">{{.Rel}}</a>{{if .Method}} <span class="m">({{.Method}})</span>{{end}}: {{.Title}}</li>
{{end}}</ul>
{{end}}<h2>This server</h2>
<ul>{{range .Links}}<li><a href="{{.Href}}">{{.Rel}}</a>{{if .Method}} <span class="m">({{.Method}})</span>{{end}}: {{.Title}}</li>
{{end}}</ul>
</body></html>
`))

// alsoServedAs are the media types a route answers besides JSON when the
// Accept header asks for them (the documents list them next to its JSON
// schema).
var alsoServedAs = map[string][]string{"index": {"text/html"}}
