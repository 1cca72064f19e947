package discovery

import (
	"encoding/json"
	"regexp"

	"github.com/assaykit/assay/shapes"
)

// componentRef finds OpenAPI component references in a schema.
var componentRef = regexp.MustCompile(`"#/components/schemas/([A-Za-z0-9_.-]+)"`)

// shapeSchemas returns, as OpenAPI components, the JSON Schemas of the named
// request shapes, of HTTPValidationError (every 422), and of every
// component they reference — and nothing else, so shapes of admin routes
// never appear in public documents. The schemas come from shapes, generated
// from the same validate tags the decoder enforces.
func shapeSchemas(names []string) (map[string]json.RawMessage, error) {
	all, err := shapes.OpenAPISchemas()
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	queue := append([]string{"HTTPValidationError"}, names...)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if _, done := out[n]; done {
			continue
		}
		s, ok := all[n]
		if !ok {
			continue
		}
		out[n] = s
		for _, m := range componentRef.FindAllSubmatch(s, -1) {
			queue = append(queue, string(m[1]))
		}
	}
	return out, nil
}
