package shapes

// QuoteRequest is the body of POST /v1/quotes.
type QuoteRequest struct {
	Tier string `json:"tier"` // default "standard"
}

// SetDefaults sets the documented default tier.
func (r *QuoteRequest) SetDefaults() { *r = QuoteRequest{Tier: "standard"} }

// CustomerCreateRequest registers a customer (admin operation).
type CustomerCreateRequest struct {
	Name  string  `json:"name"`  // 1..200
	Email *string `json:"email"` // max 320 or null
}

// CapabilitiesResponse lists the operations a server offers (no extra
// properties, all required).
type CapabilitiesResponse struct {
	Service      string       `json:"service"`
	Version      string       `json:"version"`
	Capabilities []Capability `json:"capabilities"`
}

// Capability is one operation of a CapabilitiesResponse.
type Capability struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
	Status  string `json:"status"`
	Method  string `json:"method"`
	Path    string `json:"path"`
}
