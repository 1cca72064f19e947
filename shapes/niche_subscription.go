package shapes

// SubscriptionClaimRequest is the body of POST /v1/subscription/claim (not
// in the interface documents): the checkout session id that the payment
// processor passed to the success URL, exchanged once for the subscriber
// token.
type SubscriptionClaimRequest struct {
	SessionID string `json:"sessionId" validate:"required,min=1,max=255"`
}
