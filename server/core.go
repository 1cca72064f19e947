package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/shapes"
)

// coreRoutes are the routes every server has: liveness, readiness and the
// capability list.
func (s *Server) coreRoutes() ([]*Route, error) {
	routes := []*Route{
		{ID: "health.live", Summary: "Liveness: the process is serving HTTP.", Status: "stable",
			Method: "GET", Path: "/healthz", Handler: http.HandlerFunc(s.healthz)},
		{ID: "health.ready", Summary: "Readiness: the store, the provider and payments are usable.", Status: "stable",
			Method: "GET", Path: "/readyz", Handler: http.HandlerFunc(s.readyz)},
		{ID: "capabilities", Summary: "List every operation this server offers.", Status: "stable",
			Method: "GET", Path: "/v1/capabilities", Handler: http.HandlerFunc(s.capabilities)},
	}
	if s.cfg.Metrics != nil {
		routes = append(routes, &Route{ID: "metrics", Summary: "Operational metrics in the Prometheus text format.",
			Status: "stable", Method: "GET", Path: "/metrics", Handler: s.cfg.Metrics})
	}
	return routes, nil
}

// coreRouteIDs are the ids of coreRoutes.
var coreRouteIDs = []string{"health.live", "health.ready", "capabilities", "metrics"}

// prefixCoreRoutes serves the core routes under every service prefix too,
// so that a host that mounts this handler under a prefix (its services'
// prefix, e.g. /api) finds every route under it: /api/healthz,
// /api/readyz, /api/v1/capabilities as well as /api/v1/claims/verify. It
// adds no route of its own.
func (s *Server) prefixCoreRoutes() ([]*Route, error) {
	var prefixes []string
	for _, r := range s.routes {
		for _, p := range r.Prefixes {
			if p = strings.TrimRight(p, "/"); p != "" && !slices.Contains(prefixes, p) {
				prefixes = append(prefixes, p)
			}
		}
	}
	for _, r := range s.routes {
		if slices.Contains(coreRouteIDs, r.ID) {
			r.Prefixes = prefixes
		}
	}
	return nil, nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, Health{Status: "ok"})
}

// readyz runs every readiness check with a short deadline and answers 200
// when all pass, 503 otherwise, naming each check's outcome.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]string{}
	status := http.StatusOK
	for name, check := range s.cfg.Ready {
		if err := check(ctx); err != nil {
			checks[name] = err.Error()
			status = http.StatusServiceUnavailable
		} else {
			checks[name] = "ok"
		}
	}
	overall := "ok"
	if status != http.StatusOK {
		overall = "unavailable"
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, status, Readiness{Status: overall, Checks: checks})
}

// capabilities lists the operations of the routing table, sorted by path
// then method.
func (s *Server) capabilities(w http.ResponseWriter, r *http.Request) {
	resp := shapes.CapabilitiesResponse{Service: s.cfg.Service, Version: Version, Capabilities: []shapes.Capability{}}
	for _, rt := range s.routes {
		if rt.Page {
			continue // pages for people are not capabilities
		}
		status := rt.Status
		if status == "" {
			status = "stable"
		}
		resp.Capabilities = append(resp.Capabilities, shapes.Capability{
			ID: rt.ID, Summary: rt.Summary, Status: status, Method: rt.Method, Path: rt.Path,
		})
	}
	sort.SliceStable(resp.Capabilities, func(i, j int) bool {
		a, b := resp.Capabilities[i], resp.Capabilities[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	httpjson.Write(w, http.StatusOK, resp)
}

// requireAdmin wraps an admin handler: the request must carry
// "Authorization: Bearer <AdminKey>" (or X-Admin-Key), compared in
// constant time. No configured key means admin routes are disabled.
func (s *Server) requireAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminKey == "" {
			httpjson.Detail(w, http.StatusForbidden, "Admin operations are disabled")
			return
		}
		got := r.Header.Get("X-Admin-Key")
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && got == "" {
			got = strings.TrimSpace(v)
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.AdminKey)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			httpjson.Detail(w, http.StatusUnauthorized, "A valid admin key is required")
			return
		}
		h.ServeHTTP(w, r)
	})
}
