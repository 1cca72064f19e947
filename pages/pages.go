package pages

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/websession"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/snapshot"
)

//go:embed templates/*.html
var defaultTemplates embed.FS

//go:embed assets/pages.css
var defaultStylesheet []byte

//go:embed assets/receipt.js
var receiptScript []byte

// Options configure Pages. Nil means defaults.
type Options struct {
	// SiteName is shown in every page's header and title. Empty means the
	// server's service name.
	SiteName string
	// Stylesheet replaces the default stylesheet (served at
	// /assets/pages.css). Empty keeps the default; DefaultStylesheet
	// returns it, for a host that extends rather than replaces it.
	Stylesheet []byte
	// Templates are parsed after the default templates: every
	// {{define "name"}} in its *.html files replaces the default template
	// of that name (see the README for the names). Nil keeps the
	// defaults.
	Templates fs.FS
	// Snapshots serves the captured pages (/captures/{snapshot_id}); nil
	// means signals and evidence link to no capture page.
	Snapshots *snapshot.Service
	// TrustedOrigins are origins (scheme://host[:port]) whose cross-origin
	// POSTs are allowed, for a host behind a proxy that rewrites Host.
	TrustedOrigins []string
	// PublicBaseURL is the absolute URL the server is reached at; empty
	// means the server's (route.Host.PublicBaseURL), else the request's
	// scheme and Host.
	PublicBaseURL string
}

// DefaultStylesheet returns the default stylesheet.
func DefaultStylesheet() []byte { return bytes.Clone(defaultStylesheet) }

// Pages is the route.Mount of the pages. Build it with New.
type Pages struct {
	opts Options
	tmpl *template.Template
	css  []byte
}

var _ route.Mount = (*Pages)(nil)

// New parses the templates and returns the mount.
func New(o *Options) (*Pages, error) {
	p := &Pages{}
	if o != nil {
		p.opts = *o
	}
	t, err := template.New("pages").Funcs(funcs).ParseFS(defaultTemplates, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("pages: default templates: %w", err)
	}
	if p.opts.Templates != nil {
		if t, err = t.ParseFS(p.opts.Templates, "*.html"); err != nil {
			return nil, fmt.Errorf("pages: Options.Templates: %w", err)
		}
	}
	for _, name := range templateNames {
		if t.Lookup(name) == nil {
			return nil, fmt.Errorf("pages: template %q is missing", name)
		}
	}
	p.tmpl = t
	p.css = defaultStylesheet
	if len(p.opts.Stylesheet) > 0 {
		p.css = p.opts.Stylesheet
	}
	return p, nil
}

// templateNames are the pages' templates (each may be replaced).
var templateNames = []string{"landing", "list", "search", "evaluation", "account", "verification", "token-form", "capture", "error"}

// site is what the handlers know of the server they are mounted in,
// resolved once from the routing table.
type site struct {
	p   *Pages
	h   route.Host
	app *sell.App
	log *slog.Logger
	// name is the site name; nichePrefix the niche service prefix ("" when
	// the catalogue is not served); claimsPrefix the claims prefix ("" when
	// verifications are not served).
	name, nichePrefix, claimsPrefix string
	// jwksPath, successPath and subsPrefix are the receipt keys, the
	// checkout success page and the subscription routes' prefix.
	jwksPath, successPath, subsPrefix string
	csrf                              *http.CrossOriginProtection
	// cats caches the category filters (categories).
	catMu  sync.Mutex
	cats   []string
	catsAt time.Time
}

// Routes implements route.Mount.
func (p *Pages) Routes(h route.Host) ([]*route.Route, error) {
	s := &site{p: p, h: h, app: h.App(), log: h.Logger(), name: p.opts.SiteName, csrf: http.NewCrossOriginProtection()}
	if s.name == "" {
		s.name = h.Service()
	}
	for _, o := range p.opts.TrustedOrigins {
		if err := s.csrf.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("pages: trusted origin: %w", err)
		}
	}
	s.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.errorPage(w, r, http.StatusForbidden, "Request refused", "This form was sent from another site, so it was not accepted. Open the page again and send it from there.")
	}))
	for _, rt := range h.Routes() {
		switch rt.ID {
		case "niche.list":
			if len(rt.Prefixes) > 0 {
				s.nichePrefix = strings.TrimRight(rt.Prefixes[0], "/")
			} else {
				s.nichePrefix = "/"
			}
		case "claims.verification.get":
			s.claimsPrefix = h.ClaimsPrefix()
		case "commerce.jwks":
			s.jwksPath = rt.Path
			for _, pat := range rt.Patterns() {
				if strings.HasPrefix(pat, h.ClaimsPrefix()+"/") {
					s.jwksPath = pat // beside the verification pages
				}
			}
		case "subscription.success":
			if len(rt.Prefixes) > 0 {
				s.subsPrefix = strings.TrimRight(rt.Prefixes[0], "/")
				s.successPath = s.subsPrefix + rt.Path
			} else {
				s.successPath = rt.Path
			}
		}
	}
	if s.nichePrefix == "/" {
		s.nichePrefix = ""
	}
	page := func(id, summary, method, path string, h http.HandlerFunc) *route.Route {
		var hh http.Handler = h
		if method == http.MethodPost {
			hh = s.csrf.Handler(h)
		}
		return &route.Route{ID: id, Summary: summary, Status: "stable", Method: method, Path: path, Page: true, Handler: hh, MaxBodyBytes: 16 << 10}
	}
	routes := []*route.Route{
		page("pages.landing", "Landing page for people: the services, their prices and how to pay.", http.MethodGet, "/", s.landing),
		{ID: "pages.not-found", Summary: "The page a browser gets for a path nothing serves.", Status: "stable", Method: http.MethodGet, Path: "/",
			Page: true, NotFound: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.errorPage(w, r, http.StatusNotFound, "Page not found", "Nothing is served at this address.")
			})},
		{ID: "pages.assets.css", Summary: "Stylesheet of the pages.", Status: "stable", Method: http.MethodGet, Path: "/assets/pages.css", Page: true,
			Handler: asset("text/css; charset=utf-8", p.css)},
	}
	if s.app.Niche != nil {
		np := s.nichePrefix
		routes = append(routes,
			page("pages.list", "The niche catalogue, by score or recency, with category filters.", http.MethodGet, np+"/browse", s.list),
			page("pages.search", "Search the niche catalogue (the API's word forms and free quota).", http.MethodGet, np+"/browse/search", s.search),
			page("pages.evaluation", "One niche evaluation: the preview, or the full evaluation for subscribers.", http.MethodGet, np+"/browse/{niche_id}", s.evaluation),
		)
		if s.app.Subscriptions != nil {
			routes = append(routes,
				page("pages.account", "Subscriber account: sign in with a token, status, billing portal, sign out.", http.MethodGet, np+"/account", s.account),
				page("pages.account.signin", "Sign in with a subscriber token.", http.MethodPost, np+"/account/sign-in", s.signIn),
				page("pages.account.signout", "Sign out.", http.MethodPost, np+"/account/sign-out", s.signOut),
				page("pages.account.portal", "Open the billing portal.", http.MethodPost, np+"/account/portal", s.portal),
				page("pages.account.subscribe", "Start a subscription checkout.", http.MethodPost, np+"/account/subscribe", s.subscribe),
			)
		}
	}
	if s.claimsPrefix != "" {
		vp := s.claimsPrefix + "/v1/claims/verifications/{verification_id}"
		routes = append(routes,
			page("pages.verification", "A verification as a page: verdict, facts, evidence and the receipt checked.", http.MethodGet, vp, s.verification),
			page("pages.verification.form", "The verification page, for an order token sent with a form.", http.MethodPost, vp, s.verification),
			&route.Route{ID: "pages.assets.receipt", Summary: "The receipt check of the verification page (WebCrypto Ed25519).", Status: "stable",
				Method: http.MethodGet, Path: "/assets/receipt.js", Page: true, Handler: asset("text/javascript; charset=utf-8", receiptScript)},
		)
	}
	if p.opts.Snapshots != nil {
		routes = append(routes, page("pages.capture", "A captured page as text, with a quote marked.", http.MethodGet, "/captures/{snapshot_id}", s.capture))
	}
	return routes, nil
}

// asset serves a static file (cached for an hour).
func asset(ctype string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

// csp is the policy of every page: nothing but this origin's stylesheet,
// the receipt script and its key fetch, and forms to this origin.
const csp = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// view is what every template gets.
type view struct {
	Title string
	Site  string
	// Nav are the header's links.
	Links     navLinks
	SignedIn  bool
	Canonical string
	// Data is the page's own data.
	Data any
	// Script is the path of a script to load ("" for none).
	Script string
}

// navLinks are the paths the layout links to ("" when not served).
type navLinks struct {
	Home, Catalogue, Search, Account, CSS string
}

func (s *site) nav() navLinks {
	l := navLinks{Home: "/", CSS: "/assets/pages.css"}
	if s.app.Niche != nil {
		l.Catalogue, l.Search = s.nichePrefix+"/browse", s.nichePrefix+"/browse/search"
		if s.app.Subscriptions != nil {
			l.Account = s.nichePrefix + "/account"
		}
	}
	return l
}

// render executes a template into a page.
func (s *site) render(w http.ResponseWriter, r *http.Request, status int, name, title string, signedIn bool, data any) {
	v := view{Title: title, Site: s.name, Links: s.nav(), SignedIn: signedIn, Data: data}
	if name == "verification" {
		v.Script = "/assets/receipt.js"
	}
	var buf bytes.Buffer
	if err := s.p.tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		s.log.ErrorContext(r.Context(), "pages: render", "template", name, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	httpjson.HTMLPage(w, r, status, buf.Bytes(), csp)
}

// errorData is the error page's data.
type errorData struct {
	Status  int
	Heading string
	Message string
	// Links are where to go next.
	Links []link
}

type link struct{ Href, Text string }

// errorPage renders an error as a page.
func (s *site) errorPage(w http.ResponseWriter, r *http.Request, status int, heading, msg string, links ...link) {
	if len(links) == 0 {
		links = []link{{Href: "/", Text: "Home"}}
		if s.app.Niche != nil {
			links = append(links, link{Href: s.nichePrefix + "/browse", Text: "Browse the catalogue"})
		}
	}
	s.render(w, r, status, "error", heading, s.signedIn(r), errorData{Status: status, Heading: heading, Message: msg, Links: links})
}

// fail renders err as a page with the server's status and detail.
func (s *site) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	status, msg := s.h.Status(r.Context(), err)
	if rf, ok := sell.Refuse(err); ok && rf.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(rf.RetryAfter))
	}
	s.errorPage(w, r, status, http.StatusText(status), msg)
}

// session returns the browser's session secret and its subscription
// status when it is signed in (nil, "" otherwise; a stale cookie is
// cleared).
func (s *site) session(w http.ResponseWriter, r *http.Request) (string, *niche.SubscriberStatus) {
	secret := websession.Read(r)
	if secret == "" || s.app.Subscriptions == nil {
		return "", nil
	}
	st, err := s.app.Subscriptions.Session(r.Context(), secret)
	if err != nil {
		if errors.Is(err, niche.ErrSessionNotFound) && w != nil {
			websession.Clear(w, r)
		} else if !errors.Is(err, niche.ErrSessionNotFound) {
			s.log.WarnContext(r.Context(), "pages: session lookup failed", "err", err)
		}
		return "", nil
	}
	return secret, st
}

// signedIn reports whether the request carries a live session.
func (s *site) signedIn(r *http.Request) bool {
	secret, _ := s.session(nil, r)
	return secret != ""
}

// caller is the catalogue's caller for r: the session (when signed in and
// entitled) and the client address for the free quota.
func (s *site) caller(r *http.Request, secret string, st *niche.SubscriberStatus) sell.Caller {
	c := sell.Caller{Address: s.app.Niche.ClientAddress(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))}
	if secret != "" && st != nil && st.Entitled {
		c.Session = secret
	}
	return c
}

// baseURL is the absolute URL of the server for r.
func (s *site) baseURL(r *http.Request) string {
	base := s.p.opts.PublicBaseURL
	if base == "" {
		base = s.h.PublicBaseURL()
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return strings.TrimRight(base, "/")
}

// price formats micro-USD as "USD 0.05".
func price(m int64) string { return "USD " + payment.MicroUSD(m).String() }

var funcs = template.FuncMap{
	"date": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2 Jan 2006")
		case *time.Time:
			if v == nil || v.IsZero() {
				return ""
			}
			return v.UTC().Format("2 Jan 2006")
		}
		return ""
	},
	"datetime": func(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") },
	"percent":  func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + " %" },
	"human":    func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"deref": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
	"add": func(a, b int) int { return a + b },
	// dict builds a map from key, value pairs (for sub-templates).
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			if k, ok := kv[i].(string); ok {
				m[k] = kv[i+1]
			}
		}
		return m
	},
}
