package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/snapshot"
)

// SnapshotsConfig configures URL snapshot retrieval. The zero value mounts
// nothing.
//
// Retrieval is public: no credential is needed. Snapshot identifiers are
// 128-bit random capabilities that only appear in the verification
// results that cite them, the content is public web content, and whoever
// a paid result is shared with must be able to check its evidence. The
// content is served so that it can never run in the API's origin
// (attachment, nosniff, sandbox CSP, text/plain or octet-stream only).
type SnapshotsConfig struct {
	// Service serves the records, content and WARC exports. Nil mounts no
	// routes.
	Service *snapshot.Service
	// Prefixes are service prefixes under which the routes are also
	// served, e.g. "/claim-verification".
	Prefixes []string
}

// snapshotRoutes returns the routes of URL snapshot retrieval.
func (s *Server) snapshotRoutes() ([]*Route, error) {
	svc := s.cfg.Snapshots.Service
	if svc == nil {
		return nil, nil
	}
	prefixes := s.cfg.Snapshots.Prefixes
	return []*Route{
		{ID: "snapshots.get", Summary: "Read a URL snapshot's record (hashes, status, retrieval time).", Status: "paid-preview",
			Method: "GET", Path: "/v1/url-snapshots/{snapshot_id}", Prefixes: prefixes,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.snapshotGet(w, r, svc) })},
		{ID: "snapshots.content", Summary: "Download the immutable raw bytes a URL snapshot captured.", Status: "paid-preview",
			Method: "GET", Path: "/v1/url-snapshots/{snapshot_id}/content", Prefixes: prefixes,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.snapshotContent(w, r, svc) })},
		{ID: "snapshots.warc", Summary: "Download a URL snapshot as a WARC/1.1 record set (warcinfo, request, response).", Status: "paid-preview",
			Method: "GET", Path: "/v1/url-snapshots/{snapshot_id}/warc", Prefixes: prefixes,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.snapshotWARC(w, r, svc) })},
	}, nil
}

func (s *Server) snapshotGet(w http.ResponseWriter, r *http.Request, svc *snapshot.Service) {
	snap, err := svc.Get(r.Context(), r.PathValue("snapshot_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	held, err := svc.Held(r.Context(), snap.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	md := SnapshotMetadata{Snapshot: snap}
	if !held {
		exp := snap.RetrievedAt.Add(svc.Retention()).UTC()
		md.ExpiresAt = &exp
	}
	if snap.Normalization != "" {
		md.Normalization = &snap.Normalization
	}
	if snap.Charset != "" {
		md.Charset = &snap.Charset
	}
	if snap.Captured() {
		p := httpjson.ExternalPath(r)
		c, wu := p+"/content", p+"/warc"
		md.ContentURL, md.WarcURL = &c, &wu
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	httpjson.Write(w, http.StatusOK, md)
}

// contentSafety sets the headers that keep captured content inert.
func contentSafety(h http.Header, filename string) {
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
}

func (s *Server) snapshotContent(w http.ResponseWriter, r *http.Request, svc *snapshot.Service) {
	snap, blob, err := svc.Open(r.Context(), r.PathValue("snapshot_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer blob.Close()
	h := w.Header()
	h.Set("Content-Type", snap.SafeContentType())
	contentSafety(h, snap.ID+snap.FileExtension())
	h.Set("X-Content-SHA256", *snap.RawSHA256)
	h.Set("ETag", `"`+*snap.RawSHA256+`"`)
	// ServeContent answers conditional and range requests and HEAD.
	http.ServeContent(w, r, "", snap.RetrievedAt, blob)
}

func (s *Server) snapshotWARC(w http.ResponseWriter, r *http.Request, svc *snapshot.Service) {
	id := r.PathValue("snapshot_id")
	export, closer, err := svc.WARC(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer closer.Close()
	h := w.Header()
	h.Set("Content-Type", "application/warc")
	contentSafety(h, id+".warc")
	h.Set("Content-Length", strconv.FormatInt(export.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := export.WriteTo(w); err != nil {
		s.log.WarnContext(r.Context(), "snapshot WARC export interrupted", "id", id, "err", err)
	}
}

// snapshotRetryAfter is the Retry-After of a 503 the snapshot storage caused
// (snapshot.ErrUnavailable), "" for other errors.
func snapshotRetryAfter(err error) string {
	if errors.Is(err, snapshot.ErrUnavailable) {
		return strconv.Itoa(int(snapshot.RetryAfterUnavailable / time.Second))
	}
	return ""
}

// snapshotStatus maps the snapshot service's errors to statuses.
func snapshotStatus(err error) (int, string, bool) {
	switch {
	case errors.Is(err, snapshot.ErrNoContent):
		return http.StatusNotFound, "Snapshot content not found", true
	case errors.Is(err, snapshot.ErrNotFound):
		return http.StatusNotFound, "Snapshot not found", true
	case errors.Is(err, snapshot.ErrUnavailable):
		return http.StatusServiceUnavailable, "Snapshot storage is unavailable; retry later", true
	case errors.Is(err, snapshot.ErrIntegrity):
		return http.StatusInternalServerError, "Snapshot content failed its integrity check", true
	}
	return 0, "", false
}
