package shapes

// ClaimVerificationRequest is the body of every verification tier (no extra
// properties).
type ClaimVerificationRequest struct {
	Claim            string   `json:"claim"`            // required, length 3..4000
	AsOf             *Date    `json:"asOf"`             // date or null, default null
	Jurisdiction     *string  `json:"jurisdiction"`     // max 100 or null, default null
	FreshnessHours   *int     `json:"freshnessHours"`   // 1..8760 or null, default 168
	SourcePolicy     string   `json:"sourcePolicy"`     // official_only | authoritative | open_web, default authoritative
	MinimumSources   int      `json:"minimumSources"`   // 1..10, default 2
	MaxSources       int      `json:"maxSources"`       // 1..20, default 8
	AllowedDomains   []string `json:"allowedDomains"`   // max 100 items, default []
	BlockedDomains   []string `json:"blockedDomains"`   // max 100 items, default []
	IncludeConflicts bool     `json:"includeConflicts"` // default true
	Language         string   `json:"language"`         // length 2..35, default "auto"
}

// SetDefaults sets the documented defaults; Decode calls it before reading
// the input.
func (r *ClaimVerificationRequest) SetDefaults() {
	h := 168
	*r = ClaimVerificationRequest{
		FreshnessHours:   &h,
		SourcePolicy:     "authoritative",
		MinimumSources:   2,
		MaxSources:       8,
		AllowedDomains:   []string{},
		BlockedDomains:   []string{},
		IncludeConflicts: true,
		Language:         "auto",
	}
}
