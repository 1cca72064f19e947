package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
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

// Default niche prices, in micro-USD.
const (
	DefaultNicheEvaluationPrice = 250000 // USD 0.25
	DefaultNicheSearchPrice     = 50000  // USD 0.05
)

// Search quotas (NicheConfig.FreeSearchesPerDay).
const (
	// DefaultFreeSearchesPerDay is the free quota when
	// NicheConfig.FreeSearchesPerDay is nil.
	DefaultFreeSearchesPerDay = 3
	// UnlimitedSearches as the value of NicheConfig.FreeSearchesPerDay
	// turns the free quota off: anonymous searches are not counted.
	UnlimitedSearches = -1
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
	// EvaluationPriceMicroUSD is the price of one evaluation; 0 means
	// 250000 (USD 0.25).
	EvaluationPriceMicroUSD int64
	// SearchPriceMicroUSD is the price of a paid search; 0 means 50000.
	SearchPriceMicroUSD int64
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

// nicheService holds the resolved configuration.
type nicheService struct {
	s        *Server
	cfg      NicheConfig
	prefix   string
	quotaKey []byte
	// freeSearches is the resolved FreeSearchesPerDay: a limit, 0 or
	// UnlimitedSearches.
	freeSearches int
	// evalPrice and searchPrice are the prices in USD as written in
	// unlock blocks (computed once: every preview carries one).
	evalPrice, searchPrice string
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
	if n.cfg.EvaluationPriceMicroUSD == 0 {
		n.cfg.EvaluationPriceMicroUSD = DefaultNicheEvaluationPrice
	}
	if n.cfg.SearchPriceMicroUSD == 0 {
		n.cfg.SearchPriceMicroUSD = DefaultNicheSearchPrice
	}
	if n.cfg.EvaluationPriceMicroUSD < 0 || n.cfg.SearchPriceMicroUSD < 0 {
		return nil, errorf("niche: prices must be positive")
	}
	n.evalPrice, n.searchPrice = priceUSD(n.cfg.EvaluationPriceMicroUSD), priceUSD(n.cfg.SearchPriceMicroUSD)
	s.niche = n
	n.freeSearches = DefaultFreeSearchesPerDay
	if c.FreeSearchesPerDay != nil {
		n.freeSearches = *c.FreeSearchesPerDay
	}
	if n.freeSearches < 0 && n.freeSearches != UnlimitedSearches {
		return nil, errorf("niche: FreeSearchesPerDay must be 0 or more, or UnlimitedSearches (-1)")
	}
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
	n.quotaKey = c.QuotaKey
	if len(n.quotaKey) == 0 {
		n.quotaKey = make([]byte, 32)
		if _, err := rand.Read(n.quotaKey); err != nil {
			return nil, errorf("niche: quota key: %v", err)
		}
	}
	var prefixes []string
	if n.prefix != "" {
		prefixes = []string{n.prefix}
	}
	evalOffer := payment.Offer{ID: "niche.evaluation", Description: "One full niche evaluation with its evidence",
		AmountMicroUSD: n.cfg.EvaluationPriceMicroUSD, MimeType: "application/json", WorkTimeout: 10 * time.Second}
	searchOffer := payment.Offer{ID: "niche.search", Description: "Niche catalogue search with full evaluations",
		AmountMicroUSD: n.cfg.SearchPriceMicroUSD, MimeType: "application/json", WorkTimeout: 10 * time.Second}
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
		{ID: "niche.pay-per-call", Summary: "Buy one full niche evaluation (USD 0.25) and an unlock token for it.",
			Status: "stable", Method: "GET", Path: "/v1/niches/{niche_id}/pay-per-call", Prefixes: prefixes,
			Offer: &evalOffer, Handler: s.Paid(evalOffer, &nichePaidEvaluation{n}), Work: &nichePaidEvaluation{n}},
		pub("niche.search", "Search published niche evaluations by relevance (previews free within a daily quota, full for subscribers).",
			"/v1/search", "NicheSearchQuery", n.search),
		{ID: "niche.search.pay-per-call", Summary: "Search the niche catalogue and get full evaluations, paid per call.",
			Status: "stable", Method: "GET", Path: "/v1/search/pay-per-call", Prefixes: prefixes, Query: "NicheSearchQuery",
			Offer: &searchOffer, Handler: s.Paid(searchOffer, &nichePaidSearch{n}), Work: &nichePaidSearch{n}},
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

// ---- unlock blocks ----

func priceUSD(micro int64) string {
	s := fmt.Sprintf("%d.%06d", micro/1000000, micro%1000000)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); len(s)-i == 2 {
		s += "0"
	}
	return s
}

func (n *nicheService) unlock(id string) *niche.Unlock {
	u := &niche.Unlock{
		PayPerCall: niche.UnlockPayPerCall{Method: "GET", Path: n.prefix + "/v1/niches/" + url.PathEscape(id) + "/pay-per-call",
			AmountMicroUSD: n.cfg.EvaluationPriceMicroUSD, PriceUSD: n.evalPrice,
			Asset: "USDC", Network: nicheNetwork, Protocols: []string{"x402", "mpp"}},
	}
	if n.cfg.CheckoutPath != "" {
		u.Subscription = &niche.UnlockSubscription{CheckoutMethod: "POST", CheckoutPath: n.cfg.CheckoutPath,
			Header: "Authorization: Bearer <subscriber token>"}
	}
	return u
}

func (n *nicheService) withUnlock(ps []niche.Preview) []niche.Preview {
	for i := range ps {
		ps[i].Unlock = n.unlock(ps[i].ID)
	}
	return ps
}

// ---- identity ----

// subscriber returns the subscriber named by the Authorization header:
// nil and no error when there is no bearer token, ErrNotSubscribed when
// the token is not active.
func (n *nicheService) subscriber(r *http.Request) (*niche.Subscriber, error) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, nil
	}
	if n.cfg.Subscribers == nil {
		return nil, niche.ErrNotSubscribed
	}
	sub, err := n.cfg.Subscribers.Active(r.Context(), strings.TrimSpace(token))
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// clientIP returns the caller's address: the TCP peer, or — when the peer
// is a trusted proxy — the right-most X-Forwarded-For entry that is not a
// trusted proxy itself.
func (n *nicheService) clientIP(r *http.Request) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	addr, err := netip.ParseAddr(peer)
	if err != nil {
		return peer
	}
	addr = addr.Unmap()
	if !n.trusted(addr) {
		return addr.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	var all []string
	for _, h := range hops {
		for _, p := range strings.Split(h, ",") {
			all = append(all, strings.TrimSpace(p))
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(all[i])
		if err != nil {
			break // garbage: stop believing the chain
		}
		a = a.Unmap()
		if !n.trusted(a) {
			return a.String()
		}
		addr = a
	}
	return addr.String()
}

func (n *nicheService) trusted(a netip.Addr) bool {
	for _, p := range n.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (n *nicheService) callerKey(ip string) string {
	m := hmac.New(sha256.New, n.quotaKey)
	m.Write([]byte("niche-search-ip\x00" + ip))
	return "ip:" + hex.EncodeToString(m.Sum(nil)[:16])
}

// ---- public handlers ----

// NicheListResponse is the answer of GET /v1/niches: previews, with the
// query it answered.
type NicheListResponse struct {
	Niches   []niche.Preview `json:"niches"`
	Count    int             `json:"count"`
	Query    string          `json:"query"`
	Category *string         `json:"category"`
	Sort     string          `json:"sort"`
	Limit    int             `json:"limit"`
	// Access is "preview": the items are previews for everyone.
	Access string `json:"access"`
	// QueryScope says what q was matched against: "preview" (what
	// previews show) or "full" (the full text, for subscribers); absent
	// without a q.
	QueryScope string             `json:"queryScope,omitempty"`
	Quota      *niche.QuotaStatus `json:"quota,omitempty"`
	SearchPath string             `json:"searchPath"`
}

func (n *nicheService) list(w http.ResponseWriter, r *http.Request) {
	q, ok := n.listQuery(w, r)
	if !ok {
		return
	}
	var sub *niche.Subscriber
	var quota *niche.QuotaStatus
	scope := ""
	if !niche.ParseQuery(q.Query).Empty() {
		// A text filter is a search: it counts against the same quota,
		// and matches the full text for subscribers only.
		if sub, ok = n.caller(w, r); !ok {
			return
		}
		if quota, ok = n.searchQuota(w, r, q.Query, sub); !ok {
			return
		}
		scope = "preview"
		if sub != nil {
			scope = "full"
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Vary", "Authorization")
	}
	o := *q
	o.Full = sub != nil
	res, err := n.cfg.Engine.List(r.Context(), o)
	if err != nil {
		n.settleQuota(r, quota, false)
		n.s.writeError(w, r, err)
		return
	}
	quota = n.settleQuota(r, quota, len(res.Previews) > 0)
	httpjson.Write(w, http.StatusOK, NicheListResponse{
		Niches: n.withUnlock(res.Previews), Count: len(res.Previews), Query: q.Query, Category: q.Category,
		Sort: q.Sort, Limit: q.Limit, Access: "preview", QueryScope: scope, Quota: quota, SearchPath: n.prefix + "/v1/search",
	})
}

// NichePreviewResponse is the answer of GET /v1/niches/{niche_id}/preview.
type NichePreviewResponse struct {
	niche.Preview
	Access string `json:"access"`
}

func (n *nicheService) preview(w http.ResponseWriter, r *http.Request) {
	p, err := n.cfg.Engine.Preview(r.Context(), r.PathValue("niche_id"))
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	p.Unlock = n.unlock(p.ID)
	httpjson.Write(w, http.StatusOK, NichePreviewResponse{Preview: *p, Access: "preview"})
}

// NicheAccess says how a full evaluation was unlocked.
type NicheAccess struct {
	// Kind is "subscription" or "pay_per_call".
	Kind string `json:"kind"`
	// UnlockToken (pay-per-call answers) unlocks GET /v1/niches/{id}
	// for this niche until UnlockExpiresAt, sent as x-niche-paid-call.
	UnlockToken     string     `json:"unlockToken,omitempty"`
	UnlockExpiresAt *time.Time `json:"unlockExpiresAt,omitempty"`
	OrderID         string     `json:"orderId,omitempty"`
	// Payer is who paid (a 0x address or a card customer reference).
	Payer string `json:"payer,omitempty"`
}

// NicheEvaluationResponse is the answer of GET /v1/niches/{niche_id} and of
// its pay-per-call route: the full evaluation (with an unlock token when
// bought).
type NicheEvaluationResponse struct {
	*niche.Evaluation
	Access NicheAccess `json:"access"`
}

// NicheLocked is the 401 of GET /v1/niches/{niche_id} without a subscription
// or unlock token: how to get either.
type NicheLocked struct {
	Detail string        `json:"detail"`
	Unlock *niche.Unlock `json:"unlock"`
}

func (n *nicheService) get(w http.ResponseWriter, r *http.Request) {
	ev, grant, ok := n.fullAccess(w, r, r.PathValue("niche_id"))
	if !ok {
		return
	}
	httpjson.Write(w, http.StatusOK, NicheEvaluationResponse{Evaluation: ev, Access: NicheAccess{Kind: grant.Kind}})
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
	n := h.n
	ctx := r.Context()
	id := r.PathValue("niche_id")
	ev, err := n.cfg.Engine.Published(ctx, id)
	if err != nil {
		n.s.writeError(w, r, err)
		return
	}
	access := NicheAccess{Kind: "pay_per_call"}
	orderRef := ""
	if call, ok := payment.CallFrom(ctx); ok {
		call.SetResult("niche", id)
		access.OrderID, access.Payer = call.OrderID, call.Payer
		orderRef = call.OrderID
	}
	if n.cfg.Unlock != nil {
		tok, exp, err := n.cfg.Unlock.Issue(id, orderRef)
		if err != nil {
			// An order id outside the token alphabet: sign without it.
			tok, exp, err = n.cfg.Unlock.Issue(id, "")
		}
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		access.UnlockToken, access.UnlockExpiresAt = tok, &exp
		w.Header().Set("X-Niche-Paid-Call", tok)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, NicheEvaluationResponse{Evaluation: ev, Access: access})
}

// NicheSearchResponse is the answer of GET /v1/search and of its pay-per-
// call route (Niches holds previews or full evaluations).
type NicheSearchResponse struct {
	Niches          any                `json:"niches"`
	Count           int                `json:"count"`
	Query           string             `json:"query"`
	NormalizedQuery string             `json:"normalizedQuery"`
	Category        *string            `json:"category"`
	Sort            string             `json:"sort"`
	Limit           int                `json:"limit"`
	Access          string             `json:"access"`
	RankingMethod   string             `json:"rankingMethod"`
	Truncated       bool               `json:"truncated"`
	Quota           *niche.QuotaStatus `json:"quota"`
	PayPerCall      *NicheSearchOffer  `json:"payPerCall,omitempty"`
}

// NicheSearchOffer names the paid search. Amounts are spelt amountMicrousd,
// as everywhere in the SDK.
type NicheSearchOffer struct {
	Method         string `json:"method"`
	Path           string `json:"path"`
	AmountMicroUSD int64  `json:"amountMicrousd"`
	PriceUSD       string `json:"priceUsd"`
}

func (n *nicheService) runSearch(w http.ResponseWriter, r *http.Request, q *niche.SearchOptions, full bool, quota *niche.QuotaStatus, access string) {
	o := *q
	o.Full = full
	res, err := n.cfg.Engine.Search(r.Context(), o)
	if err != nil {
		n.settleQuota(r, quota, false)
		n.s.writeError(w, r, err)
		return
	}
	quota = n.settleQuota(r, quota, len(res.Previews)+len(res.Evaluations) > 0)
	out := NicheSearchResponse{
		Query: q.Query, NormalizedQuery: res.Query.Phrase(), Category: q.Category, Sort: q.Sort, Limit: q.Limit,
		Access: access, RankingMethod: niche.RelevanceVersion + ", then " + q.Sort + ", then id",
		Truncated: res.Truncated, Quota: quota,
	}
	if full {
		out.Niches, out.Count = res.Evaluations, len(res.Evaluations)
	} else {
		out.Niches, out.Count = n.withUnlock(res.Previews), len(res.Previews)
		out.PayPerCall = &NicheSearchOffer{Method: "GET", Path: n.prefix + "/v1/search/pay-per-call",
			AmountMicroUSD: n.cfg.SearchPriceMicroUSD, PriceUSD: n.searchPrice}
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, out)
}

func (n *nicheService) search(w http.ResponseWriter, r *http.Request) {
	q, ok := n.searchQuery(w, r)
	if !ok {
		return
	}
	sub, ok := n.caller(w, r)
	if !ok {
		return
	}
	quota, ok := n.searchQuota(w, r, q.Query, sub)
	if !ok {
		return
	}
	access := "preview"
	if sub != nil {
		access = "full"
	}
	n.runSearch(w, r, q, sub != nil, quota, access)
}

// caller returns the subscriber named by the Authorization header (nil
// without one). An inactive token is answered 401 and a failing
// subscription service 503; ok is false then.
func (n *nicheService) caller(w http.ResponseWriter, r *http.Request) (*niche.Subscriber, bool) {
	sub, err := n.subscriber(r)
	if err == nil {
		return sub, true
	}
	if !errors.Is(err, niche.ErrNotSubscribed) {
		n.s.log.WarnContext(r.Context(), "niche: subscriber check failed", "err", err)
		httpjson.Detail(w, http.StatusServiceUnavailable, "The subscription service is unavailable")
		return nil, false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="niche-discovery"`)
	httpjson.Detail(w, http.StatusUnauthorized, "The subscription token is not active")
	return nil, false
}

// searchQuota counts one full-text search (a query with a word) of
// /v1/search or /v1/niches against the caller's daily quota: the free one
// of its client address, or the subscriber's; a search that then finds
// nothing gives it back (settleQuota), and a malformed one is refused
// before it is counted. Past it the answer is 429 with Retry-After and
// the reset time in the body; with no free search at all, 401 naming the ways to
// search. It returns the quota status (nil when not counted) and false
// when it answered.
func (n *nicheService) searchQuota(w http.ResponseWriter, r *http.Request, query string, sub *niche.Subscriber) (*niche.QuotaStatus, bool) {
	if niche.ParseQuery(query).Empty() {
		return nil, true // matches nothing: not counted
	}
	var caller string
	limit := n.freeSearches
	if sub != nil {
		caller, limit = "sub:"+sub.ID, n.cfg.SubscriberSearchesPerDay
		if limit <= 0 {
			limit = UnlimitedSearches
		}
	} else {
		caller = n.callerKey(n.clientIP(r))
	}
	switch {
	case limit == UnlimitedSearches:
		return nil, true
	case limit == 0:
		w.Header().Set("WWW-Authenticate", `Bearer realm="niche-discovery"`)
		w.Header().Set("Cache-Control", "no-store")
		httpjson.Detail(w, http.StatusUnauthorized, fmt.Sprintf(
			"Searching requires a subscription (Authorization: Bearer <token>); or use %s/v1/search/pay-per-call", n.prefix))
		return nil, false
	}
	st, err := n.cfg.Engine.TakeQuota(r.Context(), caller, limit)
	var qe *niche.QuotaError
	if errors.As(err, &qe) {
		wait := int(math.Ceil(time.Until(qe.ResetAt).Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(wait, 1)))
		w.Header().Set("Cache-Control", "no-store")
		resets := fmt.Sprintf("The quota resets at %s (in %d s); searches that find nothing are not counted.",
			qe.ResetAt.UTC().Format(time.RFC3339), max(wait, 1))
		detail := fmt.Sprintf("Free search limit reached: %d searches per UTC day. %s Subscribe, or use %s/v1/search/pay-per-call, for more.", qe.Limit, resets, n.prefix)
		if sub != nil {
			detail = fmt.Sprintf("Search limit reached: %d searches per UTC day. %s", qe.Limit, resets)
		}
		httpjson.Write(w, http.StatusTooManyRequests, nicheQuotaBody{Detail: detail, Limit: qe.Limit, ResetsAt: qe.ResetAt.UTC()})
		return nil, false
	}
	if err != nil {
		n.s.writeError(w, r, err)
		return nil, false
	}
	return &st, true
}

// settleQuota gives back the search counted as quota (nil: none) when it
// delivered nothing (found false: no match, or an error), so that only
// searches that find something use up the quota, and returns the status
// to show.
func (n *nicheService) settleQuota(r *http.Request, quota *niche.QuotaStatus, found bool) *niche.QuotaStatus {
	if quota == nil || found {
		return quota
	}
	st, err := n.cfg.Engine.ReturnQuota(r.Context(), *quota)
	if err != nil {
		n.s.log.WarnContext(r.Context(), "niche: giving back a search quota failed", "err", err)
		return quota
	}
	return &st
}

// nicheQuotaBody is the 429 body of a search past its quota: when it
// resets, as Retry-After says too.
type nicheQuotaBody struct {
	Detail   string    `json:"detail"`
	Limit    int       `json:"limit"`
	ResetsAt time.Time `json:"resetsAt"`
}

// nichePaidSearch is the pay-per-call search handler.
type nichePaidSearch struct{ n *nicheService }

// Precheck implements httpgate.Prechecker: invalid parameters are 422 and
// an empty catalogue is 503, both before any charge.
func (h *nichePaidSearch) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if _, ok := h.n.searchQuery(w, r); !ok {
		return r, false
	}
	has, err := h.n.cfg.Engine.HasPublished(r.Context())
	if err != nil {
		h.n.s.writeError(w, r, err)
		return r, false
	}
	if !has {
		h.n.s.writeError(w, r, niche.ErrEmptyCatalogue)
		return r, false
	}
	return r, true
}

func (h *nichePaidSearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q, ok := h.n.searchQuery(w, r)
	if !ok {
		return
	}
	if call, ok := payment.CallFrom(r.Context()); ok {
		call.SetResult("niche_search", "")
	}
	h.n.runSearch(w, r, q, true, nil, "pay_per_call")
}

// NicheSourcesResponse is the answer of GET /v1/sources.
type NicheSourcesResponse struct {
	Sources []niche.SourceStatus `json:"sources"`
	Note    string               `json:"note"`
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
	body, ok := ReadBody(w, r)
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
