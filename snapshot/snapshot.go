// Package snapshot captures URLs safely, hashes what it captured in a
// reproducible way, and stores the records and bytes so that anyone can
// re-check a piece of evidence later.
package snapshot

import (
	"strings"
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

// Snapshot is the record of one capture: the interface document's
// EvidenceSnapshot. Only the documented fields are serialised.
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

	// Text is the normalised text of a capture made by this process (empty
	// when the record was loaded from a store or nothing was captured). It
	// is what Contains searches.
	Text string `json:"-"`
}

// Contains reports whether a quoted excerpt occurs in the captured text.
//
// PROVISIONAL: case-insensitive substring match; the tolerant matcher of the
// snapshot package replaces it.
func (s *Snapshot) Contains(excerpt string) bool {
	if s == nil || s.Text == "" || strings.TrimSpace(excerpt) == "" {
		return false
	}
	return strings.Contains(strings.ToLower(s.Text), strings.ToLower(strings.TrimSpace(excerpt)))
}
