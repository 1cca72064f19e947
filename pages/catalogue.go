package pages

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/websession"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/sell"
)

// pageSize is the number of evaluations a list page shows; maxListed is
// the engine's bound on one list (niche.ListOptions.Limit).
const (
	pageSize  = 20
	maxListed = 100
)

// listData is the list page's data.
type listData struct {
	Items      []niche.Preview
	Sort       string
	Category   string
	Categories []string
	Page       int
	Prev, Next string
	// Sorts link the two orders with the filter kept.
	ByScore, ByRecent string
	// All links the list without a category filter.
	All         string
	EvalPrice   string
	SearchPath  string
	DetailPath  string
	AccountPath string
}

// listURL builds a list URL.
func (s *site) listURL(sort, category string, page int) string {
	q := url.Values{}
	if sort != "" && sort != niche.SortScore {
		q.Set("sort", sort)
	}
	if category != "" {
		q.Set("category", category)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	u := s.nichePrefix + "/browse"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// categoriesTTL is how long the category filters are kept.
const categoriesTTL = time.Minute

// categories lists the categories of the first evaluations by score, for
// the filters; the list is read at most once a minute.
func (s *site) categories(r *http.Request) []string {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	if s.cats != nil && time.Since(s.catsAt) < categoriesTTL {
		return s.cats
	}
	res, err := s.app.Niche.List(r.Context(), niche.ListOptions{Sort: niche.SortScore, Limit: maxListed}, sell.Caller{})
	if err != nil {
		return s.cats
	}
	var out []string
	for _, p := range res.Niches {
		if p.Category != "" && !slices.ContainsFunc(out, func(c string) bool { return strings.EqualFold(c, p.Category) }) {
			out = append(out, p.Category)
		}
	}
	slices.Sort(out)
	s.cats, s.catsAt = out, time.Now()
	return out
}

func (s *site) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sort := q.Get("sort")
	if sort == "" {
		sort = niche.SortScore
	}
	if sort != niche.SortScore && sort != niche.SortRecent {
		s.errorPage(w, r, http.StatusBadRequest, "Unknown order", "The list is sorted by score or by recent; "+strconv.Quote(sort)+" is neither.")
		return
	}
	category := strings.TrimSpace(q.Get("category"))
	if utf8.RuneCountInString(category) > 80 {
		s.errorPage(w, r, http.StatusBadRequest, "Category too long", "A category has at most 80 characters.")
		return
	}
	page := 1
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListed/pageSize {
			s.errorPage(w, r, http.StatusBadRequest, "No such page", "The list has pages 1 to "+strconv.Itoa(maxListed/pageSize)+".")
			return
		}
		page = n
	}
	secret, st := s.session(w, r)
	o := niche.ListOptions{Sort: sort, Limit: min(page*pageSize+1, maxListed)}
	if category != "" {
		o.Category = &category
	}
	res, err := s.app.Niche.List(r.Context(), o, s.caller(r, secret, st))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items := res.Niches
	more := len(items) > page*pageSize
	from := min((page-1)*pageSize, len(items))
	items = items[from:min(page*pageSize, len(items))]
	d := listData{Items: items, Sort: sort, Category: category, Categories: s.categories(r), Page: page,
		ByScore: s.listURL(niche.SortScore, category, 1), ByRecent: s.listURL(niche.SortRecent, category, 1), All: s.listURL(sort, "", 1),
		EvalPrice: price(s.app.Niche.EvaluationOffer().AmountMicroUSD), SearchPath: s.nichePrefix + "/browse/search",
		DetailPath: s.nichePrefix + "/browse/", AccountPath: s.nav().Account}
	if page > 1 {
		d.Prev = s.listURL(sort, category, page-1)
	}
	if more && page < maxListed/pageSize {
		d.Next = s.listURL(sort, category, page+1)
	}
	title := "Catalogue"
	if category != "" {
		title = "Catalogue: " + category
	}
	s.render(w, r, http.StatusOK, "list", title, secret != "", d)
}

// searchData is the search page's data.
type searchData struct {
	Query, Category, Sort string
	// Searched is false for the empty form.
	Searched bool
	Problem  string
	// Previews or Evaluations are the results (by access).
	Previews    []niche.Preview
	Evaluations []*niche.Evaluation
	Full        bool
	Normalized  string
	Quota       *niche.QuotaStatus
	// QuotaUsed is set when the free quota is used up (the page says when
	// it resets and how to search more).
	QuotaUsed   *sell.QuotaError
	SearchPrice string
	SubsPrice   string
	DetailPath  string
	AccountPath string
	Action      string
}

func (s *site) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	secret, st := s.session(w, r)
	d := searchData{Query: strings.TrimSpace(q.Get("q")), Category: strings.TrimSpace(q.Get("category")), Sort: q.Get("sort"),
		SearchPrice: price(s.app.Niche.SearchOffer().AmountMicroUSD), DetailPath: s.nichePrefix + "/browse/",
		AccountPath: s.nav().Account, Action: s.nichePrefix + "/browse/search"}
	if d.Sort == "" {
		d.Sort = niche.SortScore
	}
	if !q.Has("q") {
		s.render(w, r, http.StatusOK, "search", "Search", secret != "", d)
		return
	}
	d.Searched = true
	// The API's bounds (niche.SearchOptions), checked before anything is
	// counted.
	switch n := utf8.RuneCountInString(d.Query); {
	case n < 3:
		d.Problem = "Type at least 3 characters."
	case n > 150:
		d.Problem = "A search has at most 150 characters."
	case utf8.RuneCountInString(d.Category) > 80:
		d.Problem = "A category has at most 80 characters."
	case d.Sort != niche.SortScore && d.Sort != niche.SortRecent:
		d.Problem = "Results are ordered by score or by recent."
	}
	if d.Problem != "" {
		s.render(w, r, http.StatusUnprocessableEntity, "search", "Search", secret != "", d)
		return
	}
	o := niche.SearchOptions{Query: d.Query, Sort: d.Sort, Limit: pageSize}
	if d.Category != "" {
		o.Category = &d.Category
	}
	res, err := s.app.Niche.Search(r.Context(), o, s.caller(r, secret, st))
	var qe *sell.QuotaError
	var se *sell.SearchSubscriptionError
	switch {
	case errors.As(err, &qe):
		d.QuotaUsed = qe
		d.SubsPrice = s.subscriptionPrice(r)
		w.Header().Set("Retry-After", strconv.Itoa(qe.RetryAfter))
		s.render(w, r, http.StatusTooManyRequests, "search", "Free searches used", secret != "", d)
		return
	case errors.As(err, &se):
		d.Problem = "Searching needs a subscription here."
		d.SubsPrice = s.subscriptionPrice(r)
		s.render(w, r, http.StatusUnauthorized, "search", "Search", secret != "", d)
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	d.Normalized, d.Quota = res.NormalizedQuery, res.Quota
	switch v := res.Niches.(type) {
	case []niche.Preview:
		d.Previews = v
	case []*niche.Evaluation:
		d.Evaluations, d.Full = v, true
	}
	s.render(w, r, http.StatusOK, "search", "Search: "+d.Query, secret != "", d)
}

// subscriptionPrice is the monthly price shown ("" when not sold).
func (s *site) subscriptionPrice(r *http.Request) string {
	if s.app.Subscriptions == nil {
		return ""
	}
	o, err := s.app.Subscriptions.Offer(r.Context())
	if err != nil {
		return ""
	}
	return price(o.AmountMicroUSD) + " a month"
}

// evaluationData is the evaluation page's data.
type evaluationData struct {
	Preview *niche.Preview
	Full    *niche.Evaluation
	// Criteria are the full evaluation's scores with their rationale.
	Criteria []criterion
	// Locked says why a signed-in reader sees the preview only.
	Locked      string
	EvalPrice   string
	SubsPrice   string
	PayPath     string
	AccountPath string
	Subscribe   string
	CapturePath string
}

type criterion struct {
	Name      string
	Score     int
	Weight    int
	Rationale string
}

func (s *site) evaluation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("niche_id")
	secret, st := s.session(w, r)
	d := evaluationData{EvalPrice: price(s.app.Niche.EvaluationOffer().AmountMicroUSD), AccountPath: s.nav().Account,
		PayPath: s.nichePrefix + "/v1/niches/" + url.PathEscape(id) + "/pay-per-call"}
	if s.app.Subscriptions != nil {
		d.Subscribe = s.nichePrefix + "/account/subscribe"
	}
	if s.p.opts.Snapshots != nil {
		d.CapturePath = "/captures/"
	}
	if secret != "" {
		ev, _, err := s.app.Niche.Full(r.Context(), id, s.caller(r, secret, st))
		var le *sell.LockedError
		switch {
		case err == nil:
			d.Full = ev
			d.Criteria = criteria(ev)
			s.render(w, r, http.StatusOK, "evaluation", ev.Title, true, d)
			return
		case errors.As(err, &le):
			d.Locked = "Your subscription is not active, so this is the preview. Open the billing portal from your account to renew it."
		default:
			s.fail(w, r, err)
			return
		}
	}
	pv, err := s.app.Niche.Preview(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Preview = &pv.Preview
	d.SubsPrice = s.subscriptionPrice(r)
	s.render(w, r, http.StatusOK, "evaluation", pv.Title, secret != "", d)
}

// criteria lists the scores of ev with their weights and rationale.
func criteria(ev *niche.Evaluation) []criterion {
	d, wt, ra := ev.Dimensions, ev.ScoreWeights, ev.Rationale
	return []criterion{
		{"Pain", d.Pain, wt.Pain, ra.Pain},
		{"Frequency", d.Frequency, wt.Frequency, ra.Frequency},
		{"Willingness to pay", d.WillingnessToPay, wt.WillingnessToPay, ra.WillingnessToPay},
		{"Reachable buyers", d.ReachableBuyers, wt.ReachableBuyers, ra.ReachableBuyers},
		{"Feasibility", d.Feasibility, wt.Feasibility, ra.Feasibility},
		{"Competition gap", d.CompetitionGap, wt.CompetitionGap, ra.CompetitionGap},
	}
}

// accountData is the account page's data.
type accountData struct {
	Status    *niche.SubscriberStatus
	Problem   string
	Notice    string
	SubsPrice string
	Catalogue string
	Prefix    string
}

func (s *site) account(w http.ResponseWriter, r *http.Request) {
	secret, st := s.session(w, r)
	d := accountData{Catalogue: s.nichePrefix + "/browse", Prefix: s.nichePrefix + "/account", SubsPrice: s.subscriptionPrice(r)}
	switch r.URL.Query().Get("done") {
	case "signed-out":
		d.Notice = "You are signed out."
	case "signed-in":
		d.Notice = "You are signed in."
	}
	if secret != "" {
		d.Status = st
		s.render(w, r, http.StatusOK, "account", "Your subscription", true, d)
		return
	}
	s.render(w, r, http.StatusOK, "account", "Sign in", false, d)
}

func (s *site) signIn(w http.ResponseWriter, r *http.Request) {
	tok := strings.TrimSpace(r.PostFormValue("token"))
	d := accountData{Catalogue: s.nichePrefix + "/browse", Prefix: s.nichePrefix + "/account", SubsPrice: s.subscriptionPrice(r)}
	in, err := s.app.Subscriptions.SignIn(r.Context(), tok)
	switch {
	case errors.Is(err, niche.ErrSubscriptionTokenInvalid):
		d.Problem = "That token is not a live subscriber token. Paste the whole token (it starts with nd_), or subscribe."
		s.render(w, r, http.StatusUnauthorized, "account", "Sign in", false, d)
		return
	case errors.Is(err, niche.ErrSessionsUnavailable):
		s.errorPage(w, r, http.StatusServiceUnavailable, "Sign-in is not available", "This server keeps no sessions; use the API with your token.")
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	websession.Set(w, r, in.Secret, in.ExpiresAt)
	http.Redirect(w, r, s.nichePrefix+"/browse", http.StatusSeeOther)
}

func (s *site) signOut(w http.ResponseWriter, r *http.Request) {
	if secret := websession.Read(r); secret != "" {
		if err := s.app.Subscriptions.SignOut(r.Context(), secret); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	websession.Clear(w, r)
	http.Redirect(w, r, s.nichePrefix+"/account?done=signed-out", http.StatusSeeOther)
}

func (s *site) portal(w http.ResponseWriter, r *http.Request) {
	secret, _ := s.session(w, r)
	if secret == "" {
		http.Redirect(w, r, s.nichePrefix+"/account", http.StatusSeeOther)
		return
	}
	base := s.baseURL(r)
	ps, err := s.app.Subscriptions.SessionPortal(r.Context(), secret, niche.PortalParams{
		ReturnURL: base + s.nichePrefix + "/account", BaseURL: base + s.subsPrefix})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, ps.URL, http.StatusSeeOther)
}

func (s *site) subscribe(w http.ResponseWriter, r *http.Request) {
	base := s.baseURL(r) + s.subsPrefix
	p := niche.CheckoutParams{BaseURL: base, CancelURL: base + "/v1/subscription/cancelled"}
	if s.successPath != "" {
		p.SuccessURL = s.baseURL(r) + s.successPath + "?session_id=" + niche.CheckoutSessionPlaceholder
	}
	cs, _, err := s.app.Subscriptions.Checkout(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, cs.URL, http.StatusSeeOther)
}

// landingData is the landing page's data.
type landingData struct {
	Catalogue   bool
	Top         []niche.Preview
	EvalPrice   string
	SearchPrice string
	SubsPrice   string
	Free        int
	Claims      []tierPrice
	CardPrice   string
	Links       navLinks
	Verify      string
	Docs        string
	Detail      string
	Subscribe   string
	Paid        bool
}

type tierPrice struct {
	Tier, Price, Path string
}

func (s *site) landing(w http.ResponseWriter, r *http.Request) {
	secret, _ := s.session(w, r)
	d := landingData{Links: s.nav(), Paid: !s.app.Free}
	if n := s.app.Niche; n != nil {
		d.Catalogue = true
		d.EvalPrice, d.SearchPrice = price(n.EvaluationOffer().AmountMicroUSD), price(n.SearchOffer().AmountMicroUSD)
		d.SubsPrice = s.subscriptionPrice(r)
		d.Detail = s.nichePrefix + "/browse/"
		if s.app.Subscriptions != nil {
			d.Subscribe = s.nichePrefix + "/account/subscribe"
		}
		if res, err := n.List(r.Context(), niche.ListOptions{Sort: niche.SortScore, Limit: 3}, sell.Caller{}); err == nil {
			d.Top = res.Niches
		}
	}
	for _, l := range s.app.Catalogue.Listings() {
		if l.Service != sell.ServiceClaims || !s.app.Sells(l.Tier) {
			continue
		}
		d.Claims = append(d.Claims, tierPrice{Tier: l.Tier, Price: price(l.AmountMicroUSD), Path: s.claimsPrefix + l.HTTPPath})
		if l.CardMicroUSD > 0 {
			d.CardPrice = price(l.CardMicroUSD)
		}
	}
	s.render(w, r, http.StatusOK, "landing", s.name, secret != "", d)
}
