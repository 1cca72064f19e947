package analysis

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// analysisSchemaJSON is the strict JSON Schema of the model's analysis. It is
// sent to the model and the same document validates the output.
//
//go:embed analysis.schema.json
var analysisSchemaJSON []byte

// SchemaName is the name under which the schema is sent (OpenAI's
// text.format.name).
const SchemaName = "claim_verification"

// Schema returns a copy of the strict JSON Schema of the analysis: OpenAI
// sends it as the structured-output format, Anthropic states it in the
// prompt, and both validate the model's output against it.
func Schema() json.RawMessage {
	return json.RawMessage(slices.Clone(analysisSchemaJSON))
}

// schemaNode is the subset of JSON Schema that OpenAI's strict mode accepts
// and that analysis.schema.json uses.
type schemaNode struct {
	Type                 json.RawMessage        `json:"type"`
	Enum                 []string               `json:"enum"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Description          string                 `json:"description"`
}

// types returns the allowed JSON types of the node.
func (n *schemaNode) types() []string {
	var one string
	if json.Unmarshal(n.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(n.Type, &many)
	return many
}

// optionalInAnswers are the fact properties an answer may lack although
// the schema sent in strict mode requires them: answers recorded before the
// property existed, or from a model that ignores strict mode. Without
// timeSensitive the claims engine reads the fact's wording instead.
var optionalInAnswers = []string{"timeSensitive"}

// answerSchema is the analysis schema as answers are validated against it:
// analysis.schema.json with optionalInAnswers not required.
func answerSchema() (*schemaNode, error) {
	n, err := parseSchema(analysisSchemaJSON)
	if err != nil {
		return nil, err
	}
	if facts := n.Properties["atomicFacts"]; facts != nil && facts.Items != nil {
		facts.Items.Required = slices.DeleteFunc(facts.Items.Required, func(name string) bool {
			return slices.Contains(optionalInAnswers, name)
		})
	}
	return n, nil
}

// parseSchema parses a schema document.
func parseSchema(doc []byte) (*schemaNode, error) {
	var n schemaNode
	if err := json.Unmarshal(doc, &n); err != nil {
		return nil, fmt.Errorf("analysis schema: %w", err)
	}
	return &n, nil
}

// decodeStrict decodes exactly one JSON value with numbers kept as
// json.Number.
func decodeStrict(data string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// validate checks v against the node. The first violation is returned with
// a JSONPath-like location.
func (n *schemaNode) validate(path string, v any) error {
	types := n.types()
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(t, v) }) {
		return fmt.Errorf("%s: expected %s, got %s", path, strings.Join(types, " or "), jsonType(v))
	}
	switch x := v.(type) {
	case string:
		if len(n.Enum) > 0 && !slices.Contains(n.Enum, x) {
			return fmt.Errorf("%s: %q is not one of %s", path, x, strings.Join(n.Enum, ", "))
		}
	case []any:
		if n.Items != nil {
			for i, e := range x {
				if err := n.Items.validate(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for _, name := range n.Required {
			if _, ok := x[name]; !ok {
				return fmt.Errorf("%s: missing required property %q", path, name)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			child, ok := n.Properties[k]
			if !ok {
				if n.AdditionalProperties != nil && !*n.AdditionalProperties {
					return fmt.Errorf("%s: unexpected property %q", path, k)
				}
				continue
			}
			if err := child.validate(path+"."+k, x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasType(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
