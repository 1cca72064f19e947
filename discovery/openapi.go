package discovery

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/assaykit/assay/payment"
)

// Names of the components this package adds to every OpenAPI document.
const (
	ComponentPaymentRequired = "PaymentRequiredProblem"
	ComponentDetail          = "ErrorDetail"
	componentValidation      = "HTTPValidationError"
)

const paymentRequiredSchema = `{"type":"object","description":"402 answer (media type application/problem+json): an RFC 9457 problem that is also an x402 v1 document. The PAYMENT-REQUIRED header carries the x402 v2 PaymentRequired (base64 JSON) and each WWW-Authenticate header one MPP Payment challenge.","properties":{"type":{"type":"string"},"title":{"type":"string"},"status":{"type":"integer"},"detail":{"type":"string"},"x402Version":{"type":"integer"},"error":{"type":"string"},"accepts":{"type":"array","items":{"type":"object"}}}}`

// MediaProblem is the media type of 402 answers (RFC 9457 problems).
const MediaProblem = "application/problem+json"

const detailSchema = `{"type":"object","required":["detail"],"properties":{"detail":{"type":"string"}}}`

// OpenAPI generates the OpenAPI 3.1 document of s.
//
// Every operation has its parameters (path parameters, and the properties
// of its query shape), its JSON request body (a reference to the body
// shape), a 200 response with the result schema, a 422 response when it
// takes input, and — when s.Paid and the operation is priced — a 402
// response and x-payment-info in both dialects: the x402scan/agentcash one
// (price + protocols) and the MPP discovery draft's (offers, amounts in
// base units), side by side in one object. Top level: x-service-info (MPP
// discovery) and, when paid, x-discovery with the ownership proofs.
func OpenAPI(s *Service) ([]byte, error) {
	comps := map[string]json.RawMessage{}
	for k, v := range s.Components {
		comps[k] = v
	}
	for name, def := range map[string]string{ComponentDetail: detailSchema, ComponentPaymentRequired: paymentRequiredSchema} {
		if _, taken := comps[name]; taken {
			return nil, fmt.Errorf("discovery: component name %q is reserved", name)
		}
		if name == ComponentDetail || s.Paid {
			comps[name] = json.RawMessage(def)
		}
	}
	paths := map[string]map[string]any{}
	schemes := map[string]any{}
	for _, op := range s.Operations {
		for _, alt := range op.Security {
			for _, name := range alt {
				sc, ok := s.SecuritySchemes[name]
				if !ok {
					return nil, fmt.Errorf("discovery: %s names security scheme %q, which the service does not define", op.ID, name)
				}
				schemes[name] = securityScheme(sc)
			}
		}
		o, err := s.openAPIOperation(op, comps)
		if err != nil {
			return nil, err
		}
		if paths[op.Path] == nil {
			paths[op.Path] = map[string]any{}
		}
		m := strings.ToLower(op.Method)
		if _, dup := paths[op.Path][m]; dup {
			return nil, fmt.Errorf("discovery: two operations for %s %s", op.Method, op.Path)
		}
		paths[op.Path][m] = o
	}
	info := map[string]any{"title": s.Name, "version": s.Version, "description": s.Description}
	if s.Provider.Contact != "" {
		info["contact"] = map[string]any{"name": s.Provider.Name, "email": s.Provider.Contact}
	}
	if s.Lifecycle != "" {
		info["x-lifecycle"] = s.Lifecycle
	}
	svcInfo := map[string]any{"docs": map[string]any{"homepage": s.Homepage, "apiReference": s.URL(PathOpenAPI)}}
	if len(s.Categories) > 0 {
		svcInfo["categories"] = s.Categories
	}
	components := map[string]any{"schemas": comps}
	if len(schemes) > 0 {
		components["securitySchemes"] = schemes
	}
	doc := map[string]any{
		"openapi":        "3.1.0",
		"info":           info,
		"servers":        []any{map[string]any{"url": s.Base}},
		"paths":          paths,
		"components":     components,
		"x-service-info": svcInfo,
	}
	if len(s.Tags) > 0 {
		doc["tags"] = []any{map[string]any{"name": s.Key, "description": s.Name}}
	}
	if s.Paid && len(s.OwnershipProofs) > 0 {
		doc["x-discovery"] = map[string]any{"ownershipProofs": s.OwnershipProofs}
	}
	return marshal(doc)
}

// openAPIOperation is the OpenAPI operation object of op: its parameters
// and security, request body, the 200, 422 and 402 responses the document
// states itself, then the operation's own responses.
func (s *Service) openAPIOperation(op Operation, comps map[string]json.RawMessage) (map[string]any, error) {
	o := map[string]any{"operationId": op.ID, "summary": op.Summary, "tags": []string{s.Key}}
	params, err := operationParams(op, comps)
	if err != nil {
		return nil, err
	}
	if op.Security != nil {
		o["security"] = securityRequirements(op.Security)
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != "" || op.BodySchema != nil {
		body, err := requestBody(op, comps)
		if err != nil {
			return nil, err
		}
		o["requestBody"] = body
	}
	ok, err := okResponse(op, comps)
	if err != nil {
		return nil, err
	}
	responses := map[string]any{"200": ok}
	if op.Body != "" || op.Query != "" || len(pathParams(op.Path)) > 0 {
		var verr any = ref(ComponentDetail)
		if _, ok := comps[componentValidation]; ok {
			verr = ref(componentValidation)
		}
		responses["422"] = map[string]any{"description": "Validation Error",
			"content": map[string]any{"application/json": map[string]any{"schema": verr}}}
	}
	if op.Price != nil && s.Paid {
		addPaidResponses(op, ok, responses)
		o["x-payment-info"] = paymentInfo(op.Price)
	}
	own := map[string]bool{}
	for _, r := range op.Responses {
		if err := addResponse(op.ID, r, comps, responses, own); err != nil {
			return nil, err
		}
	}
	o["responses"] = responses
	for _, k := range sortedKeys(op.Extra) {
		o["x-"+k] = op.Extra[k]
	}
	return o, nil
}

// operationParams are the path, query and header parameters of op.
func operationParams(op Operation, comps map[string]json.RawMessage) ([]any, error) {
	var params []any
	for _, p := range pathParams(op.Path) {
		var schema any = map[string]any{"type": "string"}
		if raw, ok := op.Params[p]; ok {
			schema = raw
		}
		params = append(params, map[string]any{"name": p, "in": "path", "required": true, "schema": schema})
	}
	if op.Query != "" {
		qp, err := queryParams(comps, op.Query)
		if err != nil {
			return nil, fmt.Errorf("discovery: %s: %w", op.ID, err)
		}
		params = append(params, qp...)
	}
	for _, q := range op.QueryParams {
		params = append(params, paramObject(q, "query"))
	}
	for _, h := range op.Headers {
		params = append(params, paramObject(h, "header"))
	}
	return params, nil
}

// securityRequirements is the OpenAPI security list of alternatives, each
// a list of scheme names that must all be met.
func securityRequirements(alts [][]string) []any {
	sec := []any{}
	for _, alt := range alts {
		req := map[string]any{}
		for _, name := range alt {
			req[name] = []string{}
		}
		sec = append(sec, req)
	}
	return sec
}

// requestBody is the request body object of op (its shape or its own
// schema, with its example).
func requestBody(op Operation, comps map[string]json.RawMessage) (map[string]any, error) {
	var media map[string]any
	if op.BodySchema != nil {
		media = map[string]any{"schema": op.BodySchema}
	} else {
		if _, ok := comps[op.Body]; !ok {
			return nil, fmt.Errorf("discovery: %s: no schema named %q", op.ID, op.Body)
		}
		media = map[string]any{"schema": ref(op.Body)}
	}
	if len(op.Example) > 0 {
		media["example"] = op.Example
	}
	mt := op.BodyMediaType
	if mt == "" {
		mt = "application/json"
	}
	return map[string]any{"required": true, "content": map[string]any{mt: media}}, nil
}

// okResponse is the 200 response of op: its output schema under each of
// its media types, and its headers.
func okResponse(op Operation, comps map[string]json.RawMessage) (map[string]any, error) {
	var okSchema any = map[string]any{"type": "object"}
	if op.Output != "" {
		if _, ok := comps[op.Output]; !ok {
			return nil, fmt.Errorf("discovery: %s: no schema named %q", op.ID, op.Output)
		}
		okSchema = ref(op.Output)
	}
	ok := map[string]any{"description": "Success", "content": map[string]any{"application/json": map[string]any{"schema": okSchema}}}
	if len(op.OutputMediaTypes) > 0 {
		content := map[string]any{}
		if op.Output != "" && !slices.ContainsFunc(op.OutputMediaTypes, isJSONMedia) {
			content["application/json"] = map[string]any{"schema": okSchema}
		}
		for _, mt := range op.OutputMediaTypes {
			media := map[string]any{} // bytes: OpenAPI 3.1 omits the schema
			switch {
			case isJSONMedia(mt):
				media["schema"] = okSchema
			case strings.HasPrefix(mt, "text/"):
				media["schema"] = map[string]any{"type": "string"}
			}
			content[mt] = media
		}
		ok["content"] = content
	}
	if len(op.OutputHeaders) > 0 {
		ok["headers"] = headerObjects(op.OutputHeaders)
	}
	return ok, nil
}

// addPaidResponses adds to the 200 response ok the headers of a paid
// answer, and the 402 to responses.
func addPaidResponses(op Operation, ok, responses map[string]any) {
	hs := map[string]string{
		"X-Agentic-Order-Id":    "The order of this paid call.",
		"X-Agentic-Order-Token": "Secret that reads the order later (shown once): GET /v1/orders/{order_id} with it in X-Agentic-Order-Token.",
		"X-Agentic-Receipt-Id":  "The signed receipt of this call.",
	}
	for k, v := range op.OutputHeaders {
		hs[k] = v
	}
	ok["headers"] = headerObjects(hs)
	responses["402"] = map[string]any{
		"description": "Payment Required: pay one of the advertised challenges and repeat the request.",
		"headers": headerObjects(map[string]string{
			"PAYMENT-REQUIRED": "x402 v2 PaymentRequired, base64 JSON.",
			"WWW-Authenticate": "MPP Payment challenge (one header per method).",
		}),
		"content": map[string]any{challengeMedia(op.Price): map[string]any{"schema": ref(ComponentPaymentRequired)}},
	}
}

// addResponse adds one response the operation declares to responses,
// merged into one it declared before under the same status (own), and
// refuses a status the document states itself or a media type declared
// twice.
func addResponse(opID string, r Response, comps map[string]json.RawMessage, responses map[string]any, own map[string]bool) error {
	code := fmt.Sprint(r.Status)
	prev, taken := responses[code].(map[string]any)
	if taken && !own[code] {
		return fmt.Errorf("discovery: %s declares status %s, which the document states itself", opID, code)
	}
	own[code] = true
	resp := map[string]any{"description": r.Description}
	if taken {
		resp = prev
	}
	content, _ := resp["content"].(map[string]any)
	if content == nil {
		content = map[string]any{}
	}
	mt := r.MediaType
	if mt == "" {
		mt = "application/json"
	}
	if _, dup := content[mt]; dup {
		return fmt.Errorf("discovery: %s declares %s %s twice", opID, code, mt)
	}
	if err := responseMedia(opID, r, comps, content, mt); err != nil {
		return err
	}
	if len(content) > 0 {
		resp["content"] = content
	}
	if len(r.Headers) > 0 {
		hs, _ := resp["headers"].(map[string]any)
		if hs == nil {
			hs = map[string]any{}
		}
		for k, v := range headerObjects(r.Headers) {
			hs[k] = v
		}
		resp["headers"] = hs
	}
	if taken && r.Description != "" && !strings.Contains(resp["description"].(string), r.Description) {
		resp["description"] = resp["description"].(string) + " " + r.Description
	}
	responses[code] = resp
	return nil
}

// responseMedia sets the media object of a declared response under mt:
// none for "-", its JSON schema (the detail body by default) for JSON, a
// string for text, nothing for bytes.
func responseMedia(opID string, r Response, comps map[string]json.RawMessage, content map[string]any, mt string) error {
	switch {
	case r.MediaType == "-":
	case r.MediaType == "" || r.MediaType == "application/json" || strings.HasSuffix(r.MediaType, "+json"):
		name := r.Schema
		if name == "" {
			name = ComponentDetail
		}
		if _, ok := comps[name]; !ok {
			return fmt.Errorf("discovery: %s: no schema named %q", opID, name)
		}
		content[mt] = map[string]any{"schema": ref(name)}
	default:
		media := map[string]any{}
		if strings.HasPrefix(r.MediaType, "text/") {
			media["schema"] = map[string]any{"type": "string"}
		}
		content[mt] = media
	}
	return nil
}

// challengeMedia is the media type of p's 402 answers.
func challengeMedia(p *Price) string {
	if p.ChallengeMediaType != "" {
		return p.ChallengeMediaType
	}
	return MediaProblem
}

// paramObject is the OpenAPI parameter object of p in a location.
func paramObject(p Param, in string) map[string]any {
	var schema any = map[string]any{"type": "string"}
	if p.Schema != nil {
		schema = p.Schema
	}
	out := map[string]any{"name": p.Name, "in": in, "required": p.Required, "schema": schema}
	if p.Description != "" {
		out["description"] = p.Description
	}
	return out
}

// headerObjects are OpenAPI header objects (string values) from
// descriptions by name.
func headerObjects(hs map[string]string) map[string]any {
	out := map[string]any{}
	for k, d := range hs {
		out[k] = map[string]any{"description": d, "schema": map[string]any{"type": "string"}}
	}
	return out
}

// securityScheme is the OpenAPI security scheme object of sc.
func securityScheme(sc SecurityScheme) map[string]any {
	out := map[string]any{"type": sc.Type}
	switch sc.Type {
	case "apiKey":
		out["in"], out["name"] = "header", sc.Name
	case "http":
		out["scheme"] = sc.Scheme
	}
	if sc.Description != "" {
		out["description"] = sc.Description
	}
	return out
}

// paymentInfo is x-payment-info in both dialects.
func paymentInfo(p *Price) map[string]any {
	var protocols, offers []any
	seenX402 := false
	for _, m := range p.Methods {
		switch m.Protocol {
		case "x402":
			if !seenX402 {
				protocols = append(protocols, map[string]any{"x402": map[string]any{}})
				seenX402 = true
			}
		case "mpp":
			intent := m.Intent
			if intent == "" {
				intent = "charge"
			}
			protocols = append(protocols, map[string]any{"mpp": map[string]any{"method": m.Scheme, "intent": intent, "currency": m.Asset}})
			desc := m.AssetSymbol
			if m.Scheme == "stripe" {
				desc = "Card; USD " + payment.MicroUSD(p.CardMicroUSD).Decimal() + " minimum"
			} else if m.Network != "" {
				desc += " on " + networkName(m.Network)
			}
			if m.Amount != "" && m.Asset != "" {
				offers = append(offers, map[string]any{"intent": intent, "method": m.Scheme, "amount": m.Amount,
					"currency": m.Asset, "description": strings.TrimSpace(desc)})
			}
		}
	}
	out := map[string]any{"price": map[string]any{"mode": "fixed", "currency": "USD", "amount": payment.MicroUSD(p.AmountMicroUSD).Decimal()}}
	if len(protocols) > 0 {
		out["protocols"] = protocols
	}
	if len(offers) > 0 {
		out["offers"] = offers
	}
	return out
}

// networkName names the networks assay knows for people.
func networkName(caip2 string) string {
	switch caip2 {
	case "eip155:8453":
		return "Base"
	case "eip155:84532":
		return "Base Sepolia"
	}
	return caip2
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// pathParams lists the {name} segments of a path pattern.
func pathParams(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if len(seg) > 2 && strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}

// queryParams turns the properties of an object schema into query
// parameters.
func queryParams(comps map[string]json.RawMessage, name string) ([]any, error) {
	raw, ok := comps[name]
	if !ok {
		return nil, fmt.Errorf("no schema named %q", name)
	}
	var def struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		return nil, fmt.Errorf("schema %q: %w", name, err)
	}
	req := map[string]bool{}
	for _, r := range def.Required {
		req[r] = true
	}
	var out []any
	for _, p := range sortedKeys(def.Properties) {
		param := map[string]any{"name": p, "in": "query", "required": req[p], "schema": def.Properties[p]}
		var d struct {
			Description string `json:"description"`
		}
		if json.Unmarshal(def.Properties[p], &d) == nil && d.Description != "" {
			param["description"] = d.Description
		}
		out = append(out, param)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// marshal encodes v without HTML escaping (URLs keep their & and <>).
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// isJSONMedia reports whether mt is JSON: application/json or a +json type.
func isJSONMedia(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
