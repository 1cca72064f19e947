package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/shapes"
)

// Niche discovery over HTTP. Choices where the interface document says
// "not shown":
//
//   - Every route is served at its canonical path and under the service
//     prefix (default /niche-discovery).
//   - List items and free search results are previews (an allow-list
//     projection with an "unlock" block naming the subscription checkout
//     and the pay-per-call route and price); unknown, draft and withdrawn
//     ids are all 404 {"detail":"Niche not found"}.
//   - GET /v1/niches/{niche_id} checks existence first: published ids are
//     public anyway (list, preview), and unpublished ones answer exactly
//     like unknown ones, so nothing leaks. Without a valid subscriber
//     token ("Authorization: Bearer nd_…") or unlock token
//     ("x-niche-paid-call", from a pay-per-call answer) it answers 401 with
//     WWW-Authenticate: Bearer and the unlock block. An x-niche-paid-call
//     value that is malformed, forged, expired or for another niche is
//     ignored (treated as absent).
//   - GET /v1/niches/{niche_id}/pay-per-call returns the full evaluation
//     plus an "access" object, and an unlock token in X-Niche-Paid-Call
//     (also in access.unlockToken) valid for that niche only.
//   - GET /v1/search: previews for anonymous callers, matched and ranked
//     on what previews show (title, problem teaser, buyer, category) so
//     that no word of the hidden text can be probed; full evaluations,
//     matched on the full text, for subscribers. Anonymous callers get
//     FreeSearchesPerDay searches per UTC day (default 3; 0: none, 401;
//     UnlimitedSearches: no quota), counted per client address (from
//     X-Forwarded-For only when the peer is a trusted proxy), then 429
//     with Retry-After until UTC midnight. Subscribers are unlimited unless
//     SubscriberSearchesPerDay is set. Only searches that find something
//     are counted: one that finds nothing (a query without any letter or
//     digit included) or fails gives its use back, and a malformed one
//     (422) is refused before counting. The 429 body says when the quota
//     resets (resetsAt).
//   - GET /v1/search/pay-per-call (default USD 0.05) returns full results
//     matched on the full text, without quota; an empty catalogue is 503
//     before any charge.
//   - GET /v1/niches accepts q as a text filter (every word must match),
//     ordered by sort; /v1/search ranks by relevance first. The filter is
//     a search: for anonymous callers it matches what previews show and
//     counts against the same daily quota as /v1/search (so the list is
//     no way around it); with a subscriber token it matches the full text
//     (queryScope says which). Without q the list is free and unlimited.
//     Items are previews either way.

// Search quotas (NicheConfig.FreeSearchesPerDay).
const (
	// DefaultFreeSearchesPerDay is the free quota when
	// NicheConfig.FreeSearchesPerDay is nil.
	DefaultFreeSearchesPerDay = sell.DefaultFreeSearchesPerDay
	// UnlimitedSearches as the value of NicheConfig.FreeSearchesPerDay
	// turns the free quota off: anonymous searches are not counted.
	UnlimitedSearches = sell.UnlimitedSearches
)

const (
	defaultNichePrefix      = "/niche-discovery"
	defaultNicheImportBytes = 32 << 20
	nicheNetwork            = "eip155:8453"
)

// NicheConfig configures niche discovery. The zero value mounts nothing.
type NicheConfig struct {
	// Engine is the catalogue. Nil mounts no niche route.
	Engine *niche.Engine
	// Subscribers checks "Authorization: Bearer nd_…" tokens. Nil means
	// no subscriber access.
	Subscribers niche.Subscribers
	// Unlock signs and verifies x-niche-paid-call tokens (its key must be
	// used for nothing else). Nil means pay-per-call answers carry no
	// token and x-niche-paid-call is ignored.
	Unlock *niche.UnlockSigner
	// Prefix is the service prefix; "" means "/niche-discovery", "/"
	// serves the canonical paths only.
	Prefix string
	// FreeSearchesPerDay is the number of full-text searches an anonymous
	// caller (a client address) may make per UTC day: GET /v1/search and
	// GET /v1/niches with a q that has a letter or digit count alike.
	// Nil means 3 (DefaultFreeSearchesPerDay). A pointer to 0 means no
	// free search: such requests answer 401 naming the subscription and
	// the paid search. A pointer to UnlimitedSearches (-1) means no quota.
	// Other negative values are refused by New. For example
	// FreeSearchesPerDay: new(10).
	FreeSearchesPerDay *int
	// SubscriberSearchesPerDay is the subscriber quota per UTC day; 0
	// (or negative) means unlimited.
	SubscriberSearchesPerDay int
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	// Empty means the TCP peer address is the client.
	TrustedProxies []netip.Prefix
	// QuotaKey pseudonymises client addresses in the quota table (HMAC).
	// Nil means a random per-process key (quotas are then not shared
	// between instances): use niche.LoadOrCreateKey with
	// niche.QuotaKeyMetaName.
	QuotaKey []byte
	// CheckoutPath is the subscription checkout named in unlock blocks
	// (a path or an absolute URL). "" means the checkout route of this
	// server's subscription routes (Config.Subscriptions), under their
	// first prefix — by default the niche prefix itself, see
	// SubscriptionConfig.Prefixes; when this server mounts no
	// subscription routes, unlock blocks name no subscription.
	CheckoutPath string
	// ImportMaxBytes bounds the bulk import body; 0 means 32 MiB.
	ImportMaxBytes int64
}

// resolvedPrefix returns the niche service prefix without a trailing
// slash ("" for the canonical paths only).
func (c *NicheConfig) resolvedPrefix() (string, error) {
	p := c.Prefix
	if p == "" {
		p = defaultNichePrefix
	}
	p = strings.TrimRight(p, "/")
	if p != "" && !strings.HasPrefix(p, "/") {
		return "", errorf("niche: prefix %q must start with /", c.Prefix)
	}
	return p, nil
}

// nicheService holds the resolved configuration and the catalogue as sold
// (sell.Niche).
type nicheService struct {
	s      *Server
	cfg    NicheConfig
	prefix string
	sell   *sell.Niche
}

// nicheRoutes returns the routes of niche discovery.
func (s *Server) nicheRoutes() ([]*Route, error) {
	c := s.cfg.Niche
	if c.Engine == nil {
		return nil, nil
	}
	prefix, err := c.resolvedPrefix()
	if err != nil {
		return nil, err
	}
	n := &nicheService{s: s, cfg: c, prefix: prefix}
	s.niche = n
	if n.cfg.CheckoutPath == "" && s.cfg.Subscriptions.Service != nil {
		// The subscription routes are served at the root and under each
		// of their prefixes; name the one under the first prefix.
		n.cfg.CheckoutPath = "/v1/subscription/checkout"
		if pre := s.subscriptionPrefixes(); len(pre) > 0 {
			n.cfg.CheckoutPath = strings.TrimRight(pre[0], "/") + n.cfg.CheckoutPath
		}
	}
	if n.cfg.ImportMaxBytes <= 0 {
		n.cfg.ImportMaxBytes = defaultNicheImportBytes
	}
	if c.Unlock != nil && s.cfg.AdminKey != "" && c.Unlock.SameKey([]byte(s.cfg.AdminKey)) {
		return nil, errorf("niche: the unlock key must not be the admin key")
	}
	n.sell, err = sell.NewNiche(c.Engine, s.cfg.Catalogue, &sell.NicheOptions{Subscribers: c.Subscribers, Unlock: c.Unlock,
		Ledger: s.ledger(), FreeSearchesPerDay: c.FreeSearchesPerDay, SubscriberSearchesPerDay: c.SubscriberSearchesPerDay,
		QuotaKey: c.QuotaKey, TrustedProxies: c.TrustedProxies, Prefix: prefix, CheckoutPath: n.cfg.CheckoutPath, Logger: s.log})
	if err != nil {
		return nil, errorf("niche: %v", err)
	}
	s.app.Niche = n.sell
	var prefixes []string
	if n.prefix != "" {
		prefixes = []string{n.prefix}
	}
	evalOffer, searchOffer := n.sell.EvaluationOffer(), n.sell.SearchOffer()
	pub := func(id, summary, path, query string, h http.HandlerFunc) *Route {
		return &Route{ID: id, Summary: summary, Status: "stable", Method: "GET", Path: path, Prefixes: prefixes, Query: query, Handler: h}
	}
	admin := func(id, summary, method, path, body, query string, h http.HandlerFunc) *Route {
		return &Route{ID: id, Summary: summary, Status: "stable", Method: method, Path: path, Prefixes: prefixes,
			Body: body, Query: query, Handler: s.requireAdmin(h), Admin: true}
	}
	importRoute := admin("niche.admin.import", "Bulk import signals and drafts from JSON Lines.", "POST",
		"/v1/admin/niche/import", "", "", n.adminImport)
	importRoute.MaxBodyBytes = n.cfg.ImportMaxBytes
	routes := []*Route{
		pub("niche.list", "List published niche evaluations (previews) by score or recency, optionally filtered by text and category.",
			"/v1/niches", "NicheListQuery", n.list),
		pub("niche.get", "Read a full niche evaluation with a subscription or a pay-per-call unlock token.",
			"/v1/niches/{niche_id}", "", n.get),
		pub("niche.preview", "Read the free preview of a niche evaluation.", "/v1/niches/{niche_id}/preview", "", n.preview),
		{ID: "niche.pay-per-call", Summary: "Buy one full niche evaluation (USD " + payment.MicroUSD(evalOffer.AmountMicroUSD).String() + ") and an unlock token for it.",
			Status: "stable", Method: "GET", Path: "/v1/niches/{niche_id}/pay-per-call", Prefixes: prefixes,
			Offer: &evalOffer, Handler: s.Paid(evalOffer, &nichePaidEvaluation{n})},
		pub("niche.search", "Search published niche evaluations by relevance (previews free within a daily quota, full for subscribers).",
			"/v1/search", "NicheSearchQuery", n.search),
		{ID: "niche.search.pay-per-call", Summary: "Search the niche catalogue and get full evaluations, paid per call.",
			Status: "stable", Method: "GET", Path: "/v1/search/pay-per-call", Prefixes: prefixes, Query: "NicheSearchQuery",
			Offer: &searchOffer, Handler: s.Paid(searchOffer, &nichePaidSearch{n})},
		pub("niche.sources", "List the configured signal sources with licence, scope and collection statistics.",
			"/v1/sources", "", n.sources),

		admin("niche.admin.signals.ingest", "Ingest signals (deduplicated by origin and external id).", "POST",
			"/v1/admin/niche/signals", "NicheSignalBatch", "", n.adminIngest),
		admin("niche.admin.signals.list", "List signals by moderation state and origin.", "GET",
			"/v1/admin/niche/signals", "", "NicheSignalListQuery", n.adminSignals),
		admin("niche.admin.signals.get", "Read one signal.", "GET", "/v1/admin/niche/signals/{signal_id}", "", "", n.adminSignal),
		admin("niche.admin.signals.moderate", "Accept, reject or reset a signal.", "POST",
			"/v1/admin/niche/signals/{signal_id}/moderation", "NicheModerationRequest", "", n.adminModerate),
		admin("niche.admin.evaluations.create", "Create a niche evaluation from a NicheDraft (published at once when publish is true).", "POST",
			"/v1/admin/niche/evaluations", "NicheCreateRequest", "", n.adminCreate),
		admin("niche.admin.evaluations.get", "Read an evaluation whatever its status.", "GET",
			"/v1/admin/niche/evaluations/{niche_id}", "", "", n.adminGet),
		admin("niche.admin.evaluations.revise", "Revise an evaluation at its expected revision.", "PUT",
			"/v1/admin/niche/evaluations/{niche_id}", "NicheReviseRequest", "", n.adminRevise),
		admin("niche.admin.evaluations.revisions", "List an evaluation's revisions (who, when, why).", "GET",
			"/v1/admin/niche/evaluations/{niche_id}/revisions", "", "", n.adminRevisions),
		admin("niche.admin.evaluations.publish", "Publish an evaluation (the evidence floor applies).", "POST",
			"/v1/admin/niche/evaluations/{niche_id}/publish", "NicheTransitionRequest", "", n.adminTransition(niche.ActionPublish)),
		admin("niche.admin.evaluations.withdraw", "Withdraw a published evaluation from every public read.", "POST",
			"/v1/admin/niche/evaluations/{niche_id}/withdraw", "NicheTransitionRequest", "", n.adminTransition(niche.ActionWithdraw)),
		importRoute,
	}
	return append(routes, n.evidenceRoute(prefixes)...), nil
}

// nicheStatus maps the service's errors to statuses.
func nicheStatus(err error) (int, string, bool) {
	var nf *niche.NotFoundError
	switch {
	case errors.As(err, &nf):
		return http.StatusNotFound, nf.Error(), true
	case errors.Is(err, niche.ErrNotFound):
		return http.StatusNotFound, "Niche not found", true
	case errors.Is(err, niche.ErrConflict):
		return http.StatusConflict, err.Error(), true
	case errors.Is(err, niche.ErrOperationConflict):
		return http.StatusConflict, "The operation id was already used for a different request", true
	case errors.Is(err, niche.ErrInvalid), errors.Is(err, niche.ErrSignalRefs), errors.Is(err, niche.ErrEvidence):
		return http.StatusUnprocessableEntity, err.Error(), true
	case errors.Is(err, niche.ErrEmptyCatalogue):
		return http.StatusServiceUnavailable, "The niche catalogue is empty", true
	case errors.Is(err, niche.ErrQuotaExceeded):
		return http.StatusTooManyRequests, err.Error(), true
	case errors.Is(err, niche.ErrNotSubscribed):
		return http.StatusUnauthorized, "The subscription token is not active", true
	}
	return 0, "", false
}

// ---- query validation ----

// listQuery decodes and validates the query of the list route: its
// bounds are niche.ListOptions' tags, the engine's own.
func (n *nicheService) listQuery(w http.ResponseWriter, r *http.Request) (*niche.ListOptions, bool) {
	var q niche.ListOptions
	if !n.s.decodeQuery(w, r, &q) {
		return nil, false
	}
	return &q, true
}

// searchQuery decodes and validates the query of the search routes: its
// bounds are niche.SearchOptions' tags, the engine's own.
func (n *nicheService) searchQuery(w http.ResponseWriter, r *http.Request) (*niche.SearchOptions, bool) {
	var q niche.SearchOptions
	if !n.s.decodeQuery(w, r, &q) {
		return nil, false
	}
	return &q, true
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ---- identity ----

// caller is what the request says of its caller: the subscriber token, the
// unlock token and the client address.
func (n *nicheService) caller(r *http.Request) sell.Caller {
	c := sell.Caller{UnlockToken: strings.TrimSpace(r.Header.Get("X-Niche-Paid-Call")),
		Address: n.sell.ClientAddress(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))}
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		c.SubscriberToken = strings.TrimSpace(token)
	}
	return c
}

// ---- public handlers ----

func (n *nicheService) list(w http.ResponseWriter, r *http.Request) {
	q, ok := n.listQuery(w, r)
	if !ok {
		return
	}
	out, err := n.sell.List(r.Context(), *q, n.caller(r))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	if out.QueryScope != "" {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Vary", "Authorization")
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (n *nicheService) preview(w http.ResponseWriter, r *http.Request) {
	out, err := n.sell.Preview(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (n *nicheService) get(w http.ResponseWriter, r *http.Request) {
	ev, grant, ok := n.fullAccess(w, r, r.PathValue("niche_id"))
	if !ok {
		return
	}
	httpjson.Write(w, http.StatusOK, NicheEvaluationResponse{Evaluation: ev, Access: NicheAccess{Kind: grant.Kind}})
}

// fullAccess is the access check of the full reads of an evaluation
// (sell.Niche.Full); otherwise it has answered.
func (n *nicheService) fullAccess(w http.ResponseWriter, r *http.Request, id string) (*niche.Evaluation, sell.NicheGrant, bool) {
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Vary", "Authorization, X-Niche-Paid-Call")
	ev, grant, err := n.sell.Full(r.Context(), id, n.caller(r))
	if err != nil {
		n.s.writeError(w, r, err)
		return nil, sell.NicheGrant{}, false
	}
	return ev, grant, true
}

// nichePaidEvaluation is the pay-per-call evaluation handler: Precheck
// runs before any payment is asked for.
type nichePaidEvaluation struct{ n *nicheService }

// Precheck implements httpgate.Prechecker: an unknown, draft or withdrawn
// id (or a malformed one) is 404 before any charge.
func (h *nichePaidEvaluation) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	ok, err := h.n.cfg.Engine.Exists(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		h.n.s.writeError(w, r, err)
		return r, false
	}
	if !ok {
		httpjson.Detail(w, http.StatusNotFound, "Niche not found")
		return r, false
	}
	return r, true
}

func (h *nichePaidEvaluation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	out, err := h.n.sell.Buy(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		h.n.s.writeError(w, r, err)
		return
	}
	if tok := out.Access.UnlockToken; tok != "" {
		w.Header().Set("X-Niche-Paid-Call", tok)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, out)
}

func (n *nicheService) search(w http.ResponseWriter, r *http.Request) {
	q, ok := n.searchQuery(w, r)
	if !ok {
		return
	}
	out, err := n.sell.Search(r.Context(), *q, n.caller(r))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, out)
}

// nichePaidSearch is the pay-per-call search handler.
type nichePaidSearch struct{ n *nicheService }

// Precheck implements httpgate.Prechecker: invalid parameters are 422 and
// an empty catalogue is 503, both before any charge.
func (h *nichePaidSearch) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if _, ok := h.n.searchQuery(w, r); !ok {
		return r, false
	}
	if err := h.n.sell.CheckPaidSearch(r.Context()); err != nil {
		h.n.s.writeError(w, r, err)
		return r, false
	}
	return r, true
}

func (h *nichePaidSearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q, ok := h.n.searchQuery(w, r)
	if !ok {
		return
	}
	out, err := h.n.sell.PaidSearch(r.Context(), *q)
	if err != nil {
		h.n.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, out)
}

func (n *nicheService) sources(w http.ResponseWriter, r *http.Request) {
	srcs, err := n.cfg.Engine.Sources(r.Context())
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, NicheSourcesResponse{Sources: srcs,
		Note: "Signals are public posts, reviews, job ads and notices, stored with their URL, excerpt, licence and observation date; only accepted signals are evidence."})
}

// ---- curator handlers ----

func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, &niche.InvalidError{Field: field, Reason: "must be an RFC 3339 date-time, e.g. 2026-05-01T12:00:00Z"}
	}
	return t, nil
}

func (n *nicheService) adminIngest(w http.ResponseWriter, r *http.Request) {
	var b shapes.NicheSignalBatch
	if !n.s.decodeBody(w, r, &b) {
		return
	}
	in := make([]niche.SignalInput, len(b.Signals))
	for i, s := range b.Signals {
		obs, err := parseTime(fmt.Sprintf("signals[%d].observedAt", i), s.ObservedAt)
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		col, err := parseTime(fmt.Sprintf("signals[%d].collectedAt", i), deref(s.CollectedAt))
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		in[i] = niche.SignalInput{ID: deref(s.ID), Kind: niche.SignalKind(s.Kind), SourceURL: s.SourceURL, Origin: s.Origin,
			ExternalID: s.ExternalID, Title: s.Title, Excerpt: s.Excerpt, ObservedAt: obs, CollectedAt: col,
			License: s.License, Attribution: s.Attribution, Engagement: s.Engagement, State: niche.SignalState(deref(s.State))}
	}
	res, err := n.cfg.Engine.IngestSignals(r.Context(), in)
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	created := 0
	for _, x := range res {
		if x.Outcome == "created" {
			created++
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"results": res, "created": created, "duplicates": len(res) - created})
}

func (n *nicheService) adminSignals(w http.ResponseWriter, r *http.Request) {
	var q shapes.NicheSignalListQuery
	if !n.s.decodeQuery(w, r, &q) {
		return
	}
	list, err := n.cfg.Engine.Signals(r.Context(), niche.SignalFilter{State: niche.SignalState(deref(q.State)), Origin: deref(q.Origin), Limit: q.Limit})
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"signals": list, "count": len(list)})
}

func (n *nicheService) adminSignal(w http.ResponseWriter, r *http.Request) {
	s, err := n.cfg.Engine.Signal(r.Context(), r.PathValue("signal_id"))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s)
}

func (n *nicheService) adminModerate(w http.ResponseWriter, r *http.Request) {
	var b niche.ModerationRequest
	if !n.s.decodeBody(w, r, &b) {
		return
	}
	s, err := n.cfg.Engine.ModerateSignal(r.Context(), r.PathValue("signal_id"), b.State, b.Note, b.Actor)
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, s)
}

func (n *nicheService) adminCreate(w http.ResponseWriter, r *http.Request) {
	var b shapes.NicheCreateRequest
	if !n.s.decodeBody(w, r, &b) {
		return
	}
	ev, err := n.cfg.Engine.Create(r.Context(), b.Op, b.Draft)
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, ev)
}

func (n *nicheService) adminGet(w http.ResponseWriter, r *http.Request) {
	ev, err := n.cfg.Engine.Evaluation(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ev)
}

func (n *nicheService) adminRevise(w http.ResponseWriter, r *http.Request) {
	var b shapes.NicheReviseRequest
	if !n.s.decodeBody(w, r, &b) {
		return
	}
	ev, err := n.cfg.Engine.Revise(r.Context(), r.PathValue("niche_id"), b.ExpectedRevision,
		b.Op, b.Draft)
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ev)
}

func (n *nicheService) adminRevisions(w http.ResponseWriter, r *http.Request) {
	revs, err := n.cfg.Engine.Revisions(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"revisions": revs, "count": len(revs)})
}

func (n *nicheService) adminTransition(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b shapes.NicheTransitionRequest
		if !n.s.decodeBody(w, r, &b) {
			return
		}
		op := b.Op
		var ev *niche.Evaluation
		var err error
		if action == niche.ActionPublish {
			ev, err = n.cfg.Engine.Publish(r.Context(), r.PathValue("niche_id"), b.ExpectedRevision, op)
		} else {
			ev, err = n.cfg.Engine.Withdraw(r.Context(), r.PathValue("niche_id"), b.ExpectedRevision, op)
		}
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, ev)
	}
}

// NicheImportRefused is the 422 of an import with invalid lines: each line's
// error, nothing imported.
type NicheImportRefused struct {
	Detail string            `json:"detail"`
	Lines  []niche.LineError `json:"lines"`
}

// adminImport reads a JSON Lines body (application/x-ndjson,
// application/jsonl or text/plain; absent means JSON Lines too).
func (n *nicheService) adminImport(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case err != nil:
			httpjson.Detail(w, http.StatusUnsupportedMediaType, "Unreadable Content-Type")
			return
		case mt != "application/x-ndjson" && mt != "application/jsonl" && mt != "application/json-lines" &&
			mt != "text/plain" && mt != "application/octet-stream":
			httpjson.Detail(w, http.StatusUnsupportedMediaType, "Send JSON Lines as application/x-ndjson")
			return
		}
	}
	body, ok := httpjson.ReadBody(w, r)
	if !ok {
		return
	}
	actor := strings.TrimSpace(queryValues(r).Get("actor"))
	rep, err := n.cfg.Engine.ImportString(r.Context(), string(body), &niche.ImportOptions{Actor: actor})
	var ie *niche.ImportError
	if errors.As(err, &ie) {
		httpjson.Write(w, http.StatusUnprocessableEntity, NicheImportRefused{Detail: ie.Error(), Lines: ie.Lines})
		return
	}
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, rep)
}
