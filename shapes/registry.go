package shapes

import "sort"

// shapeTable maps every shape name of the interface documents to a
// constructor of its zero value.
func shapeTable() map[string]func() any {
	return map[string]func() any{
		"NicheDraft":                  func() any { return new(NicheDraft) },
		"TagFilter":                   func() any { return new(TagFilter) },
		"NumericFilter":               func() any { return new(NumericFilter) },
		"OSMFeatureQuery":             func() any { return new(OSMFeatureQuery) },
		"Requirement":                 func() any { return new(Requirement) },
		"SearchStep":                  func() any { return new(SearchStep) },
		"SearchProgram":               func() any { return new(SearchProgram) },
		"SearchBranch":                func() any { return new(SearchBranch) },
		"RouteEndpoint":               func() any { return new(RouteEndpoint) },
		"RouteRequest":                func() any { return new(RouteRequest) },
		"ExploreRequest":              func() any { return new(ExploreRequest) },
		"SearchTaskRequest":           func() any { return new(SearchTaskRequest) },
		"IntentRequest":               func() any { return new(IntentRequest) },
		"SearchParameters":            func() any { return new(SearchParameters) },
		"PoiViewRequest":              func() any { return new(PoiViewRequest) },
		"HiddenPoiRequest":            func() any { return new(HiddenPoiRequest) },
		"HistoryItem":                 func() any { return new(HistoryItem) },
		"PublishRequest":              func() any { return new(PublishRequest) },
		"RemovedItemRequest":          func() any { return new(RemovedItemRequest) },
		"ReactionRequest":             func() any { return new(ReactionRequest) },
		"CommentRequest":              func() any { return new(CommentRequest) },
		"WithdrawRequest":             func() any { return new(WithdrawRequest) },
		"ThumbnailRequest":            func() any { return new(ThumbnailRequest) },
		"TransferRequest":             func() any { return new(TransferRequest) },
		"LicenseRequest":              func() any { return new(LicenseRequest) },
		"AvatarUpload":                func() any { return new(AvatarUpload) },
		"ContactMessageRequest":       func() any { return new(ContactMessageRequest) },
		"CustomerCreateRequest":       func() any { return new(CustomerCreateRequest) },
		"StatusIncidentCreateRequest": func() any { return new(StatusIncidentCreateRequest) },
		"StatusIncidentUpdateRequest": func() any { return new(StatusIncidentUpdateRequest) },
		"StatusSubscriptionRequest":   func() any { return new(StatusSubscriptionRequest) },
		"SupportMessageRequest":       func() any { return new(SupportMessageRequest) },
		"SupportTicketCreateRequest":  func() any { return new(SupportTicketCreateRequest) },
		"SupportTicketUpdateRequest":  func() any { return new(SupportTicketUpdateRequest) },
		"QuoteRequest":                func() any { return new(QuoteRequest) },
		"CapabilitiesResponse":        func() any { return new(CapabilitiesResponse) },
		"Capability":                  func() any { return new(Capability) },
		"ClaimVerificationRequest":    func() any { return new(ClaimVerificationRequest) },
		"HTTPValidationError":         func() any { return new(ValidationError) },
		"ValidationError":             func() any { return new(ErrorDetail) },
		"NicheListQuery":              func() any { return new(NicheListQuery) },
		"NicheSearchQuery":            func() any { return new(NicheSearchQuery) },

		// Shapes of routes the documents do not define (curation,
		// commerce, subscriptions): ours, in the same conventions.
		"NicheCreateRequest":       func() any { return new(NicheCreateRequest) },
		"NicheReviseRequest":       func() any { return new(NicheReviseRequest) },
		"NicheTransitionRequest":   func() any { return new(NicheTransitionRequest) },
		"NicheSignalInput":         func() any { return new(NicheSignalInput) },
		"NicheSignalBatch":         func() any { return new(NicheSignalBatch) },
		"NicheModerationRequest":   func() any { return new(NicheModerationRequest) },
		"NicheSignalListQuery":     func() any { return new(NicheSignalListQuery) },
		"CustomerOrdersQuery":      func() any { return new(CustomerOrdersQuery) },
		"AdminOrderSummaryQuery":   func() any { return new(AdminOrderSummaryQuery) },
		"ReceiptVerifyRequest":     func() any { return new(ReceiptVerifyRequest) },
		"SubscriptionClaimRequest": func() any { return new(SubscriptionClaimRequest) },
	}
}

// New returns a pointer to a new zero value of the named shape: the names
// of the interface documents ("NicheDraft", "ExploreRequest", ...,
// "HTTPValidationError" is *ValidationError and "ValidationError" is
// *ErrorDetail), plus the query shapes "NicheListQuery" and
// "NicheSearchQuery", and the shapes of our own routes (curation, commerce,
// subscriptions). Decode (or DecodeQuery) fills it.
func New(name string) (any, bool) {
	f, ok := shapeTable()[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Names returns the names New knows, sorted.
func Names() []string {
	t := shapeTable()
	out := make([]string, 0, len(t))
	for n := range t {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
