package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTools registers every tool. The SDK panics on a malformed tool; the
// schemas here are our own and tested, but a panic still becomes an error.
func (ms *mcpServer) addTools() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errorf("mcp: registering tools: %v", p)
		}
	}()
	if ms.s.App().Claims != nil {
		tiersOut, err := tiersOutputSchema()
		if err != nil {
			return err
		}
		ms.add(mcpTool{service: route.ClaimsServiceKey, summary: "List the claim verification tiers with their prices and limits (free).",
			tool: &mcp.Tool{
				Name:         "list_verification_tiers",
				Title:        "List verification tiers",
				Description:  "List the claim verification tiers: MCP tool, HTTP path, USDC and card price, search budget, cited-source cap and snapshot policy. Free.",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
				OutputSchema: tiersOut,
				Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
			}, handler: ms.listTiers})
	}

	offers := ms.s.App().TierOffers()
	for _, t := range claims.Tiers() {
		offer, ok := offers[t.Name]
		if !ok {
			continue
		}
		l, _ := ms.s.App().Catalogue.Tier(t.Name)
		in, err := claimToolInputSchema(t)
		if err != nil {
			return err
		}
		ms.add(mcpTool{service: route.ClaimsServiceKey, offer: &offer, timeout: t.Timeout,
			summary: fmt.Sprintf("Verify a claim at the %s tier (up to %d search actions, %d cited sources), paid per call with x402 or MPP.",
				t.Name, t.MaxToolActions, t.MaxCitedSources),
			tool: &mcp.Tool{
				Name:  l.MCPTool,
				Title: "Verify a claim (" + t.Name + " tier)",
				Description: fmt.Sprintf("Verify a factual claim against current web sources (%s tier: up to %d search actions, at most %d cited sources, snapshots: %s). "+
					"Returns a structured, cited ClaimVerificationResult. Paid per call: %s USDC via %s (an unpaid call returns the x402 payment "+
					"requirements and the MPP challenges in _meta[\"org.paymentauth/payment-required\"]; repeat it with one payment). %s",
					t.Name, t.MaxToolActions, t.MaxCitedSources, t.SnapshotMode, payment.MicroUSD(offer.AmountMicroUSD).String(), mcpPayHow,
					sell.ChargePolicy(offer.Waiver)),
				InputSchema: in,
				// No OutputSchema: the official TypeScript client validates
				// structuredContent against it, and the PaymentRequired
				// object of an unpaid call would not match.
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(true)},
			}, handler: ms.verifyTool(t, l.MCPTool, offer)})
	}
	niche, err := ms.nicheTools()
	if err != nil {
		return err
	}
	for _, tool := range niche {
		ms.add(tool)
	}
	return nil
}

// add registers a tool on the endpoint of every tool and on its service's
// endpoint, and keeps its definition for the discovery documents.
func (ms *mcpServer) add(t mcpTool) {
	ms.srv.AddTool(t.tool, t.handler)
	for _, sv := range ms.services {
		if slices.Contains(sv.keys, t.service) {
			sv.srv.AddTool(t.tool, t.handler)
			sv.toolNames = append(sv.toolNames, t.tool.Name)
		}
	}
	ms.tools = append(ms.tools, t)
}

// mcpTool is one tool, its handler, and what the discovery documents say
// about it.
type mcpTool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
	// service is the key of the service whose manifest lists the tool.
	service string
	// summary is its one-sentence manifest summary.
	summary string
	// offer is what a paid call (or the paid mode) costs; nil when free.
	offer *payment.Offer
	// timeout bounds a call (0: not published).
	timeout time.Duration
}

// mcpTierInfo is one row of list_verification_tiers.
type mcpTierInfo struct {
	Tier              string `json:"tier"`
	Tool              string `json:"tool"`
	Path              string `json:"path"`
	PriceMicrousd     int64  `json:"priceMicrousd"`
	PriceUSD          string `json:"priceUsd"`
	CardPriceMicrousd int64  `json:"cardPriceMicrousd"`
	MaxToolActions    int    `json:"maxToolActions"`
	MaxOutputTokens   int    `json:"maxOutputTokens"`
	MaxCitedSources   int    `json:"maxCitedSources"`
	SnapshotMode      string `json:"snapshotMode"`
	MaxSnapshots      int    `json:"maxSnapshots"`
	TimeoutSeconds    int    `json:"timeoutSeconds"`
	// ChargePolicy states whether an insufficient_evidence verdict is
	// charged ("no verdict, no charge"); FreeVerdictsPerDay is its bound
	// per payer per UTC day (0 when every verdict is charged).
	ChargePolicy       string `json:"chargePolicy"`
	FreeVerdictsPerDay int    `json:"freeVerdictsPerDay"`
}

// tiersList is the result of list_verification_tiers.
type tiersList struct {
	Tiers    []mcpTierInfo `json:"tiers"`
	Currency string        `json:"currency"`
	// Payment names how MCP tools are paid.
	Payment string `json:"payment"`
}

func tiersOutputSchema() (json.RawMessage, error) {
	row := map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}, "required": []string{}}
	props := row["properties"].(map[string]any)
	var req []string
	t := reflect.TypeFor[mcpTierInfo]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("json")
		typ := "integer"
		if f.Type.Kind() == reflect.String {
			typ = "string"
		}
		props[name] = map[string]any{"type": typ}
		req = append(req, name)
	}
	row["required"] = req
	return httpjson.Marshal(map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"tiers", "currency", "payment"},
		"properties": map[string]any{
			"tiers":    map[string]any{"type": "array", "items": row},
			"currency": map[string]any{"type": "string"},
			"payment":  map[string]any{"type": "string"},
		},
	})
}

func tierList(cat *sell.Catalogue) tiersList {
	out := tiersList{Currency: "USD", Payment: mcpPayHow + ", USDC"}
	for _, t := range claims.Tiers() {
		l, _ := cat.Tier(t.Name)
		out.Tiers = append(out.Tiers, mcpTierInfo{
			Tier: t.Name, Tool: l.MCPTool, Path: l.HTTPPath, PriceMicrousd: l.AmountMicroUSD, PriceUSD: payment.MicroUSD(l.AmountMicroUSD).String(),
			CardPriceMicrousd: l.CardMicroUSD, MaxToolActions: t.MaxToolActions, MaxOutputTokens: t.MaxOutputTokens,
			MaxCitedSources: t.MaxCitedSources, SnapshotMode: string(t.SnapshotMode), MaxSnapshots: t.MaxSnapshots,
			TimeoutSeconds: int(t.Timeout.Seconds()), ChargePolicy: sell.ChargePolicy(l.Waiver),
		})
		if l.Waiver != nil {
			out.Tiers[len(out.Tiers)-1].FreeVerdictsPerDay = l.Waiver.PerPayerPerDay
		}
	}
	return out
}

func (ms *mcpServer) listTiers(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b, err := httpjson.Marshal(tierList(ms.s.App().Catalogue))
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// claimToolInputSchema is the input schema of a verify tool: the JSON
// Schema of ClaimVerificationRequest from shapes (the constraints Decode
// enforces), inlined at the root (the SDK wants "type":"object" there),
// with descriptions for models. It states what the tool accepts, exactly
// as the HTTP route of the tier does:
//
//   - maxSources keeps the shape's bound (1–20): a value above the tier's
//     cited-source cap is accepted and clamped to the cap (the engine's
//     rule), which the description says; its default is lowered to the
//     cap when the cap is lower, since that is the value applied;
//   - minimumSources gets the tier's cap as its maximum (the lower of its
//     cited-source cap and the pages it checks quotes on): above it the
//     call is refused (422, the tier rule), as on HTTP;
//   - every other rule comes from inputschema, as for the HTTP body and
//     the A2A data part.
//
// It is handed to the SDK as raw JSON: the SDK's own schema inference
// never sees our types. The manifest publishes the same schema for the
// tool (see mcpServer.toolDefs).
func claimToolInputSchema(t claims.Tier) (json.RawMessage, error) {
	out, err := inputschema.Inline("ClaimVerificationRequest")
	if err != nil {
		return nil, errorf("mcp: %v", err)
	}
	props, _ := out["properties"].(map[string]any)
	descriptions := map[string]string{
		"claim":          "The factual claim to verify.",
		"asOf":           "Date at which the claim is to be judged (YYYY-MM-DD); null means now.",
		"jurisdiction":   "Jurisdiction the claim refers to, if any.",
		"freshnessHours": "Preferred maximum age of sources, in hours (default 168); null means no freshness requirement.",
		"sourcePolicy":   "Which sources count (official_only requires allowedDomains).",
		"minimumSources": fmt.Sprintf("Independent sources needed to confirm; at most %d on the %s tier, the pages on which it checks quotes (a higher value is refused), and at most maxSources.",
			t.MaxMinimumSources(), t.Name),
		"maxSources": fmt.Sprintf("Most cited sources to return. The %s tier cites at most %d: a higher value is accepted and clamped to %d.",
			t.Name, t.MaxCitedSources, t.MaxCitedSources),
		"allowedDomains":   "Only these domains (host names such as example.com; their subdomains included) count as sources.",
		"blockedDomains":   "These domains (host names; their subdomains included) never count as sources, also when allowed.",
		"includeConflicts": "Report conflicting evidence.",
		"language":         "Language of the answer (a BCP 47 tag, or auto).",
	}
	inputschema.Describe(out, descriptions)
	capAt := func(field, key string, limit int) {
		p, ok := props[field].(map[string]any)
		if !ok {
			return
		}
		if v, ok := p[key].(float64); !ok || v > float64(limit) {
			p[key] = limit
		}
	}
	if p, ok := props["maxSources"].(map[string]any); ok {
		if _, has := p["default"]; has {
			capAt("maxSources", "default", t.MaxCitedSources)
		}
	}
	inputschema.WithClaimRules(out, &t)
	return httpjson.Marshal(out)
}
