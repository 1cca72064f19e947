package agents

// Niche discovery over MCP: search_niches and get_niche. Both serve free
// previews; with "full": true they sell the full evaluations for the same
// price, through the same Cashier and with the same rules as the HTTP
// pay-per-call routes. They run the niche routes' own handlers in-process,
// so validation, errors and bodies are exactly the HTTP ones.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/shapes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nicheRoutes are the niche routes the MCP niche tools run in-process:
// the HTTP handlers of the free search and preview and the paid handlers
// (behind the paywall) of the two pay-per-call routes, with their offers.
type nicheRoutes struct {
	prefix          string
	search, preview http.Handler
	paidSearch      paidHandler
	paidEvaluation  paidHandler
	searchOffer     payment.Offer
	evaluationOffer payment.Offer
}

// paidHandler is a paid route's handler behind the paywall, with its
// check before payment.
type paidHandler interface {
	httpgate.Prechecker
	http.Handler
}

// nicheForMCP returns the niche routes of s, or nil when niche discovery
// is not mounted.
func nicheForMCP(s *server.Server) *nicheRoutes {
	n := &nicheRoutes{}
	for _, r := range s.Routes() {
		switch r.ID {
		case "niche.search":
			n.search = r.Handler
			if len(r.Prefixes) > 0 {
				n.prefix = strings.TrimRight(r.Prefixes[0], "/")
			}
		case "niche.preview":
			n.preview = r.Handler
		case "niche.pay-per-call":
			n.paidEvaluation, _ = r.Work.(paidHandler)
			n.evaluationOffer = *r.Offer
		case "niche.search.pay-per-call":
			n.paidSearch, _ = r.Work.(paidHandler)
			n.searchOffer = *r.Offer
		}
	}
	if n.search == nil || n.preview == nil || n.paidSearch == nil || n.paidEvaluation == nil {
		return nil
	}
	return n
}

// toolRecorder keeps what an in-process handler wrote.
type toolRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *toolRecorder) Header() http.Header { return r.header }
func (r *toolRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *toolRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *toolRecorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// inProcess is a GET request for a niche handler.
func inProcess(ctx context.Context, path string, q url.Values, pathValues map[string]string) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://mcp.invalid"+path+"?"+q.Encode(), nil)
	for k, v := range pathValues {
		r.SetPathValue(k, v)
	}
	r.RemoteAddr = "127.0.0.1:0"
	return r
}

// nicheArgs reads tool arguments into query values: the named string and
// integer members, and the boolean "full". Other members, or members of
// the wrong type, are refused with a 422 body in Pydantic's words and
// order: the declared members' errors (strs, ints, full), then unknown
// members in order of first appearance (the first shapes.MaxErrors of
// them); a repeated member counts with its last value. One pass over the
// arguments, whatever their number.
func nicheArgs(raw []byte, strs, ints []string) (url.Values, bool, *shapes.ValidationError) {
	notObject := &shapes.ValidationError{Detail: []shapes.ErrorDetail{{Type: "model_attributes_type", Loc: []any{"arguments"},
		Msg: "Input should be a valid dictionary or object to extract fields from", Input: string(raw)}}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, notObject
	}
	declared := map[string]json.RawMessage{} // last value of each declared member
	extra := map[string]json.RawMessage{}    // last value of each kept unknown member
	var extras []string                      // kept unknown members, in order
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, notObject
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, notObject
		}
		switch _, kept := extra[k]; {
		case k == "full" || contains(strs, k) || contains(ints, k):
			declared[k] = v
		case kept:
			extra[k] = v
		case len(extras) < shapes.MaxErrors:
			extras = append(extras, k)
			extra[k] = v
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, notObject
	}
	q := url.Values{}
	full := false
	var errs []shapes.ErrorDetail
	fail := func(typ, k, msg string, v json.RawMessage) {
		var input any
		_ = json.Unmarshal(v, &input)
		errs = append(errs, shapes.ErrorDetail{Type: typ, Loc: []any{"arguments", k}, Msg: msg, Input: input})
	}
	for _, k := range append(append(append([]string(nil), strs...), ints...), "full") {
		v, ok := declared[k]
		if !ok || bytes.Equal(v, []byte("null")) && k != "full" {
			continue // absent or null: absent, as the schema's optional members allow
		}
		switch {
		case k == "full":
			if err := json.Unmarshal(v, &full); err != nil {
				fail("bool_type", k, "Input should be a valid boolean", v)
			}
		case contains(strs, k):
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				fail("string_type", k, "Input should be a valid string", v)
				continue
			}
			q.Set(k, s)
		default:
			var n json.Number
			d := json.NewDecoder(bytes.NewReader(v))
			d.UseNumber()
			if err := d.Decode(&n); err != nil {
				fail("int_type", k, "Input should be a valid integer", v)
				continue
			}
			q.Set(k, n.String())
		}
	}
	for _, k := range extras {
		fail("extra_forbidden", k, "Extra inputs are not permitted", extra[k])
	}
	if len(errs) > 0 {
		return nil, false, &shapes.ValidationError{Detail: errs}
	}
	return q, full, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// recorded turns an in-process answer into a tool result: errors (status
// >= 400) as error results with the HTTP body.
func recorded(rec *toolRecorder) *mcp.CallToolResult {
	body := bytes.TrimSpace(rec.body.Bytes())
	if !json.Valid(body) {
		body, _ = httpjson.Marshal(httpjson.DetailBody{Detail: strings.TrimSpace(rec.body.String())})
	}
	if rec.code() >= 400 {
		r := jsonResult(body, true)
		r.Meta = mcp.Meta{metaStatus: rec.code()}
		return r
	}
	return jsonResult(body, false)
}

// argsHash identifies a niche call for idempotency.
func argsHash(tool string, q url.Values, pathValues map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "mcp\n%s\n%s\n", tool, q.Encode())
	keys := make([]string, 0, len(pathValues))
	for k := range pathValues {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, pathValues[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// paidNicheTool runs a paid niche handler: its Precheck first (never
// charged), then the charge.
func (ms *mcpServer) paidNicheTool(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	h paidHandler, path string, q url.Values, pv map[string]string) (*mcp.CallToolResult, error) {
	rec := &toolRecorder{header: http.Header{}}
	r, ok := h.Precheck(rec, inProcess(ctx, path, q, pv))
	if !ok {
		return recorded(rec), nil
	}
	prog := newMCPProgress(ctx, req)
	defer prog.close()
	work := func(wctx context.Context) ([]byte, *toolFailure) {
		rec := &toolRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r.WithContext(wctx))
		body := bytes.TrimSpace(rec.body.Bytes())
		if rec.code() >= 400 {
			detail := strings.TrimSpace(rec.body.String())
			var d httpjson.DetailBody
			if json.Unmarshal(body, &d) == nil && d.Detail != "" {
				detail = d.Detail
			}
			var out any = json.RawMessage(body)
			if !json.Valid(body) {
				out = httpjson.DetailBody{Detail: detail}
			}
			return nil, &toolFailure{status: rec.code(), body: out, detail: detail}
		}
		return body, nil
	}
	idem := metaString(req, metaIdempotencyKey, httpgate.HeaderIdempotencyKey)
	return ms.charge(ctx, req, tool, offer, argsHash(tool, q, pv), idem, prog, work)
}

// nicheToolSchemas are the input schemas of search_niches and get_niche,
// built from what the HTTP routes validate, so that they cannot drift:
// search_niches takes the query parameters of GET /v1/search (the
// NicheSearchQuery shape, whose bounds the route enforces) and get_niche
// the {niche_id} path parameter of GET /v1/niches/{niche_id}/preview (its
// OpenAPI schema), each with "full" and no other member (nicheArgs
// refuses others).
func nicheToolSchemas() (search, get json.RawMessage, err error) {
	full := func(what string) map[string]any {
		return map[string]any{"type": "boolean", "default": false,
			"description": "Return " + what + " (paid) instead of the preview (free)."}
	}
	sq, err := inputschema.Inline("NicheSearchQuery")
	if err != nil {
		return nil, nil, errorf("mcp: %v", err)
	}
	inputschema.Describe(sq, map[string]string{
		"q":        "Search text; every word must match (at least three characters).",
		"category": "Only this category (case-insensitive).",
		"sort":     "Tie-break after relevance.",
		"limit":    "Most results to return.",
	})
	sq["additionalProperties"] = false
	sq["properties"].(map[string]any)["full"] = full("full evaluations")
	sq["title"] = "search_niches arguments"
	if search, err = httpjson.Marshal(sq); err != nil {
		return nil, nil, err
	}
	var id map[string]any
	if err := json.Unmarshal(inputschema.PathParams()["niche_id"], &id); err != nil {
		return nil, nil, errorf("mcp: niche_id schema: %v", err)
	}
	gq := map[string]any{"type": "object", "title": "get_niche arguments", "additionalProperties": false, "required": []string{"niche_id"},
		"properties": map[string]any{"niche_id": id, "full": full("the full evaluation")}}
	if get, err = httpjson.Marshal(gq); err != nil {
		return nil, nil, err
	}
	return search, get, nil
}

// nicheTools returns search_niches and get_niche when niche discovery is
// mounted.
func (ms *mcpServer) nicheTools() ([]mcpTool, error) {
	n := nicheForMCP(ms.s)
	if n == nil {
		return nil, nil
	}
	evalOffer, searchOffer := n.evaluationOffer, n.searchOffer
	searchIn, getIn, err := nicheToolSchemas()
	if err != nil {
		return nil, err
	}
	search := &mcp.Tool{
		Name:  "search_niches",
		Title: "Search niche evaluations",
		Description: fmt.Sprintf("Search the catalogue of reviewed niche-market evaluations (every word must match; ranked by relevance). "+
			"Free: previews (title, buyer, category, score, problem teaser). With full: true, full evaluations with their evidence, "+
			"paid per call: %s USDC via x402 in _meta[\"x402/payment\"].", priceUSD(searchOffer.AmountMicroUSD)),
		InputSchema: searchIn,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
	get := &mcp.Tool{
		Name:  "get_niche",
		Title: "Read a niche evaluation",
		Description: fmt.Sprintf("Read one niche evaluation by id. Free: the preview. With full: true, the full evaluation "+
			"(score dimensions, evidence links, trend) and an unlock token for the HTTP route, paid per call: %s USDC via x402 in _meta[\"x402/payment\"].",
			priceUSD(evalOffer.AmountMicroUSD)),
		InputSchema: getIn,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
	searchPath := n.prefix + "/v1/search"
	return []mcpTool{
		{tool: search, service: server.NicheServiceKey, offer: &searchOffer, timeout: searchOffer.WorkTimeout,
			summary: "Search niche evaluations: free previews, or full evaluations paid per call with x402 (full: true).",
			handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				q, full, ve := nicheArgs(toolArgs(req), []string{"q", "category", "sort"}, []string{"limit"})
				if ve != nil {
					return errorResult(http.StatusUnprocessableEntity, ve, nil), nil
				}
				if full {
					return ms.paidNicheTool(ctx, req, "search_niches", searchOffer, n.paidSearch, searchPath+"/pay-per-call", q, nil)
				}
				rec := &toolRecorder{header: http.Header{}}
				r := inProcess(ctx, searchPath, q, nil)
				// A free search counts against the caller's daily quota,
				// exactly as GET /v1/search does for an anonymous caller.
				if p, ok := ctx.Value(mcpPeerKey{}).(mcpPeer); ok {
					r.RemoteAddr = p.addr
					r.Header["X-Forwarded-For"] = p.forwarded
				}
				n.search.ServeHTTP(rec, r) // no Authorization: the anonymous search
				return recorded(rec), nil
			}},
		{tool: get, service: server.NicheServiceKey, offer: &evalOffer, timeout: evalOffer.WorkTimeout,
			summary: "Read a niche evaluation: the free preview, or the full evaluation paid per call with x402 (full: true).",
			handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				q, full, ve := nicheArgs(toolArgs(req), []string{"niche_id"}, nil)
				if ve != nil {
					return errorResult(http.StatusUnprocessableEntity, ve, nil), nil
				}
				id := q.Get("niche_id")
				if id == "" {
					return errorResult(http.StatusUnprocessableEntity, &shapes.ValidationError{Detail: []shapes.ErrorDetail{
						{Type: "missing", Loc: []any{"arguments", "niche_id"}, Msg: "Field required", Input: nil}}}, nil), nil
				}
				pv := map[string]string{"niche_id": id}
				path := n.prefix + "/v1/niches/" + url.PathEscape(id)
				if full {
					return ms.paidNicheTool(ctx, req, "get_niche", evalOffer, n.paidEvaluation, path+"/pay-per-call", url.Values{}, pv)
				}
				rec := &toolRecorder{header: http.Header{}}
				n.preview.ServeHTTP(rec, inProcess(ctx, path+"/preview", url.Values{}, pv))
				return recorded(rec), nil
			}},
	}, nil
}
