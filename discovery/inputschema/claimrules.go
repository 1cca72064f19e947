package inputschema

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/assaykit/assay/claims"
)

// The rules of a ClaimVerificationRequest beyond its shape's bounds are the
// claims engine's (claims.Engine.Check, which refuses a request breaking
// one with a 422 value_error at ["body"] before any payment). Every schema
// of the request we publish — the tier routes' bodies in OpenAPI, the
// verify tools' input schemas over MCP, the A2A data part in the manifest —
// states them the same way: in JSON Schema where it can (a tier's cap as
// minimumSources' maximum; official_only needing allowedDomains as
// if/then; a host-name pattern on the domain lists that every domain it
// accepts passes), and all of them, with those it cannot state
// (minimumSources ≤ maxSources; no domain both allowed and blocked), in
// the description and in the x-cross-field-rules extension, a list of
// {id, description, fields}.

// A2ATierKey is the member of an A2A SendMessage's params.metadata that
// chooses the verification tier.
const A2ATierKey = "tier"

// domainPattern matches host names every domain list accepts: optional
// "*.", labels of letters, digits and single inner hyphens (at most 63
// characters), a last label starting with a letter. The lists accept more
// (a scheme, port or path, which are dropped; internationalised names);
// see the domain-syntax rule.
const domainPattern = `^(\*\.)?([A-Za-z0-9](-?[A-Za-z0-9]){0,31}\.)*[A-Za-z](-?[A-Za-z0-9]){0,31}$`

// claimRule is one rule of x-cross-field-rules.
type claimRule struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Fields      []string `json:"fields"`
}

// claimRules are the rules of a request to tier t (every tier's caps when
// t is nil).
func claimRules(t *claims.Tier) []claimRule {
	var caps []string
	for _, tr := range claims.Tiers() {
		caps = append(caps, fmt.Sprintf("%s %d", tr.Name, tr.MaxMinimumSources()))
	}
	capText := "the tier's cap (" + strings.Join(caps, ", ") + ")"
	if t != nil {
		capText = fmt.Sprintf("the %s tier's cap, %d", t.Name, t.MaxMinimumSources())
	}
	capText += ": the lower of its cited-source cap and the number of pages on which it checks quotes"
	return []claimRule{
		{ID: "minimum-sources-within-max", Fields: []string{"minimumSources", "maxSources"},
			Description: "minimumSources must not exceed maxSources."},
		{ID: "minimum-sources-within-tier-cap", Fields: []string{"minimumSources", "maxSources"},
			Description: "minimumSources must not exceed " + capText + "; a larger maxSources is accepted and lowered to the cited-source cap."},
		{ID: "official-only-needs-allowed-domains", Fields: []string{"sourcePolicy", "allowedDomains"},
			Description: "sourcePolicy official_only requires at least one allowedDomains entry."},
		{ID: "domain-syntax", Fields: []string{"allowedDomains", "blockedDomains"},
			Description: "Each entry is a domain name, optionally with a leading \"*.\" (subdomains are always included), an http or https scheme, a port or a path (all dropped); internationalised names are converted to ASCII. Refused: whitespace, user information, IP addresses, names invalid after conversion, more than 253 characters. The schema's pattern accepts a subset: plain ASCII names."},
		{ID: "domains-allowed-xor-blocked", Fields: []string{"allowedDomains", "blockedDomains"},
			Description: "No domain may be both allowed and blocked (compared after normalisation: lower case, ASCII, without scheme, port, path or \"*.\")."},
	}
}

// claimRulesText is the rules as one paragraph, for descriptions.
func claimRulesText(t *claims.Tier) string {
	var parts []string
	for _, r := range claimRules(t) {
		parts = append(parts, r.Description)
	}
	return "Also refused with 422 (value_error): " + strings.Join(parts, " ")
}

// claimRulePatch is what every published schema of the request adds to the
// shape's: the rules it can state, the description and the extension. The
// cap applies when t is set.
func claimRulePatch(t *claims.Tier) map[string]any {
	domains := map[string]any{"items": map[string]any{"type": "string", "pattern": domainPattern, "maxLength": 253}}
	props := map[string]any{"allowedDomains": domains, "blockedDomains": domains}
	if t != nil && t.MaxMinimumSources() < shapeMaximum("ClaimVerificationRequest", "minimumSources") {
		props["minimumSources"] = map[string]any{"maximum": t.MaxMinimumSources()}
	}
	return map[string]any{
		"properties": props,
		"if":         map[string]any{"properties": map[string]any{"sourcePolicy": map[string]any{"const": claims.PolicyOfficialOnly}}, "required": []string{"sourcePolicy"}},
		"then": map[string]any{"required": []string{"allowedDomains"},
			"properties": map[string]any{"allowedDomains": map[string]any{"minItems": 1}}},
		"description":         claimRulesText(t),
		"x-cross-field-rules": claimRules(t),
	}
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

// WithClaimRules adds the rules of tier t (any tier when nil) to an
// inlined ClaimVerificationRequest schema (MCP, A2A): its domain lists'
// items, the if/then, the extension, and the rules appended to its
// description.
func WithClaimRules(schema map[string]any, t *claims.Tier) {
	patch := claimRulePatch(t)
	props, _ := schema["properties"].(map[string]any)
	for name, extra := range patch["properties"].(map[string]any) {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range extra.(map[string]any) {
			if k == "items" {
				items, _ := p["items"].(map[string]any)
				if items == nil {
					items = map[string]any{}
				}
				for ik, iv := range v.(map[string]any) {
					items[ik] = iv
				}
				p["items"] = items
				continue
			}
			p[k] = v
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
