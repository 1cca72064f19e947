package agents

// Niche discovery over MCP: search_niches and get_niche. Both serve free
// previews; with "full": true they sell the full evaluations for the same
// price, through the same sale and with the same rules as the HTTP
// pay-per-call routes: both call the niche catalogue as sold (sell.Niche),
// and errors have the HTTP routes' statuses and bodies.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/shapes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// appError is the tool error of an error of the application: the status
// and body the HTTP routes give it.
func (ms *mcpServer) appError(ctx context.Context, err error) *mcp.CallToolResult {
	var ve *shapes.ValidationError
	if errors.As(err, &ve) {
		return errorResult(http.StatusUnprocessableEntity, ve, nil)
	}
	if rf, ok := sell.Refuse(err); ok {
		return errorResult(rf.Status, rf.Body, nil)
	}
	st, d := ms.s.Status(ctx, err)
	return detailResult(st, d, nil)
}

// jsonOf is the tool result of an answer.
func (ms *mcpServer) jsonOf(ctx context.Context, v any) *mcp.CallToolResult {
	b, err := httpjson.Marshal(v)
	if err != nil {
		return ms.appError(ctx, err)
	}
	return jsonResult(b, false)
}

// searchOptions decodes the search arguments as GET /v1/search decodes its
// query (422 at ["query", …]).
func searchOptions(q url.Values) (niche.SearchOptions, *shapes.ValidationError) {
	var o niche.SearchOptions
	if err := shapes.DecodeQuery(q, &o); err != nil {
		var ve *shapes.ValidationError
		if errors.As(err, &ve) {
			return o, ve.WithPrefix("query")
		}
		return o, &shapes.ValidationError{Detail: []shapes.ErrorDetail{{Type: "value_error", Loc: []any{"query"}, Msg: err.Error()}}}
	}
	return o, nil
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

// paidNicheTool sells a niche call: check (never charged), then the
// sale with work as the paid work.
func (ms *mcpServer) paidNicheTool(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	check func(context.Context) error, work func(context.Context) (any, error), q url.Values, pv map[string]string) (*mcp.CallToolResult, error) {
	if err := check(ctx); err != nil {
		return ms.appError(ctx, err), nil
	}
	prog := newMCPProgress(ctx, req)
	defer prog.close()
	paid := func(wctx context.Context) ([]byte, *toolFailure) {
		v, err := work(wctx)
		var body []byte
		if err == nil {
			body, err = httpjson.Marshal(v)
		}
		if err != nil {
			st, d := ms.s.Status(wctx, err)
			return nil, &toolFailure{status: st, body: httpjson.DetailBody{Detail: d}, detail: d}
		}
		return body, nil
	}
	idem := metaString(req, metaIdempotencyKey, httpgate.HeaderIdempotencyKey)
	return ms.charge(ctx, req, tool, offer, argsHash(tool, q, pv), idem, prog, paid)
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
	n := ms.s.App().Niche
	if n == nil {
		return nil, nil
	}
	evalOffer, searchOffer := n.EvaluationOffer(), n.SearchOffer()
	searchIn, getIn, err := nicheToolSchemas()
	if err != nil {
		return nil, err
	}
	search := &mcp.Tool{
		Name:  "search_niches",
		Title: "Search niche evaluations",
		Description: fmt.Sprintf("Search the catalogue of reviewed niche-market evaluations (every word must match; ranked by relevance). "+
			"Free: previews (title, buyer, category, score, problem teaser). With full: true, full evaluations with their evidence, "+
			"paid per call: %s USDC via %s.", payment.MicroUSD(searchOffer.AmountMicroUSD).String(), mcpPayHow),
		InputSchema: searchIn,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
	get := &mcp.Tool{
		Name:  "get_niche",
		Title: "Read a niche evaluation",
		Description: fmt.Sprintf("Read one niche evaluation by id. Free: the preview. With full: true, the full evaluation "+
			"(score dimensions, evidence links, trend) and an unlock token for the HTTP route, paid per call: %s USDC via %s.",
			payment.MicroUSD(evalOffer.AmountMicroUSD).String(), mcpPayHow),
		InputSchema: getIn,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
	return []mcpTool{
		{tool: search, service: route.NicheServiceKey, offer: &searchOffer, timeout: searchOffer.WorkTimeout,
			summary: "Search niche evaluations: free previews, or full evaluations paid per call with x402 or MPP (full: true).",
			handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				q, full, ve := nicheArgs(toolArgs(req), []string{"q", "category", "sort"}, []string{"limit"})
				if ve != nil {
					return errorResult(http.StatusUnprocessableEntity, ve, nil), nil
				}
				opts, ve := searchOptions(q)
				if ve != nil {
					return errorResult(http.StatusUnprocessableEntity, ve, nil), nil
				}
				if full {
					return ms.paidNicheTool(ctx, req, "search_niches", searchOffer, n.CheckPaidSearch,
						func(ctx context.Context) (any, error) { return n.PaidSearch(ctx, opts) }, q, nil)
				}
				// A free search counts against the caller's daily quota,
				// exactly as GET /v1/search does for an anonymous caller.
				var c sell.Caller
				if p, ok := ctx.Value(mcpPeerKey{}).(mcpPeer); ok {
					c.Address = n.ClientAddress(p.addr, p.forwarded)
				}
				out, err := n.Search(ctx, opts, c)
				if err != nil {
					return ms.appError(ctx, err), nil
				}
				return ms.jsonOf(ctx, out), nil
			}},
		{tool: get, service: route.NicheServiceKey, offer: &evalOffer, timeout: evalOffer.WorkTimeout,
			summary: "Read a niche evaluation: the free preview, or the full evaluation paid per call with x402 or MPP (full: true).",
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
				if full {
					exists := func(ctx context.Context) error {
						ok, err := n.Engine().Exists(ctx, id)
						if err == nil && !ok {
							err = niche.ErrNotFound
						}
						return err
					}
					return ms.paidNicheTool(ctx, req, "get_niche", evalOffer, exists,
						func(ctx context.Context) (any, error) { return n.Buy(ctx, id) }, url.Values{}, map[string]string{"niche_id": id})
				}
				out, err := n.Preview(ctx, id)
				if err != nil {
					return ms.appError(ctx, err), nil
				}
				return ms.jsonOf(ctx, out), nil
			}},
	}, nil
}
