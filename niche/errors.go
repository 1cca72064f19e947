package niche

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Typed errors below wrap them, so callers test with
// errors.Is and read details with errors.As.
var (
	// ErrNotFound reports an unknown niche or signal, or one that the
	// caller may not see (an unpublished niche on a public read).
	ErrNotFound = errors.New("niche: not found")
	// ErrConflict reports an optimistic-concurrency failure: the expected
	// revision is not the current one.
	ErrConflict = errors.New("niche: revision conflict")
	// ErrOperationConflict reports an operation id reused for a different
	// request.
	ErrOperationConflict = errors.New("niche: operation id reused for a different request")
	// ErrInvalid reports input that breaks a documented rule.
	ErrInvalid = errors.New("niche: invalid input")
	// ErrSignalRefs reports linked signal ids that are unknown or rejected.
	ErrSignalRefs = errors.New("niche: unusable signal ids")
	// ErrEvidence reports a publication that does not meet the evidence
	// floor.
	ErrEvidence = errors.New("niche: not enough evidence to publish")
	// ErrEmptyCatalogue reports that no evaluation is published yet.
	ErrEmptyCatalogue = errors.New("niche: the catalogue is empty")
	// ErrQuotaExceeded reports a caller past its free daily quota.
	ErrQuotaExceeded = errors.New("niche: quota exceeded")
	// ErrInvalidToken reports an unlock token that is malformed, forged,
	// expired or bound to another niche.
	ErrInvalidToken = errors.New("niche: invalid unlock token")
)

// NotFoundError names what was not found. It matches ErrNotFound.
type NotFoundError struct {
	// What is "Niche" or "Signal".
	What string
	// ID is the identifier asked for.
	ID string
}

func (e *NotFoundError) Error() string { return e.What + " not found" }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// RevisionConflictError is an optimistic-concurrency failure. It matches
// ErrConflict.
type RevisionConflictError struct {
	ID       string
	Expected int
	Current  int
}

func (e *RevisionConflictError) Error() string {
	return fmt.Sprintf("Revision conflict: expected revision %d but the current revision of %s is %d", e.Expected, e.ID, e.Current)
}

// Is reports whether target is ErrConflict.
func (e *RevisionConflictError) Is(target error) bool { return target == ErrConflict }

// InvalidError is a rule violation on one input field. It matches
// ErrInvalid.
type InvalidError struct {
	// Field is the input's path, e.g. "title", "signals[3].sourceUrl".
	Field string
	// Reason is a sentence for people.
	Reason string
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// SignalRefError names linked signal ids that do not exist or were
// rejected by moderation. It matches ErrSignalRefs.
type SignalRefError struct {
	Unknown  []string
	Rejected []string
}

func (e *SignalRefError) Error() string {
	var parts []string
	if len(e.Unknown) > 0 {
		parts = append(parts, "Unknown signal ids: "+strings.Join(e.Unknown, ", "))
	}
	if len(e.Rejected) > 0 {
		parts = append(parts, "Rejected signal ids: "+strings.Join(e.Rejected, ", "))
	}
	return strings.Join(parts, "; ")
}

// Is reports whether target is ErrSignalRefs.
func (e *SignalRefError) Is(target error) bool { return target == ErrSignalRefs }

// EvidenceError is a failed publication floor. It matches ErrEvidence.
type EvidenceError struct {
	// DemandSignals counts the linked demand signals that are not
	// rejected, once per page (EvidenceSummary.DemandPageCount).
	DemandSignals int
	// IndependentSources counts their registrable domains.
	IndependentSources    int
	MinDemandSignals      int
	MinIndependentSources int
	// CapturedOnly says that only signals whose page was captured were
	// counted (Options.Capturer without Options.CountUncaptured).
	CapturedOnly bool
}

func (e *EvidenceError) Error() string {
	captured := ""
	if e.CapturedOnly {
		captured = " whose pages were captured"
	}
	return fmt.Sprintf("Publishing requires at least %d demand signals on distinct pages from at least %d independent source domains; the draft links %d%s from %d",
		e.MinDemandSignals, e.MinIndependentSources, e.DemandSignals, captured, e.IndependentSources)
}

// Is reports whether target is ErrEvidence.
func (e *EvidenceError) Is(target error) bool { return target == ErrEvidence }

// QuotaError is a caller past its daily quota. It matches ErrQuotaExceeded.
type QuotaError struct {
	Limit   int
	ResetAt time.Time
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("Free search limit reached: %d searches per UTC day", e.Limit)
}

// Is reports whether target is ErrQuotaExceeded.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// ImportError lists the lines of a bulk import that were refused; nothing
// was stored. It matches ErrInvalid.
type ImportError struct {
	Lines []LineError
}

// LineError is one refused import line (1-based).
type LineError struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (e *ImportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Import refused: %d invalid line", len(e.Lines))
	if len(e.Lines) != 1 {
		b.WriteByte('s')
	}
	for i, l := range e.Lines {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Lines)-5)
			break
		}
		fmt.Fprintf(&b, "; line %d: %s", l.Line, l.Reason)
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *ImportError) Is(target error) bool { return target == ErrInvalid }
