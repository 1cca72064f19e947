package shapes

// AdminOrderSummaryQuery holds the query parameters of GET
// /v1/admin/orders/summary: the number of days (ending now) to total.
type AdminOrderSummaryQuery struct {
	Days int `json:"days" query:"days" validate:"gte=1,lte=3650"` // default 30
}

// SetDefaults sets the default period.
func (q *AdminOrderSummaryQuery) SetDefaults() { *q = AdminOrderSummaryQuery{Days: 30} }
