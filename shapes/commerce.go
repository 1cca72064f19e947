package shapes

// QuoteRequest is the body of POST /v1/quotes. The tier is free text here
// (the document gives no enumeration); the commerce service rejects unknown
// tiers itself.
type QuoteRequest struct {
	Tier string `json:"tier"` // default "standard"
}

// SetDefaults sets the documented default tier.
func (r *QuoteRequest) SetDefaults() { *r = QuoteRequest{Tier: "standard"} }

// CustomerCreateRequest registers a customer (admin operation).
type CustomerCreateRequest struct {
	Name  string  `json:"name" validate:"required,min=1,max=200"`
	Email *string `json:"email" validate:"omitnil,max=320"` // default null
}

// CapabilitiesResponse lists the operations a server offers (no extra
// properties, all required).
type CapabilitiesResponse struct {
	Service      string       `json:"service" validate:"required"`
	Version      string       `json:"version" validate:"required"`
	Capabilities []Capability `json:"capabilities" validate:"required"`
}

// Capability is one operation of a CapabilitiesResponse (no extra
// properties, all required).
type Capability struct {
	ID      string `json:"id" validate:"required"`
	Summary string `json:"summary" validate:"required"`
	Status  string `json:"status" validate:"required"`
	Method  string `json:"method" validate:"required"`
	Path    string `json:"path" validate:"required"`
}
