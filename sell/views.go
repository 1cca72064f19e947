package sell

import (
	"encoding/json"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
)

// NicheEvaluationResponse is the answer of GET /v1/niches/{niche_id} and of
// its pay-per-call route: the full evaluation (with an unlock token when
// bought).
type NicheEvaluationResponse struct {
	*niche.Evaluation
	Access NicheAccess `json:"access"`
}

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

// NichePreviewResponse is the answer of GET /v1/niches/{niche_id}/preview.
type NichePreviewResponse struct {
	niche.Preview
	Access string `json:"access"`
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

// NicheSourcesResponse is the answer of GET /v1/sources.
type NicheSourcesResponse struct {
	Sources []niche.SourceStatus `json:"sources"`
	Note    string               `json:"note"`
}

// NicheLocked is the 401 of GET /v1/niches/{niche_id} without a subscription
// or unlock token: how to get either.
type NicheLocked struct {
	Detail string        `json:"detail"`
	Unlock *niche.Unlock `json:"unlock"`
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

// NicheSearchOffer names the paid search. Amounts are spelt amountMicrousd,
// as everywhere in the SDK.
type NicheSearchOffer struct {
	Method         string `json:"method"`
	Path           string `json:"path"`
	AmountMicroUSD int64  `json:"amountMicrousd"`
	PriceUSD       string `json:"priceUsd"`
}

// Order is an order as its payer sees it.
type Order struct {
	OrderID             string          `json:"orderId"`
	Status              string          `json:"status"`
	OfferID             string          `json:"offerId"`
	Tier                *string         `json:"tier"`
	Currency            string          `json:"currency"`
	AmountMicroUSD      int64           `json:"amountMicrousd"`
	PaymentProtocol     string          `json:"paymentProtocol"`
	PaymentMethod       string          `json:"paymentMethod"`
	Network             *string         `json:"network"`
	Payer               string          `json:"payer"`
	CustomerID          *string         `json:"customerId"`
	QuoteID             *string         `json:"quoteId"`
	SettlementReference *string         `json:"settlementReference"`
	Dev                 bool            `json:"dev"`
	ResultKind          *string         `json:"resultKind"`
	ResultID            *string         `json:"resultId"`
	ResultSHA256        *string         `json:"resultSha256"`
	FailureReason       *string         `json:"failureReason"`
	CreatedAt           string          `json:"createdAt"`
	UpdatedAt           string          `json:"updatedAt"`
	CompletedAt         *string         `json:"completedAt"`
	ReceiptID           *string         `json:"receiptId"`
	Receipt             json.RawMessage `json:"receipt"`
}

// ReceiptCheck is the answer of both receipt verification routes.
type ReceiptCheck struct {
	OrderID            string   `json:"orderId"`
	ReceiptID          *string  `json:"receiptId"`
	Valid              bool     `json:"valid"`
	SignatureValid     bool     `json:"signatureValid"`
	KeyKnown           bool     `json:"keyKnown"`
	ContentsValid      bool     `json:"contentsValid"`
	MatchesRecords     bool     `json:"matchesRecords"`
	KeyID              *string  `json:"keyId"`
	SignatureAlgorithm string   `json:"signatureAlgorithm"`
	Problems           []string `json:"problems"`
}

// Quote is the answer of POST /v1/quotes.
type Quote struct {
	QuoteID            string                  `json:"quoteId"`
	Tier               string                  `json:"tier"`
	Operation          string                  `json:"operation"`
	AmountMicroUSD     int64                   `json:"amountMicrousd"`
	CardAmountMicroUSD int64                   `json:"cardAmountMicrousd"`
	Currency           string                  `json:"currency"`
	CreatedAt          string                  `json:"createdAt"`
	ExpiresAt          string                  `json:"expiresAt"`
	QuoteHeader        string                  `json:"quoteHeader"`
	PaymentMethods     []string                `json:"paymentMethods"`
	PaymentOptions     []payment.PaymentOption `json:"paymentOptions"`
}

// CustomerOrders is the answer of GET /v1/customer/orders.
type CustomerOrders struct {
	Orders     []Order `json:"orders"`
	Limit      int     `json:"limit"`
	Offset     int     `json:"offset"`
	NextCursor *string `json:"nextCursor"`
}

// SubscriptionToken carries a subscriber token that is shown once.
type SubscriptionToken struct {
	Token          string      `json:"token"`
	TokenShownOnce bool        `json:"tokenShownOnce"`
	Subscription   *Subscriber `json:"subscription"`
}

// SubscriptionStatus is the answer of GET /v1/subscription/status.
type SubscriptionStatus struct {
	Available             bool        `json:"available"`
	PriceUsdPerMonth      *string     `json:"priceUsdPerMonth"`
	PriceMicrousdPerMonth *int64      `json:"priceMicrousdPerMonth"`
	Currency              string      `json:"currency"`
	Interval              string      `json:"interval"`
	Billing               *string     `json:"billing"`
	Development           bool        `json:"development"`
	Subscriber            *Subscriber `json:"subscriber,omitempty"`
}

// SubscriptionCheckout is the answer of POST /v1/subscription/checkout.
type SubscriptionCheckout struct {
	CheckoutURL           string  `json:"checkoutUrl"`
	SessionID             string  `json:"sessionId"`
	ExpiresAt             *string `json:"expiresAt"`
	ClaimURL              string  `json:"claimUrl"`
	PriceUsdPerMonth      string  `json:"priceUsdPerMonth"`
	PriceMicrousdPerMonth int64   `json:"priceMicrousdPerMonth"`
	Development           bool    `json:"development"`
}

// SubscriptionPortal is the answer of POST /v1/subscription/portal.
type SubscriptionPortal struct {
	PortalURL string `json:"portalUrl"`
}

// SubscriptionRevoked is the answer of POST /v1/subscription/token/revoke.
type SubscriptionRevoked struct {
	Revoked bool `json:"revoked"`
}

// SubscriptionWebhookReceipt is the answer to an accepted webhook delivery.
type SubscriptionWebhookReceipt struct {
	Received  bool `json:"received"`
	Duplicate bool `json:"duplicate"`
}

// Subscriber is a caller's own subscription.
type Subscriber struct {
	TokenValid        bool    `json:"tokenValid"`
	Active            bool    `json:"active"`
	Status            *string `json:"status"`
	SubscriptionID    *string `json:"subscriptionId"`
	CurrentPeriodEnd  *string `json:"currentPeriodEnd"`
	CancelAtPeriodEnd bool    `json:"cancelAtPeriodEnd"`
	AccessUntil       *string `json:"accessUntil"`
}

// SnapshotMetadata is the body of GET /v1/url-snapshots/{snapshot_id}:
// the EvidenceSnapshot fields plus where to get the content and how it
// was normalised (the interface documents leave this body open).
type SnapshotMetadata struct {
	*snapshot.Snapshot
	// Normalization names the algorithm behind normalizedSha256.
	Normalization *string `json:"normalization"`
	// Charset is the encoding the content was decoded with.
	Charset *string `json:"charset"`
	// ContentURL and WarcURL address the content and its WARC export
	// (null when there is no content).
	ContentURL *string `json:"contentUrl"`
	WarcURL    *string `json:"warcUrl"`
	// ExpiresAt is when the retention period ends and the snapshot may be
	// purged; null while it is held (a niche evaluation's evidence, kept
	// as long as the evaluation needs it).
	ExpiresAt *time.Time `json:"expiresAt"`
}

// Health is the answer of GET /healthz.
type Health struct {
	Status string `json:"status"`
}

// Readiness is the answer of GET /readyz: "ok" or "unavailable", and each
// check's outcome ("ok" or its error).
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}
