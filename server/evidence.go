package server

import (
	"bytes"
	"errors"
	"net/http"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
)

// EvidenceConfig configures the evidence bundles (package evidence): the
// routes GET {claims prefix}/v1/claims/verifications/{verification_id}/evidence.wacz
// and GET {niche prefix}/v1/niches/{niche_id}/evidence.wacz, and the
// bundle keys in /.well-known/jwks.json. The zero value mounts nothing.
//
// A bundle is a read of a paid result: the verification's bundle goes to
// the holder of an order token allowed to read it (the read route's
// check, verificationAccess) once that order is completed, and binds the
// bytes that order delivered and its receipt (Commerce.Cashier's ledger
// keeps both, so bundles need it). The evaluation's bundle goes to a
// subscriber (no receipt: the evaluation's bytes are bound by the bundle
// signature) or to the holder of a pay-per-call unlock token whose order
// is completed (that order's bytes and receipt).
type EvidenceConfig struct {
	// Builder makes the bundles. Nil mounts nothing.
	Builder *evidence.Builder
}

// ledger is the commerce ledger, or nil.
func (s *Server) ledger() payment.Ledger {
	if c := s.cfg.Commerce.Cashier; c != nil {
		return c.Ledger()
	}
	if g, ok := s.cfg.Paywall.(*httpgate.Gate); ok {
		return g.Cashier().Ledger()
	}
	return nil
}

// PublishedKeys is the JWKS served at /.well-known/jwks.json: the receipt
// keys, then the evidence bundle keys.
func (s *Server) PublishedKeys() payment.JWKS {
	var j payment.JWKS
	if c := s.cfg.Commerce.Cashier; c != nil {
		j = c.Keys().JWKS()
	}
	if b := s.cfg.Evidence.Builder; b != nil {
		j.Keys = append(j.Keys, b.Keys().JWKs()...)
	}
	if j.Keys == nil {
		j.Keys = []payment.JWK{}
	}
	return j
}

// jwksURL is where the JWKS is published.
func (s *Server) jwksURL(r *http.Request) string {
	return s.baseURL(r) + "/.well-known/jwks.json"
}

// baseURL is PublicBaseURL, or the request's scheme and host.
func (s *Server) baseURL(r *http.Request) string {
	if b := strings.TrimRight(s.cfg.PublicBaseURL, "/"); b != "" {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// EvidencePath is the path of a verification's evidence bundle ("" when
// bundles are not served), for the links of MCP results and A2A
// artifacts.
func (s *Server) EvidencePath(verificationID string) string {
	if s.cfg.Evidence.Builder == nil || s.cfg.Claims.Engine == nil {
		return ""
	}
	return s.ClaimsPrefix() + "/v1/claims/verifications/" + verificationID + "/evidence.wacz"
}

// evidenceRoute is the route of a bundle.
func evidenceRoute(id, summary, path string, prefixes []string, h http.HandlerFunc) *Route {
	return &Route{ID: id, Summary: summary, Status: "paid-preview", Method: http.MethodGet, Path: path, Prefixes: prefixes, Handler: h}
}

// verificationEvidenceRoute is the bundle route beside the read route.
func (s *Server) verificationEvidenceRoute(prefix string) []*Route {
	if s.cfg.Evidence.Builder == nil {
		return nil
	}
	return []*Route{evidenceRoute("claims.verification.evidence",
		"Download the signed evidence bundle (WACZ) of a verification: its pages, the result as delivered and its receipt (the payer's order token).",
		"/v1/claims/verifications/{verification_id}/evidence.wacz", []string{prefix}, s.getVerificationEvidence)}
}

func (s *Server) getVerificationEvidence(w http.ResponseWriter, r *http.Request) {
	rec, orderID, ok := s.verificationAccess(w, r)
	if !ok {
		return
	}
	l := s.ledger()
	if l == nil || orderID == "" {
		httpjson.Detail(w, http.StatusNotFound, "This verification was not sold through an order: it has no evidence bundle")
		return
	}
	resp, err := l.Response(r.Context(), orderID)
	if errors.Is(err, payment.ErrOrderNotFound) {
		httpjson.Detail(w, http.StatusNotFound, "The result of this order was streamed and not kept: no bundle can bind it")
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	receipt, err := l.Receipt(r.Context(), orderID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	form := evidence.FormResult
	if bytes.Contains(resp.Body[:min(len(resp.Body), 64)], []byte(`"jsonrpc"`)) {
		form = evidence.FormA2A
	}
	s.writeBundle(w, r, evidence.VerificationSource(rec, orderID, resp.Body, form, receipt), rec.Result.VerificationID)
}

// writeBundle prepares and streams a bundle.
func (s *Server) writeBundle(w http.ResponseWriter, r *http.Request, src *evidence.Source, name string) {
	src.JWKS, src.JWKSURL = s.PublishedKeys(), s.jwksURL(r)
	bd, err := s.cfg.Evidence.Builder.Prepare(r.Context(), src)
	switch {
	case errors.Is(err, evidence.ErrEvidenceGone):
		httpjson.Detail(w, http.StatusGone, "A page of this evidence is no longer stored")
		return
	case errors.Is(err, evidence.ErrNotBundlable):
		httpjson.Detail(w, http.StatusNotFound, "This result has no evidence bundle")
		return
	case err != nil:
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", evidence.MediaType)
	h.Set("Content-Disposition", `attachment; filename="`+name+`.wacz"`)
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if err := bd.WriteTo(r.Context(), w); err != nil {
		// The status is sent: the client gets a truncated file, which
		// fails its first check.
		s.log.WarnContext(r.Context(), "evidence bundle cut short", "bundle", name, "err", err)
	}
}

// verificationAccess is the access check of the reads of a stored
// verification (the result and its evidence bundle): the admin key, or the
// token of a completed order that delivered it (sell.App.Verification).
// It returns the record and that order's id ("" for the admin); otherwise
// it has answered 401, 404 (unknown ids and foreign tokens alike) or 409.
func (s *Server) verificationAccess(w http.ResponseWriter, r *http.Request) (*claims.Record, string, bool) {
	admin := s.cfg.AdminKey != ""
	if admin {
		got := r.Header.Get("X-Admin-Key")
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && got == "" {
			got = strings.TrimSpace(v)
		}
		admin = got != "" && ids.Equal(got, s.cfg.AdminKey)
	}
	rec, ord, err := s.app.Verification(r.Context(), r.PathValue("verification_id"),
		sell.ReadAccess{Admin: admin, OrderToken: r.Header.Get(httpgate.HeaderOrderToken)})
	if err != nil {
		s.writeError(w, r, err)
		return nil, "", false
	}
	if ord == nil {
		return rec, "", true
	}
	return rec, ord.ID, true
}

// nicheEvidenceRoute is the bundle route beside the full read.
func (n *nicheService) evidenceRoute(prefixes []string) []*Route {
	if n.s.cfg.Evidence.Builder == nil {
		return nil
	}
	return []*Route{evidenceRoute("niche.evidence",
		"Download the signed evidence bundle (WACZ) of a niche evaluation: the captures of its signals (a subscription or a pay-per-call unlock token).",
		"/v1/niches/{niche_id}/evidence.wacz", prefixes, n.evidence)}
}

func (n *nicheService) evidence(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("niche_id")
	ev, grant, ok := n.fullAccess(w, r, id)
	if !ok {
		return
	}
	var delivered, receipt []byte
	orderID := ""
	if grant.Kind == "pay_per_call" && grant.OrderID != "" {
		orderID = grant.OrderID
		l := n.s.ledger()
		if l == nil {
			httpjson.Detail(w, http.StatusNotFound, "This evaluation has no evidence bundle for a pay-per-call token")
			return
		}
		resp, err := l.Response(r.Context(), orderID)
		if err == nil {
			receipt, err = l.Receipt(r.Context(), orderID)
		}
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		delivered = resp.Body
	} else {
		b, err := httpjson.Marshal(NicheEvaluationResponse{Evaluation: ev, Access: NicheAccess{Kind: grant.Kind}})
		if err != nil {
			n.s.writeError(w, r, err)
			return
		}
		delivered = b
	}
	n.s.writeBundle(w, r, evidence.EvaluationSource(ev, orderID, delivered, receipt), id)
}
