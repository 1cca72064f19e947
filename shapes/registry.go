package shapes

import (
	"reflect"
	"sort"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
)

// shapeTable maps every shape name of the interface documents to a
// constructor of its zero value. The shapes that have a domain twin are
// the domain types themselves (claims.Request, niche.Draft, the niche
// list and search options): their bounds are stated once, in their tags.
func shapeTable() map[string]func() any {
	return map[string]func() any{
		"NicheDraft":                  func() any { return new(niche.Draft) },
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
		"ClaimVerificationRequest":    func() any { return new(claims.Request) },
		"HTTPValidationError":         func() any { return new(ValidationError) },
		"ValidationError":             func() any { return new(ErrorDetail) },
		"NicheListQuery":              func() any { return new(niche.ListOptions) },
		"NicheSearchQuery":            func() any { return new(niche.SearchOptions) },

		// Shapes of routes the documents do not define (curation,
		// commerce, subscriptions): ours, in the same conventions.
		"NicheCreateRequest":       func() any { return new(NicheCreateRequest) },
		"NicheReviseRequest":       func() any { return new(NicheReviseRequest) },
		"NicheTransitionRequest":   func() any { return new(NicheTransitionRequest) },
		"NicheSignalInput":         func() any { return new(NicheSignalInput) },
		"NicheSignalBatch":         func() any { return new(NicheSignalBatch) },
		"NicheModerationRequest":   func() any { return new(niche.ModerationRequest) },
		"NicheSignalListQuery":     func() any { return new(NicheSignalListQuery) },
		"CustomerOrdersQuery":      func() any { return new(CustomerOrdersQuery) },
		"AdminOrderSummaryQuery":   func() any { return new(AdminOrderSummaryQuery) },
		"ReceiptVerifyRequest":     func() any { return new(ReceiptVerifyRequest) },
		"SubscriptionClaimRequest": func() any { return new(SubscriptionClaimRequest) },
	}
}

// forbidsExtra reports whether the shape t forbids unknown keys
// (extra_forbidden): those whose documents say "no extra properties".
// The others ignore unknown keys.
func forbidsExtra(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[claims.Request](), reflect.TypeFor[CapabilitiesResponse](), reflect.TypeFor[Capability](),
		reflect.TypeFor[TagFilter](), reflect.TypeFor[NumericFilter](), reflect.TypeFor[OSMFeatureQuery](),
		reflect.TypeFor[Requirement](), reflect.TypeFor[SearchStep](), reflect.TypeFor[SearchProgram](),
		reflect.TypeFor[SearchBranch](), reflect.TypeFor[RouteEndpoint](), reflect.TypeFor[RouteRequest](),
		reflect.TypeFor[SearchParameters]():
		return true
	}
	return false
}

// typeNames maps the type of every shape to its name.
func typeNames() map[reflect.Type]string {
	out := map[reflect.Type]string{}
	for name, f := range shapeTable() {
		out[reflect.TypeOf(f()).Elem()] = name
	}
	return out
}

// New returns a pointer to a new zero value of the named shape: the names
// of the interface documents ("NicheDraft" is *niche.Draft,
// "ClaimVerificationRequest" *claims.Request, "ExploreRequest"
// *ExploreRequest, ..., "HTTPValidationError" is *ValidationError and
// "ValidationError" is *ErrorDetail), plus the query shapes
// "NicheListQuery" (*niche.ListOptions) and "NicheSearchQuery"
// (*niche.SearchOptions), and the shapes of our own routes (curation,
// commerce, subscriptions). Decode (or DecodeQuery) fills it.
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
