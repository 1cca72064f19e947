package shapes

// ClaimVerificationRequest is the body of every verification tier (no extra
// properties).
type ClaimVerificationRequest struct {
	Claim            string   `json:"claim" validate:"required,min=3,max=4000"`
	AsOf             *Date    `json:"asOf"`                                    // date or null, default null
	Jurisdiction     *string  `json:"jurisdiction" validate:"omitnil,max=100"` // default null
	FreshnessHours   *int     `json:"freshnessHours" validate:"omitnil,gte=1,lte=8760"`
	SourcePolicy     string   `json:"sourcePolicy" validate:"oneof=official_only authoritative open_web"`
	MinimumSources   int      `json:"minimumSources" validate:"gte=1,lte=10"`
	MaxSources       int      `json:"maxSources" validate:"gte=1,lte=20"`
	AllowedDomains   []string `json:"allowedDomains" validate:"max=100"`
	BlockedDomains   []string `json:"blockedDomains" validate:"max=100"`
	IncludeConflicts bool     `json:"includeConflicts"`
	Language         string   `json:"language" validate:"min=2,max=35"`
}

func (*ClaimVerificationRequest) extraForbidden() {}

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
