package shapes

import "github.com/assaykit/assay/niche"

// Request shapes of the niche curator routes (/v1/admin/niche/...). The
// interface document defines no operation that accepts a NicheDraft; these
// wrap it with what curation needs: the operation (niche.Op, embedded: an
// operationId for idempotency, the actor and reason kept in the revision
// log, with their bounds) and the expected revision for optimistic
// concurrency. Field names are camelCase except inside the NicheDraft,
// which keeps the document's names.

// NicheCreateRequest is the body of POST /v1/admin/niche/evaluations.
// Without an operationId a repeated call creates another evaluation.
type NicheCreateRequest struct {
	niche.Op
	Draft niche.Draft `json:"draft" validate:"required"`
}

// NicheReviseRequest is the body of PUT /v1/admin/niche/evaluations/{niche_id}.
type NicheReviseRequest struct {
	niche.Op
	// ExpectedRevision must be the current revision (409 otherwise).
	ExpectedRevision int         `json:"expectedRevision" validate:"required,gte=1"`
	Draft            niche.Draft `json:"draft" validate:"required"`
}

// NicheTransitionRequest is the body of the publish and withdraw routes.
type NicheTransitionRequest struct {
	niche.Op
	ExpectedRevision int `json:"expectedRevision" validate:"required,gte=1"`
}

// NicheSignalInput is one signal submitted for ingestion.
type NicheSignalInput struct {
	// ID is optional: "sig_" + 32 lowercase hex chosen by the caller.
	ID   *string `json:"id" validate:"omitnil,len=36"`
	Kind string  `json:"kind" validate:"required,oneof=complaint question review job_post feature_request forum_post news_report regulatory_notice recall_notice market_report"`
	// SourceURL is an absolute http(s) URL.
	SourceURL string `json:"sourceUrl" validate:"required,min=8,max=2048"`
	// Origin names the collector, e.g. "reddit" ([a-z0-9._-], 1..64).
	Origin string `json:"origin" validate:"required,min=1,max=64"`
	// ExternalID deduplicates within the origin (default: the URL).
	ExternalID string `json:"externalId" validate:"omitempty,max=2048"`
	Title      string `json:"title" validate:"required,min=3,max=300"`
	Excerpt    string `json:"excerpt" validate:"omitempty,max=1000"`
	// ObservedAt is when the source says the item happened (RFC 3339).
	ObservedAt string `json:"observedAt" validate:"required,min=10,max=40"`
	// CollectedAt is when the collector fetched it (RFC 3339; default now).
	CollectedAt *string          `json:"collectedAt" validate:"omitnil,min=10,max=40"`
	License     string           `json:"license" validate:"required,min=1,max=200"`
	Attribution string           `json:"attribution" validate:"omitempty,max=200"`
	Engagement  map[string]int64 `json:"engagement" validate:"omitempty,max=8"`
	// State is pending (default) or accepted.
	State *string `json:"state" validate:"omitnil,oneof=pending accepted"`
}

// NicheSignalBatch is the body of POST /v1/admin/niche/signals.
type NicheSignalBatch struct {
	Signals []NicheSignalInput `json:"signals" validate:"required,min=1,max=1000,dive"`
}

// NicheSignalListQuery holds the query of GET /v1/admin/niche/signals.
type NicheSignalListQuery struct {
	State  *string `json:"state" query:"state" validate:"omitnil,oneof=pending accepted rejected"`
	Origin *string `json:"origin" query:"origin" validate:"omitnil,max=64"`
	Limit  int     `json:"limit" query:"limit" validate:"gte=1,lte=500"`
}

// SetDefaults sets the defaults (limit 100).
func (q *NicheSignalListQuery) SetDefaults() { *q = NicheSignalListQuery{Limit: 100} }
