// Package inputschema holds the JSON Schemas of the request shapes as
// every transport publishes them: inlined for MCP tool input schemas, with
// the claim rules the claims engine enforces beyond a shape's bounds, and
// the schemas of the path parameters. The discovery documents and the MCP
// and A2A endpoints (server/agents) take them from here, so they cannot
// differ.
package inputschema

import (
	"encoding/json"
	"fmt"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/shapes"
)

// PathParams are the JSON Schemas of the path parameters of the
// public routes: identifiers (a prefix and 32 lowercase hex digits, the
// format internal/ids makes and checks). OpenAPI publishes them, and the
// get_niche MCP tool uses the niche_id one, so both say the same. A
// well-formed id that does not exist, and a malformed one, are both
// answered 404 by the routes.
func PathParams() map[string]json.RawMessage {
	id := func(prefix, what string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": "string", "pattern": ids.Pattern(prefix), "description": what})
		return b
	}
	return map[string]json.RawMessage{
		"niche_id":        id(ids.Niche, "A niche evaluation id (niche_…), from a list or a search."),
		"order_id":        id(ids.Order, "An order id (ord_…), from the X-Agentic-Order-Id header of a paid call."),
		"snapshot_id":     id(ids.Snapshot, "A URL snapshot id (snap_…), from a verification result."),
		"verification_id": id(ids.Verification, "A verification id (cv_…), from a verification result."),
	}
}

// Inline returns the JSON Schema of a shape with its root definition
// inlined at the top ({"type":"object","properties":…}; other definitions
// stay under $defs), as MCP tools want their input schemas. It is a fresh
// copy the caller may change.
func Inline(name string) (map[string]any, error) {
	raw, ok := shapes.Schema(name)
	if !ok {
		return nil, fmt.Errorf("shapes has no schema for %s", name)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema of %s: %v", name, err)
	}
	defs, _ := doc["$defs"].(map[string]any)
	root, ok := defs[name].(map[string]any)
	if !ok || root["type"] != "object" {
		return nil, fmt.Errorf("schema of %s has no object definition", name)
	}
	delete(defs, name)
	out := map[string]any{}
	for k, v := range root {
		out[k] = v
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	if v, ok := doc["$schema"]; ok {
		out["$schema"] = v
	}
	out["title"] = name
	return out, nil
}

// Describe sets the descriptions of the properties of an inlined schema
// that have none.
func Describe(schema map[string]any, descriptions map[string]string) {
	props, _ := schema["properties"].(map[string]any)
	for k, d := range descriptions {
		if p, ok := props[k].(map[string]any); ok {
			if _, has := p["description"]; !has {
				p["description"] = d
			}
		}
	}
}
