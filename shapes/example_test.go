package shapes_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/url"
	"os"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/shapes"
)

// Decode applies the documented defaults, then reads and validates the
// body the way the existing FastAPI services do (Pydantic v2, lax mode).
// The shapes with a domain twin are the domain types (claims.Request).
func ExampleDecode() {
	var req claims.Request
	if err := shapes.Decode([]byte(`{"claim":"Base mainnet uses chain ID 8453.","minimumSources":"1"}`), &req); err != nil {
		log.Fatal(err)
	}
	out, err := json.Marshal(req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"claim":"Base mainnet uses chain ID 8453.","asOf":null,"jurisdiction":null,"freshnessHours":168,"sourcePolicy":"authoritative","minimumSources":1,"maxSources":8,"allowedDomains":[],"blockedDomains":[],"includeConflicts":true,"language":"auto"}
}

// Invalid input fails with a *ValidationError listing every problem in
// Pydantic's order, with Pydantic's types, messages, inputs and contexts;
// its JSON is FastAPI's 422 body once each loc is prefixed with "body", as
// the HTTP layer does. (Checked against Pydantic 2.13 validating the same
// model from the parsed JSON, as FastAPI does.)
func ExampleDecode_validationError() {
	var req claims.Request
	err := shapes.Decode([]byte(`{"claim":"x","minimumSources":0,"sourcePolicy":"everything","colour":"red"}`), &req)
	var ve *shapes.ValidationError
	if !errors.As(err, &ve) {
		log.Fatalf("not a validation error: %v", err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ve.WithPrefix("body")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {
	//   "detail": [
	//     {
	//       "type": "string_too_short",
	//       "loc": [
	//         "body",
	//         "claim"
	//       ],
	//       "msg": "String should have at least 3 characters",
	//       "input": "x",
	//       "ctx": {
	//         "min_length": 3
	//       }
	//     },
	//     {
	//       "type": "literal_error",
	//       "loc": [
	//         "body",
	//         "sourcePolicy"
	//       ],
	//       "msg": "Input should be 'official_only', 'authoritative' or 'open_web'",
	//       "input": "everything",
	//       "ctx": {
	//         "expected": "'official_only', 'authoritative' or 'open_web'"
	//       }
	//     },
	//     {
	//       "type": "greater_than_equal",
	//       "loc": [
	//         "body",
	//         "minimumSources"
	//       ],
	//       "msg": "Input should be greater than or equal to 1",
	//       "input": 0,
	//       "ctx": {
	//         "ge": 1
	//       }
	//     },
	//     {
	//       "type": "extra_forbidden",
	//       "loc": [
	//         "body",
	//         "colour"
	//       ],
	//       "msg": "Extra inputs are not permitted",
	//       "input": "red"
	//     }
	//   ]
	// }
}

// DecodeQuery reads query parameters with FastAPI's behaviour: strings are
// coerced to the field's type, defaults fill what is absent. The niche
// list query is the engine's niche.ListOptions.
func ExampleDecodeQuery() {
	var q niche.ListOptions
	if err := shapes.DecodeQuery(url.Values{"q": {"allergen labels"}, "limit": {"5"}}, &q); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q %v %q %d\n", q.Query, q.Category, q.Sort, q.Limit)

	err := shapes.DecodeQuery(url.Values{"limit": {"500"}}, &q)
	fmt.Println(err)
	// Output:
	// "allergen labels" <nil> "score" 5
	// 1 validation error; [limit]: Input should be less than or equal to 100
}

// Shapes are also reachable by the interface documents' names (routes,
// MCP tools and discovery documents name them), with a JSON Schema
// generated from the same tags the decoder enforces.
func ExampleSchema() {
	v, ok := shapes.New("ClaimVerificationRequest")
	if !ok {
		log.Fatal("unknown shape")
	}
	if err := shapes.Decode([]byte(`{"claim":"USDC on Base has 6 decimals.","maxSources":3}`), v); err != nil {
		log.Fatal(err)
	}
	req := v.(*claims.Request)
	fmt.Println(req.MaxSources, req.MinimumSources)

	raw, ok := shapes.Schema("ClaimVerificationRequest")
	if !ok {
		log.Fatal("no schema")
	}
	var s struct {
		Defs map[string]struct {
			Required             []string `json:"required"`
			AdditionalProperties *bool    `json:"additionalProperties"`
			Properties           map[string]struct {
				MinLength *int `json:"minLength"`
				MaxLength *int `json:"maxLength"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		log.Fatal(err)
	}
	d := s.Defs["ClaimVerificationRequest"]
	claim := d.Properties["claim"]
	fmt.Println(d.Required, *d.AdditionalProperties, *claim.MinLength, *claim.MaxLength)
	// Output:
	// 3 2
	// [claim] false 3 4000
}
