package shapes

// CustomerOrdersQuery holds the query parameters of GET
// /v1/customer/orders: a page of the customer's orders, newest first.
// Cursor (from nextCursor of the previous page) wins over Offset.
type CustomerOrdersQuery struct {
	Limit  int    `json:"limit" query:"limit" validate:"gte=1,lte=200"`         // 1..200, default 50
	Offset int    `json:"offset" query:"offset" validate:"gte=0,lte=100000000"` // default 0
	Cursor string `json:"cursor" query:"cursor" validate:"omitempty,max=512"`   // opaque, default ""
}

// SetDefaults sets the defaults.
func (q *CustomerOrdersQuery) SetDefaults() { *q = CustomerOrdersQuery{Limit: 50} }
