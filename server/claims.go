package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/shapes"
)

// Defaults of ClaimsConfig.
const (
	DefaultClaimsPrefix      = "/claim-verification"
	DefaultClaimsServiceSlug = "claim-verification"
)

// ClaimsConfig configures claim verification. The zero value mounts
// nothing; set Engine to serve it.
//
// Routes: the four tier paths of claims.Tiers() (POST), each also under
// Prefix and under the legacy /v1/services/{service_slug}/claims/verify…
// aliases (with and without Prefix; a slug other than ServiceSlug is 404),
// and GET /v1/claims/verifications/{verification_id} (also under Prefix)
// for the payer. Tier routes are paid: each goes through Config.Paywall
// with an offer built from the tier table, and is validated (body, tier
// rules, Idempotency-Key) before any payment is asked for.
type ClaimsConfig struct {
	// Engine runs verifications. Nil mounts nothing.
	Engine *claims.Engine
	// Prefix is the service prefix; "" means DefaultClaimsPrefix.
	Prefix string
	// ServiceSlug is the {service_slug} of the legacy aliases; ""
	// means DefaultClaimsServiceSlug.
	ServiceSlug string
	// Tiers are the tiers sold (names of claims.Tiers()); empty sells
	// every tier. A host selling only quick verifications sets
	// []string{claims.Quick}; the MCP tools and A2A tiers follow.
	Tiers []string
}

// claimsRoutes returns the routes of claim verification.
func (s *Server) claimsRoutes() ([]*Route, error) {
	cfg := s.cfg.Claims
	if cfg.Engine == nil {
		return nil, nil
	}
	prefix := strings.TrimRight(cfg.Prefix, "/")
	if prefix == "" {
		prefix = DefaultClaimsPrefix
	}
	if !strings.HasPrefix(prefix, "/") {
		return nil, errorf("claims: prefix %q must start with /", cfg.Prefix)
	}
	slug := cfg.ServiceSlug
	if slug == "" {
		slug = DefaultClaimsServiceSlug
	}
	for _, name := range cfg.Tiers {
		if _, ok := claims.TierByName(name); !ok {
			return nil, errorf("claims: unknown tier %q", name)
		}
	}
	var routes []*Route
	for _, t := range claims.Tiers() {
		if len(cfg.Tiers) > 0 && !slices.Contains(cfg.Tiers, t.Name) {
			continue
		}
		l, _ := s.cfg.Catalogue.Tier(t.Name)
		offer := l.Offer
		legacy := "/v1/services/{service_slug}/claims/verify" + strings.TrimPrefix(l.HTTPPath, "/v1/claims/verify")
		h := &verifyHandler{s: s, engine: cfg.Engine, tier: t.Name, slug: slug}
		o := offer
		routes = append(routes, &Route{
			ID:       "claims.verify." + t.Name,
			Summary:  "Verify a factual claim against current web sources (" + t.Name + " tier).",
			Status:   "paid-preview",
			Method:   l.HTTPMethod,
			Path:     l.HTTPPath,
			Prefixes: []string{prefix},
			Aliases:  []string{legacy, prefix + legacy},
			Handler:  s.Paid(offer, h),
			Offer:    &o,
			Body:     "ClaimVerificationRequest",
		})
	}
	routes = append(routes, &Route{
		ID:       "claims.verification.get",
		Summary:  "Read a stored verification result (the payer's order token or the admin key).",
		Status:   "paid-preview",
		Method:   http.MethodGet,
		Path:     "/v1/claims/verifications/{verification_id}",
		Prefixes: []string{prefix},
		Handler:  http.HandlerFunc(s.getVerification),
	})
	routes = append(routes, s.verificationEvidenceRoute(prefix)...)
	return routes, nil
}

// claimsStatus maps the service's errors to statuses.
func claimsStatus(err error) (int, string, bool) {
	var re *claims.RequestError
	switch {
	case errors.As(err, &re):
		return http.StatusUnprocessableEntity, re.Msg, true
	case errors.Is(err, claims.ErrNotFound):
		return http.StatusNotFound, "Verification not found", true
	case errors.Is(err, claims.ErrIdempotencyConflict):
		return http.StatusConflict, "Idempotency-Key was already used for a different request", true
	case errors.Is(err, claims.ErrInFlight):
		return http.StatusConflict, "A request with this Idempotency-Key is still being processed; retry later", true
	case errors.Is(err, claims.ErrTimeout), errors.Is(err, claims.ErrProviderTimeout):
		return http.StatusGatewayTimeout, "Verification timed out", true
	case errors.Is(err, claims.ErrProviderNotConfigured):
		return http.StatusServiceUnavailable, "Claim verification is not configured", true
	case errors.Is(err, claims.ErrProviderRateLimited):
		return http.StatusServiceUnavailable, "Evidence provider is busy; retry later", true
	case errors.Is(err, claims.ErrProviderQuotaExhausted):
		return http.StatusServiceUnavailable, "Evidence provider is unavailable", true
	case errors.Is(err, claims.ErrProviderBadOutput), errors.Is(err, claims.ErrProviderFailed):
		return http.StatusBadGateway, "Evidence provider failed", true
	}
	return 0, "", false
}

// verifyHandler serves one tier. It implements httpgate.Prechecker so that
// nothing invalid is ever charged.
type verifyHandler struct {
	s      *Server
	engine *claims.Engine
	tier   string
	slug   string
}

type prechecked struct {
	req *claims.Request
}

type precheckedKey struct{}

// Precheck implements httpgate.Prechecker: legacy slug, Idempotency-Key,
// body (422 with loc "body"), and the tier rules (422 value_error), all
// before payment. The decoded request travels in the returned request's
// context.
func (h *verifyHandler) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if slug := r.PathValue("service_slug"); slug != "" && slug != h.slug {
		httpjson.Detail(w, http.StatusNotFound, "Not Found")
		return r, false
	}
	if key := r.Header.Get("Idempotency-Key"); len(key) > claims.MaxIdempotencyKeyLength {
		httpjson.Write(w, http.StatusUnprocessableEntity, shapes.IdempotencyKeyError(key))
		return r, false
	}
	var raw bytes.Buffer
	if r.Body != nil {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &raw), r.Body}
	}
	var req claims.Request
	if !h.s.decodeBody(w, r, &req) {
		return r, false
	}
	if _, err := h.engine.Check(h.tier, &req); err != nil {
		var re *claims.RequestError
		if errors.As(err, &re) {
			var input any = map[string]any{}
			if json.Valid(raw.Bytes()) {
				input = json.RawMessage(bytes.TrimSpace(raw.Bytes()))
			}
			httpjson.Write(w, http.StatusUnprocessableEntity, shapes.NewValueError(re.Msg, input).WithPrefix("body"))
			return r, false
		}
		h.s.writeError(w, r, err)
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), precheckedKey{}, &prechecked{req: &req})), true
}

func (h *verifyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pre, ok := r.Context().Value(precheckedKey{}).(*prechecked)
	if !ok {
		// The paywall did not run Precheck: do it now.
		if r, ok = h.Precheck(w, r); !ok {
			return
		}
		pre = r.Context().Value(precheckedKey{}).(*prechecked)
	}
	res, err := h.s.app.Verify(r.Context(), h.tier, pre.req, r.Header.Get("Idempotency-Key"))
	if err != nil {
		var ife *claims.InFlightError
		var pe *claims.ProviderError
		switch {
		case errors.As(err, &ife):
			w.Header().Set("Retry-After", retryAfter(ife.RetryAfter))
		case errors.As(err, &pe) && pe.Kind == claims.ProviderRateLimited && pe.RetryAfter > 0:
			w.Header().Set("Retry-After", retryAfter(pe.RetryAfter))
		}
		var re *claims.RequestError
		if errors.As(err, &re) {
			httpjson.Write(w, http.StatusUnprocessableEntity, shapes.NewValueError(re.Msg, map[string]any{}).WithPrefix("body"))
			return
		}
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if page := h.s.verificationPage(res.VerificationID); page != "" {
		// For a person the agent passes the result to: the same result as
		// a page (package pages), opened with the order token.
		w.Header().Set("Link", "<"+page+`>; rel="alternate"; type="text/html"`)
	}
	httpjson.Write(w, http.StatusOK, res)
}

// verificationPage is the path of a verification's page when the pages
// are mounted ("" otherwise).
func (s *Server) verificationPage(id string) string {
	for _, rt := range s.routes {
		if rt.ID == "pages.verification" {
			return strings.Replace(rt.Path, "{verification_id}", url.PathEscape(id), 1)
		}
	}
	return ""
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(int(math.Max(1, math.Ceil(d.Seconds()))))
}

// getVerification returns a stored result to the payer (an order token of
// an order that produced or replayed it, once that order is completed) or
// to the admin. Unknown ids and callers who are not the payer get the same
// 404 (see verificationAccess).
func (s *Server) getVerification(w http.ResponseWriter, r *http.Request) {
	rec, _, ok := s.verificationAccess(w, r)
	if !ok {
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, rec.Result)
}

// ClaimsPrefix is the claim verification service prefix (Claims.Prefix
// or DefaultClaimsPrefix).
func (s *Server) ClaimsPrefix() string {
	p := strings.TrimRight(s.cfg.Claims.Prefix, "/")
	if p == "" {
		p = DefaultClaimsPrefix
	}
	return p
}

// TierOffers returns the offer of every claim tier sold (sell.App.TierOffers).
func (s *Server) TierOffers() map[string]payment.Offer { return s.app.TierOffers() }
