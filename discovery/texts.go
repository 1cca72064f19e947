package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/shapes"
	"github.com/assaykit/assay/snapshot"
)

// claimsText is what claim verification says about itself, from the
// interface document.
func claimsText() ServiceText {
	return ServiceText{
		Name: "Claim Verification",
		Description: "Verifies a factual claim against current web sources and returns a structured, cited result: " +
			"an overall status, a conclusion, atomic facts, evidence with excerpts, provider-reported sources, URL snapshots " +
			"with hashes, conflicts, limitations and provenance. Four tiers (quick, standard, deep, research) differ in search " +
			"budget, cited sources, snapshot policy and price.",
		Summary:    "Paid claim verification with cited web evidence, provenance, snapshots and hashes.",
		Version:    sell.Version,
		Lifecycle:  "paid-preview",
		Tags:       []string{"web", "evidence", "fact-checking", "verification", "citations"},
		Categories: []string{"search", "data"},
		Capability: Capability{ID: "web.evidence.verify-claim", Summary: "Verify a factual claim against current web sources.",
			Domains: []string{"web", "verification"}},
		Provenance: Provenance{
			Summary: "Every provider-reported source, the cited subset, and URL snapshots with raw and normalised SHA-256 hashes are returned; " +
				"every result carries its observation and retrieval times.",
			Freshness: "Caller-controlled freshness window (freshnessHours); retrieval time returned per source.",
			Coverage:  "Publicly accessible web sources supported by the upstream search provider.",
		},
		Policies: Policies{DataRetentionDays: 30,
			AllowedUse:    []string{"Research and decision support"},
			ProhibitedUse: []string{"Representing a result as a guarantee of absolute truth"}},
		Skills: []Skill{{ID: "verify-factual-claim", Name: "Verify a factual claim",
			Description: "Researches a claim on the current web and returns a structured verdict with cited sources.",
			Tags:        []string{"fact-checking", "web-research", "citations"},
			Examples:    []string{"Verify that the Base mainnet chain ID is 8453."}}},
	}
}

// nicheText is what niche discovery says about itself, from the interface
// document.
func nicheText() ServiceText {
	return ServiceText{
		Name: "Niche Discovery",
		Description: "Search and read reviewed, evidence-linked niche market evaluations, ordered by score or recency: free " +
			"previews, full evaluations for subscribers or for one pay-per-call payment in USDC on Base.",
		Summary:    "Reviewed, evidence-linked niche market evaluations; full evaluations pay-per-call.",
		Version:    sell.Version,
		Lifecycle:  "paid-preview",
		Tags:       []string{"niches", "market-research", "evidence"},
		Categories: []string{"data", "search"},
		Capability: Capability{ID: "niche.catalogue", Summary: "List, search and read reviewed niche market evaluations.",
			Domains: []string{"market-research"}},
		Provenance: Provenance{
			Summary:   "Every evaluation links the signals (sources, excerpts, observation times) it was reviewed from.",
			Freshness: "Evaluations carry their last review time; signals their observation time.",
			Coverage:  "Public sources collected and reviewed by the catalogue's curators.",
		},
		Policies: Policies{DataRetentionDays: 30,
			AllowedUse:    []string{"Market research and decision support"},
			ProhibitedUse: []string{"Representing an evaluation as a guarantee of commercial success"}},
	}
}

// nicheSearchItem is one result of GET /v1/search: a preview (anonymous
// callers) or a full evaluation (subscribers).
type nicheSearchItem interface{}

// nicheSearchDoc and nichePaidSearchDoc are what the search routes encode
// (sell.NicheSearchResponse, whose niches member is typed any because it holds
// either kind), with that member typed for the documents; every other
// member is sell.NicheSearchResponse's own.
type nicheSearchDoc struct {
	sell.NicheSearchResponse
	Niches []nicheSearchItem `json:"niches"`
}

type nichePaidSearchDoc struct {
	sell.NicheSearchResponse
	Niches []niche.Evaluation `json:"niches"`
}

// responseTypes maps route ids to the Go value their 200 response
// encodes, and the name of its schema. Routes not listed answer a JSON
// object the documents do not detail (a test lists them).
func responseTypes() map[string]struct {
	name string
	v    any
} {
	type rt = struct {
		name string
		v    any
	}
	result := rt{"ClaimVerificationResult", claims.Result{}}
	order := rt{"Order", sell.Order{}}
	check := rt{"ReceiptCheck", sell.ReceiptCheck{}}
	full := rt{"NicheEvaluationResponse", sell.NicheEvaluationResponse{}}
	token := rt{"SubscriptionToken", sell.SubscriptionToken{}}
	m := map[string]rt{
		"health.live":                     {"Health", sell.Health{}},
		"health.ready":                    {"Readiness", sell.Readiness{}},
		"snapshots.get":                   {"SnapshotMetadata", sell.SnapshotMetadata{}},
		"claims.verification.get":         result,
		"capabilities":                    {"CapabilitiesResponse", shapes.CapabilitiesResponse{}},
		"index":                           {"ServiceIndex", ServiceIndex{}},
		"commerce.quotes.create":          {"Quote", sell.Quote{}},
		"commerce.orders.get":             order,
		"commerce.customer.orders.get":    order,
		"commerce.customer.orders.list":   {"CustomerOrders", sell.CustomerOrders{}},
		"commerce.receipts.verify":        check,
		"commerce.receipts.verify.stored": check,
		"commerce.jwks":                   {"JWKS", payment.JWKS{}},
		"niche.list":                      {"NicheListResponse", sell.NicheListResponse{}},
		"niche.preview":                   {"NichePreviewResponse", sell.NichePreviewResponse{}},
		"niche.get":                       full,
		"niche.pay-per-call":              full,
		"niche.search":                    {"NicheSearchResponse", nicheSearchDoc{}},
		"niche.search.pay-per-call":       {"NichePaidSearchResponse", nichePaidSearchDoc{}},
		"niche.sources":                   {"NicheSourcesResponse", sell.NicheSourcesResponse{}},
		"subscription.status":             {"SubscriptionStatus", sell.SubscriptionStatus{}},
		"subscription.checkout":           {"SubscriptionCheckout", sell.SubscriptionCheckout{}},
		"subscription.claim":              token,
		"subscription.token.rotate":       token,
		"subscription.portal":             {"SubscriptionPortal", sell.SubscriptionPortal{}},
		"subscription.token.revoke":       {"SubscriptionRevoked", sell.SubscriptionRevoked{}},
		"subscription.webhook":            {"SubscriptionWebhookReceipt", sell.SubscriptionWebhookReceipt{}},
		// The development billing pages answer JSON when asked for it.
		"subscription.local.checkout.confirm": token,
		"subscription.local.portal.action":    {"Subscriber", sell.Subscriber{}},
	}
	for _, t := range claims.Tiers() {
		m["claims.verify."+t.Name] = result
	}
	return m
}

// composedResponses are response schemas made of reflected ones: GET
// /v1/orders/{order_id}/result answers the exact bytes a paid call
// delivered, so any of the paid responses (an A2A call's is its JSON-RPC
// response).
func composedResponses() map[string]struct {
	name   string
	schema string
} {
	ref := func(n string) string { return `{"$ref":"#/components/schemas/` + n + `"}` }
	return map[string]struct {
		name   string
		schema string
	}{
		"commerce.orders.result": {"OrderResult", `{"description":"The response the paid call delivered, byte for byte: a verification result, a niche evaluation or search, or the JSON-RPC response of an A2A call.","anyOf":[` +
			ref("ClaimVerificationResult") + `,` + ref("NicheEvaluationResponse") + `,` + ref("NichePaidSearchResponse") + `,` +
			`{"type":"object","required":["jsonrpc","result"],"properties":{"jsonrpc":{"const":"2.0"},"id":{},"result":{"type":"object"}}}]}`},
	}
}

// nonJSONResponses are the media types of the routes whose 200 response
// is not (only) application/json: a JSON type among them gets the route's
// response schema.
func nonJSONResponses() map[string][]string {
	html := []string{"text/html"}
	return map[string][]string{
		"metrics":                             {"text/plain"},
		"snapshots.content":                   {"application/octet-stream", "text/plain"},
		"snapshots.warc":                      {"application/warc"},
		"claims.verification.evidence":        {"application/wacz"},
		"niche.evidence":                      {"application/wacz"},
		"subscription.success":                html,
		"subscription.success.claim":          html,
		"subscription.cancelled":              html,
		"subscription.local.checkout":         html,
		"subscription.local.checkout.confirm": {"text/html", "application/json"},
		"subscription.local.portal":           html,
		"subscription.local.portal.action":    {"text/html", "application/json"},
		"commerce.jwks":                       {"application/jwk-set+json"},
	}
}

// errorTypes are the Go values of error bodies other than {"detail": "..."}
// and the HTTPValidationError, with their schema names.
func errorTypes() map[string]any {
	return map[string]any{"NicheLocked": sell.NicheLocked{}}
}

// responseSchemaName is the component name of a route's 200 response, ""
// when undocumented.
func responseSchemaName(routeID string) string {
	if c, ok := composedResponses()[routeID]; ok {
		return c.name
	}
	return responseTypes()[routeID].name
}

// reflectOptions name the reflected types as the interface documents do
// and list the values of their enumerations.
func reflectOptions() *ReflectOptions {
	return &ReflectOptions{
		Names: map[reflect.Type]string{
			reflect.TypeFor[claims.Result]():         "ClaimVerificationResult",
			reflect.TypeFor[claims.Provenance]():     "VerificationProvenance",
			reflect.TypeFor[snapshot.Snapshot]():     "EvidenceSnapshot",
			reflect.TypeFor[shapes.Capability]():     "Capability",
			reflect.TypeFor[sell.Order]():            "Order",
			reflect.TypeFor[payment.PaymentOption](): "PaymentOption",
			reflect.TypeFor[niche.Preview]():         "NichePreview",
			reflect.TypeFor[niche.Evaluation]():      "NicheEvaluation",
			reflect.TypeFor[niche.Unlock]():          "NicheUnlock",
			reflect.TypeFor[niche.QuotaStatus]():     "NicheQuota",
			reflect.TypeFor[niche.SourceStatus]():    "NicheSource",
			reflect.TypeFor[niche.Evidence]():        "NicheEvidence",
			reflect.TypeFor[sell.Subscriber]():       "Subscriber",
		},
		Unions: map[reflect.Type][]any{
			reflect.TypeFor[nicheSearchItem](): {niche.Preview{}, niche.Evaluation{}},
		},
		Enums: map[reflect.Type][]string{
			reflect.TypeFor[claims.Status](): {string(claims.StatusConfirmed), string(claims.StatusPartiallyConfirmed),
				string(claims.StatusContradicted), string(claims.StatusInsufficientEvidence), string(claims.StatusAmbiguous)},
			reflect.TypeFor[claims.Relationship](): {string(claims.Supports), string(claims.Contradicts), string(claims.Context)},
			reflect.TypeFor[snapshot.Status](): {string(snapshot.StatusCaptured), string(snapshot.StatusFailed),
				string(snapshot.StatusBlocked), string(snapshot.StatusTooLarge), string(snapshot.StatusUnsupported)},
		},
	}
}

// addResponseSchemas adds the reflected response schemas to comps
// (shapes that are already there, such as CapabilitiesResponse, are kept).
func addResponseSchemas(comps map[string]json.RawMessage) error {
	done := map[string]bool{}
	for _, rt := range responseTypes() {
		if done[rt.name] {
			continue
		}
		done[rt.name] = true
		if _, ok := comps[rt.name]; ok {
			continue
		}
		defs := map[string]json.RawMessage{}
		o := reflectOptions()
		o.Names[reflect.TypeOf(rt.v)] = rt.name
		if _, err := Reflect(defs, rt.v, o); err != nil {
			return err
		}
		for k, v := range defs {
			prev, ok := comps[k]
			switch {
			case !ok:
				comps[k] = v
			case !bytes.Equal(prev, v):
				// Two Go types under one name (each root is reflected
				// on its own): name them apart in reflectOptions.
				return fmt.Errorf("discovery: two response types are both named %q", k)
			}
		}
	}
	for name, v := range errorTypes() {
		if _, ok := comps[name]; ok {
			continue
		}
		o := reflectOptions()
		o.Names[reflect.TypeOf(v)] = name
		defs := map[string]json.RawMessage{}
		if _, err := Reflect(defs, v, o); err != nil {
			return err
		}
		for k, s := range defs {
			if prev, ok := comps[k]; ok && !bytes.Equal(prev, s) {
				return fmt.Errorf("discovery: two response types are both named %q", k)
			}
			comps[k] = s
		}
	}
	for _, c := range composedResponses() {
		if _, ok := comps[c.name]; !ok {
			comps[c.name] = json.RawMessage(c.schema)
		}
	}
	return nil
}

// publishTierNames states in the published QuoteRequest that tier is one
// of the tier names: the shape takes any string (the interface document
// does not list them), and POST /v1/quotes refuses another name with a
// literal_error.
func publishTierNames(comps map[string]json.RawMessage) error {
	raw, ok := comps["QuoteRequest"]
	if !ok {
		return nil
	}
	var q map[string]any
	if err := json.Unmarshal(raw, &q); err != nil {
		return fmt.Errorf("discovery: QuoteRequest schema: %v", err)
	}
	props, _ := q["properties"].(map[string]any)
	tier, ok := props["tier"].(map[string]any)
	if !ok {
		return fmt.Errorf("discovery: QuoteRequest has no tier")
	}
	tier["enum"] = tierNames()
	b, err := json.Marshal(q)
	if err != nil {
		return err
	}
	comps["QuoteRequest"] = b
	return nil
}

// tierNames are the names of the claim tiers, in order.
func tierNames() []string {
	var out []string
	for _, t := range claims.Tiers() {
		out = append(out, t.Name)
	}
	return out
}
