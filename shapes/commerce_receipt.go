package shapes

// ReceiptVerifyRequest is the body of POST /v1/receipts/{order_id}/verify:
// the signed receipt as it was received. A bare receipt object (without the
// "receipt" wrapper) is accepted too.
type ReceiptVerifyRequest struct {
	Receipt map[string]any `json:"receipt" validate:"required"`
}
