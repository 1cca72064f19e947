package inputschema

import (
	"encoding/json"
	"fmt"

	"github.com/assaykit/assay/claims"
)

// The rules of a ClaimVerificationRequest beyond its shape's bounds are the
// claims engine's (claims.Engine.Check, which refuses a request breaking
// one with a 422 value_error at ["body"] before any payment). Every schema
// of the request we publish — the tier routes' bodies in OpenAPI, the
// verify tools' input schemas over MCP, the SendMessage params of A2A in
// the manifest — takes them from here, and states in JSON Schema every
// rule JSON Schema can state:
//
//   - the domain lists hold host names: the items' pattern and maxLength,
//     which come with the shape, from the request's validate tags (the
//     decoder checks the same tags, so the schema and the decoder accept
//     exactly the same names);
//   - sourcePolicy official_only requires allowedDomains with at least
//     one entry: if/then;
//   - a tier's cap on minimumSources (claims.Tier.MaxMinimumSources, the
//     lower of its cited-source cap and the pages it checks quotes on): a
//     maximum where the schema is a tier's (a route, a tool), and one
//     if/then per tier where the tier is chosen in the instance (A2A's
//     params.metadata.tier, TierCaps).
//
// The one rule JSON Schema cannot state, minimumSources ≤ maxSources (two
// members' values compared), is in the description and in the
// x-cross-field-rules extension, a list of {id, description, fields}.

// A2ATierKey is the member of an A2A SendMessage's params.metadata that
// chooses the verification tier.
const A2ATierKey = "tier"

// claimRule is one rule of x-cross-field-rules.
type claimRule struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Fields      []string `json:"fields"`
}

// claimRules are the rules no JSON Schema can state.
func claimRules() []claimRule {
	return []claimRule{
		{ID: "minimum-sources-within-max", Fields: []string{"minimumSources", "maxSources"},
			Description: fmt.Sprintf("minimumSources must not exceed maxSources (%d when it is not given).", claims.DefaultMaxSources)},
	}
}

// claimRulesText is the rules as one paragraph, for descriptions.
func claimRulesText() string {
	text := "Also refused with 422 (value_error):"
	for _, r := range claimRules() {
		text += " " + r.Description
	}
	return text
}

// officialOnly is the if/then stating that official_only needs
// allowedDomains.
func officialOnly() (cond, then map[string]any) {
	return map[string]any{"properties": map[string]any{"sourcePolicy": map[string]any{"const": claims.PolicyOfficialOnly}}, "required": []string{"sourcePolicy"}},
		map[string]any{"required": []string{"allowedDomains"}, "properties": map[string]any{"allowedDomains": map[string]any{"minItems": 1}}}
}

// tierCap is the schema capping minimumSources at tier t's cap, or nil
// when the shape's own maximum is not above it.
func tierCap(t claims.Tier) map[string]any {
	if t.MaxMinimumSources() >= shapeMaximum("ClaimVerificationRequest", "minimumSources") {
		return nil
	}
	return map[string]any{"properties": map[string]any{"minimumSources": map[string]any{"maximum": t.MaxMinimumSources()}}}
}

// claimRulePatch is what every published schema of the request adds to the
// shape's: the tier's cap (when t is set), the if/then, the description
// and the extension.
func claimRulePatch(t *claims.Tier) map[string]any {
	cond, then := officialOnly()
	patch := map[string]any{
		"if": cond, "then": then,
		"description":         claimRulesText(),
		"x-cross-field-rules": claimRules(),
	}
	if t != nil {
		if c := tierCap(*t); c != nil {
			patch["properties"] = c["properties"]
		}
	}
	return patch
}

// ClaimBody is the OpenAPI request body schema of the tier route:
// the shape (a reference) with the tier's rules.
func ClaimBody(tier string) (json.RawMessage, error) {
	t, ok := claims.TierByName(tier)
	if !ok {
		return nil, fmt.Errorf("discovery: unknown tier %q", tier)
	}
	s := claimRulePatch(&t)
	s["allOf"] = []any{map[string]any{"$ref": "#/components/schemas/ClaimVerificationRequest"}}
	return json.Marshal(s)
}

// WithClaimRules adds the rules to an inlined ClaimVerificationRequest
// schema (MCP, A2A): the cap of tier t on minimumSources (none when t is
// nil: the tier is chosen elsewhere, see TierCaps), the if/then, the
// extension, and the prose rule appended to its description.
func WithClaimRules(schema map[string]any, t *claims.Tier) {
	patch := claimRulePatch(t)
	props, _ := schema["properties"].(map[string]any)
	extra, _ := patch["properties"].(map[string]any)
	for name, add := range extra {
		if p, ok := props[name].(map[string]any); ok {
			for k, v := range add.(map[string]any) {
				p[k] = v
			}
		}
	}
	schema["if"], schema["then"] = patch["if"], patch["then"]
	schema["x-cross-field-rules"] = patch["x-cross-field-rules"]
	if d, _ := schema["description"].(string); d != "" {
		schema["description"] = d + " " + patch["description"].(string)
	} else {
		schema["description"] = patch["description"]
	}
}

// TierCaps states each tier's cap on minimumSources in a schema whose
// instance chooses the tier itself: the string at tierPath (member names
// from the instance's root, e.g. "metadata", "tier"; absent means
// defaultTier). at places the schema of a request — {"properties":
// {"minimumSources": {"maximum": N}}} — where the instance holds the
// request. It returns one {"if", "then"} per tier whose cap is below the
// shape's maximum, for an allOf.
func TierCaps(tierPath []string, defaultTier string, at func(request map[string]any) map[string]any) []any {
	// path nests leaf under the members of tierPath, each required.
	path := func(leaf map[string]any) map[string]any {
		s := leaf
		for i := len(tierPath) - 1; i >= 0; i-- {
			s = map[string]any{"required": []string{tierPath[i]}, "properties": map[string]any{tierPath[i]: s}}
		}
		return s
	}
	var out []any
	for _, t := range claims.Tiers() {
		c := tierCap(t)
		if c == nil {
			continue
		}
		cond := path(map[string]any{"const": t.Name})
		if t.Name == defaultTier {
			cond = map[string]any{"anyOf": []any{cond, map[string]any{"not": path(map[string]any{})}}}
		}
		out = append(out, map[string]any{"if": cond, "then": at(c)})
	}
	return out
}

// shapeMaximum is the maximum of a numeric property of a shape's schema
// (a very large number when it has none).
func shapeMaximum(shape, prop string) int {
	sch, err := Inline(shape)
	if err != nil {
		return 1 << 62
	}
	props, _ := sch["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	if m, ok := p["maximum"].(float64); ok {
		return int(m)
	}
	return 1 << 62
}
