package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/shapes"
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
	if ms.s.cfg.Claims.Engine != nil {
		tiersOut, err := tiersOutputSchema()
		if err != nil {
			return err
		}
		ms.srv.AddTool(&mcp.Tool{
			Name:         "list_verification_tiers",
			Title:        "List verification tiers",
			Description:  "List the claim verification tiers: MCP tool, HTTP path, USDC and card price, search budget, cited-source cap and snapshot policy. Free.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			OutputSchema: tiersOut,
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
		}, ms.listTiers)
	}

	offers := ms.s.tierOffers()
	for _, t := range claims.Tiers() {
		offer, ok := offers[t.Name]
		if !ok {
			continue
		}
		in, err := claimToolInputSchema(t)
		if err != nil {
			return err
		}
		ms.srv.AddTool(&mcp.Tool{
			Name:  t.Tool,
			Title: "Verify a claim (" + t.Name + " tier)",
			Description: fmt.Sprintf("Verify a factual claim against current web sources (%s tier: up to %d search actions, at most %d cited sources, snapshots: %s). "+
				"Returns a structured, cited ClaimVerificationResult. Paid per call: %s USDC via x402 (an unpaid call returns the payment requirements; "+
				"repeat it with the PaymentPayload in _meta[\"x402/payment\"]).",
				t.Name, t.MaxToolActions, t.MaxCitedSources, t.SnapshotMode, usd(t.PriceMicroUSD)),
			InputSchema: in,
			// No OutputSchema: the official TypeScript client validates
			// structuredContent against it, and the PaymentRequired
			// object of an unpaid call would not match.
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(true)},
		}, ms.verifyTool(t, offer))
	}
	for _, tool := range ms.nicheTools() {
		ms.srv.AddTool(tool.tool, tool.handler)
	}
	return nil
}

// mcpTool is one tool and its handler.
type mcpTool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
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

func tierList() tiersList {
	out := tiersList{Currency: "USD", Payment: "x402 in _meta[\"x402/payment\"] (USDC)"}
	for _, t := range claims.Tiers() {
		out.Tiers = append(out.Tiers, mcpTierInfo{
			Tier: t.Name, Tool: t.Tool, Path: t.Path, PriceMicrousd: t.PriceMicroUSD, PriceUSD: usd(t.PriceMicroUSD),
			CardPriceMicrousd: t.CardMicroUSD, MaxToolActions: t.MaxToolActions, MaxOutputTokens: t.MaxOutputTokens,
			MaxCitedSources: t.MaxCitedSources, SnapshotMode: string(t.SnapshotMode), MaxSnapshots: t.MaxSnapshots,
			TimeoutSeconds: int(t.Timeout.Seconds()),
		})
	}
	return out
}

func (ms *mcpServer) listTiers(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b, err := httpjson.Marshal(tierList())
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// claimToolInputSchema is the input schema of a verify tool: the JSON
// Schema of ClaimVerificationRequest with the tier's cited-source cap as
// the maximum (and the default, when lower) of maxSources, and as the
// maximum of minimumSources. It is handed to the SDK as raw JSON (the SDK's
// own schema inference must not see our types).
//
// PROVISIONAL: generated here from the shapes.ClaimVerificationRequest type
// (names, types and defaults by reflection) and the interface document's
// bounds, until shapes exposes its schemas (shapes.Schema); then this
// function takes the schema from there and only applies the tier cap.
func claimToolInputSchema(t claims.Tier) (json.RawMessage, error) {
	bounds := map[string]map[string]any{
		"claim":            {"minLength": 3, "maxLength": 4000, "description": "The factual claim to verify."},
		"asOf":             {"format": "date", "description": "Date at which the claim is to be judged (YYYY-MM-DD); null means now."},
		"jurisdiction":     {"maxLength": 100, "description": "Jurisdiction the claim refers to, if any."},
		"freshnessHours":   {"minimum": 1, "maximum": 8760, "description": "Preferred maximum age of sources, in hours; null means no freshness requirement."},
		"sourcePolicy":     {"enum": []string{"official_only", "authoritative", "open_web"}, "description": "Which sources count (official_only requires allowedDomains)."},
		"minimumSources":   {"minimum": 1, "maximum": min(10, t.MaxCitedSources), "description": "Cited sources needed to confirm."},
		"maxSources":       {"minimum": 1, "maximum": min(20, t.MaxCitedSources), "description": fmt.Sprintf("Most cited sources to return (the %s tier allows %d).", t.Name, t.MaxCitedSources)},
		"allowedDomains":   {"maxItems": 100, "description": "Only these domains (and their subdomains) count as sources."},
		"blockedDomains":   {"maxItems": 100, "description": "These domains (and their subdomains) never count as sources."},
		"includeConflicts": {"description": "Report conflicting evidence."},
		"language":         {"minLength": 2, "maxLength": 35, "description": "Language of the answer (a BCP 47 tag, or auto)."},
	}
	var defaults shapes.ClaimVerificationRequest
	defaults.SetDefaults()
	dv := reflect.ValueOf(defaults)
	rt := dv.Type()
	props := map[string]any{}
	var required []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := map[string]any{}
		ft := f.Type
		nullable := ft.Kind() == reflect.Pointer
		if nullable {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[shapes.Date]() || ft.Kind() == reflect.String:
			p["type"] = "string"
		case ft.Kind() == reflect.Int:
			p["type"] = "integer"
		case ft.Kind() == reflect.Bool:
			p["type"] = "boolean"
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			p["type"] = "array"
			p["items"] = map[string]any{"type": "string"}
		default:
			return nil, errorf("mcp: no schema for field %s (%s)", f.Name, f.Type)
		}
		if nullable {
			p["type"] = []any{p["type"], "null"}
		}
		for k, v := range bounds[name] {
			p[k] = v
		}
		v := dv.Field(i)
		switch {
		case name == "claim":
			required = append(required, name)
		case v.Kind() == reflect.Pointer && v.IsNil():
			p["default"] = nil
		case v.Kind() == reflect.Pointer:
			p["default"] = v.Elem().Interface()
		default:
			p["default"] = v.Interface()
		}
		props[name] = p
	}
	if ms, ok := props["maxSources"].(map[string]any); ok {
		if d, ok := ms["default"].(int); ok && d > t.MaxCitedSources {
			ms["default"] = t.MaxCitedSources
		}
	}
	return httpjson.Marshal(map[string]any{
		"type":                 "object",
		"title":                "ClaimVerificationRequest",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	})
}
