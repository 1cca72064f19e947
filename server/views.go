package server

import "github.com/assaykit/assay/sell"

// The answers of the routes are the application's shapes (package sell),
// named here too for embedders that read this package's documentation.
type (
	CustomerOrders             = sell.CustomerOrders
	Health                     = sell.Health
	NicheAccess                = sell.NicheAccess
	NicheEvaluationResponse    = sell.NicheEvaluationResponse
	NicheListResponse          = sell.NicheListResponse
	NicheLocked                = sell.NicheLocked
	NichePreviewResponse       = sell.NichePreviewResponse
	NicheSearchOffer           = sell.NicheSearchOffer
	NicheSearchResponse        = sell.NicheSearchResponse
	NicheSourcesResponse       = sell.NicheSourcesResponse
	Order                      = sell.Order
	Quote                      = sell.Quote
	Readiness                  = sell.Readiness
	ReceiptCheck               = sell.ReceiptCheck
	SnapshotMetadata           = sell.SnapshotMetadata
	Subscriber                 = sell.Subscriber
	SubscriptionCheckout       = sell.SubscriptionCheckout
	SubscriptionPortal         = sell.SubscriptionPortal
	SubscriptionRevoked        = sell.SubscriptionRevoked
	SubscriptionStatus         = sell.SubscriptionStatus
	SubscriptionToken          = sell.SubscriptionToken
	SubscriptionWebhookReceipt = sell.SubscriptionWebhookReceipt
)
