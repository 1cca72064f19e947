package snapshot

import (
	"errors"
	"net/http"
	"time"
)

// Status classifies a finished capture.
type Status string

// Capture outcomes (the interface document's SnapshotStatus).
const (
	StatusCaptured    Status = "captured"
	StatusFailed      Status = "failed"
	StatusBlocked     Status = "blocked"
	StatusTooLarge    Status = "too_large"
	StatusUnsupported Status = "unsupported"
)

// Valid reports whether s is one of the five documented statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusCaptured, StatusFailed, StatusBlocked, StatusTooLarge, StatusUnsupported:
		return true
	}
	return false
}

// Errors returned by this package and by every Store and BlobStore
// implementation.
var (
	// ErrNotFound: no snapshot (or blob) with that identifier. Malformed
	// identifiers are not found either.
	ErrNotFound = errors.New("snapshot: not found")
	// ErrNoContent: the snapshot exists but has no stored content (the
	// capture did not succeed, or its content was purged).
	ErrNoContent = errors.New("snapshot: content not found")
	// ErrConflict: a record with that identifier already exists. Records
	// are immutable; they are never overwritten.
	ErrConflict = errors.New("snapshot: already exists")
	// ErrIntegrity: stored content does not match its recorded hash.
	ErrIntegrity = errors.New("snapshot: content does not match its hash")
	// ErrInvalid: a record or blob handed to a store is malformed.
	ErrInvalid = errors.New("snapshot: invalid record")
)

// Snapshot is the record of one capture: the interface document's
// EvidenceSnapshot. Only the documented fields are serialised; the other
// exported fields are kept in the store (Exchange, Charset, Normalization)
// or in memory only (Text).
type Snapshot struct {
	ID               string    `json:"snapshotId"`
	RequestedURL     string    `json:"requestedUrl"`
	FinalURL         *string   `json:"finalUrl"`
	RetrievedAt      time.Time `json:"retrievedAt"`
	Status           Status    `json:"status"`
	HTTPStatus       *int      `json:"httpStatus"`
	ContentType      *string   `json:"contentType"`
	ContentLength    *int64    `json:"contentLength"`
	RawSHA256        *string   `json:"rawSha256"`
	NormalizedSHA256 *string   `json:"normalizedSha256"`
	FailureReason    *string   `json:"failureReason"`

	// Normalization names the algorithm behind NormalizedSHA256
	// (NormalizationVersion at capture time); empty when there is none.
	Normalization string `json:"-"`
	// Charset is the character encoding the content was decoded with
	// (a WHATWG encoding name such as "utf-8" or "windows-1252"); empty for
	// content that is not text.
	Charset string `json:"-"`
	// Exchange is the HTTP exchange of the final hop, kept for the WARC
	// export. Nil when no response was received.
	Exchange *Exchange `json:"-"`

	// Text is the normalised text of a capture made by this process: what
	// NormalizedSHA256 hashes and what Contains searches. Records loaded
	// from a store do not carry it; Service.Recheck re-derives it from the
	// stored content.
	Text string `json:"-"`
}

// Exchange is what was sent and received on the final hop of a capture.
type Exchange struct {
	// Method and URL of the request (always GET; URL is the final URL).
	Method string `json:"method"`
	URL    string `json:"url"`
	// RequestHeader is every header the capturer sent, Host included.
	RequestHeader http.Header `json:"requestHeader"`
	// Proto is the response protocol, e.g. "HTTP/1.1" or "HTTP/2.0".
	Proto string `json:"proto"`
	// StatusCode and Status ("200 OK") of the response.
	StatusCode int    `json:"statusCode"`
	Status     string `json:"status"`
	// ResponseHeader is the response's header as received.
	ResponseHeader http.Header `json:"responseHeader"`
	// RemoteAddr is the IP address and port that was dialled.
	RemoteAddr string `json:"remoteAddr,omitempty"`
}

// Captured reports whether the snapshot holds content.
func (s *Snapshot) Captured() bool {
	return s != nil && s.Status == StatusCaptured && s.RawSHA256 != nil
}

// Clone returns a deep copy of s.
func (s *Snapshot) Clone() *Snapshot {
	if s == nil {
		return nil
	}
	c := *s
	c.FinalURL = clonePtr(s.FinalURL)
	c.HTTPStatus = clonePtr(s.HTTPStatus)
	c.ContentType = clonePtr(s.ContentType)
	c.ContentLength = clonePtr(s.ContentLength)
	c.RawSHA256 = clonePtr(s.RawSHA256)
	c.NormalizedSHA256 = clonePtr(s.NormalizedSHA256)
	c.FailureReason = clonePtr(s.FailureReason)
	if s.Exchange != nil {
		e := *s.Exchange
		e.RequestHeader = s.Exchange.RequestHeader.Clone()
		e.ResponseHeader = s.Exchange.ResponseHeader.Clone()
		c.Exchange = &e
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func ptr[T any](v T) *T { return &v }

// SafeContentType is the Content-Type under which the snapshot's content
// can be served without a browser ever rendering or running it: text
// (HTML, XHTML, XML, JSON and every text type) as "text/plain" with the
// charset the content was decoded with, anything else (PDF) as
// "application/octet-stream".
func (s *Snapshot) SafeContentType() string {
	if s == nil || s.ContentType == nil {
		return "application/octet-stream"
	}
	mt, _ := parseContentType(*s.ContentType)
	if mediaKind(mt) == kindNone {
		return "application/octet-stream"
	}
	cs := s.Charset
	if cs == "" {
		cs = "utf-8"
	}
	return "text/plain; charset=" + cs
}

// FileExtension suggests a file name extension for the content, from its
// original media type (".html", ".json", ".xml", ".txt", ".pdf", else
// ".bin").
func (s *Snapshot) FileExtension() string {
	if s == nil || s.ContentType == nil {
		return ".bin"
	}
	mt, _ := parseContentType(*s.ContentType)
	switch k := mediaKind(mt); {
	case k == kindHTML:
		return ".html"
	case k == kindJSON:
		return ".json"
	case k == kindXML:
		return ".xml"
	case k == kindText:
		return ".txt"
	case mt == "application/pdf":
		return ".pdf"
	}
	return ".bin"
}
