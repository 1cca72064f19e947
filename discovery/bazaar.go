package discovery

import (
	"encoding/json"
	"strings"
	"sync"

	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/server/route"
)

// Bazaar adds the x402 "bazaar" discovery extension to the 402 answers of
// a server's paid routes, so that x402 crawlers list them as callable: the
// method, an example input (body or query) with the JSON Schema of the
// body, from the same routing table and shapes as the discovery documents.
//
// The processor is built before the server, so Bazaar is wired in two
// steps:
//
//	bz := &discovery.Bazaar{}
//	proc, _ := protocols.New(&protocols.Options{…, Extensions: bz.Extensions})
//	srv, _ := server.New(cfg) // with a gate over proc
//	bz.Bind(srv)
//
// Until Bind (and for offers no route sells) Extensions returns nil. The
// zero value is ready to use and safe for concurrent use.
type Bazaar struct {
	// Schemas returns the JSON Schemas of the request shapes (see
	// Documents.Schemas); nil means the shapes package's.
	Schemas func() (map[string]json.RawMessage, error)

	mu    sync.Mutex
	srv   route.Host
	cache map[string]map[string]json.RawMessage
}

// Bind attaches the server whose routes are described.
func (b *Bazaar) Bind(s route.Host) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.srv = s
	b.cache = map[string]map[string]json.RawMessage{}
}

// Extensions implements protocols.Options.Extensions.
func (b *Bazaar) Extensions(offer payment.Offer, _ payment.Resource) map[string]json.RawMessage {
	b.mu.Lock()
	s := b.srv
	ext, ok := b.cache[offer.ID]
	b.mu.Unlock()
	if s == nil {
		return nil
	}
	if ok {
		return ext
	}
	ext = b.describe(s, offer)
	b.mu.Lock()
	b.cache[offer.ID] = ext
	b.mu.Unlock()
	return ext
}

// describe describes the route of s selling offer (nil when none does or
// it cannot be described).
func (b *Bazaar) describe(s route.Host, offer payment.Offer) map[string]json.RawMessage {
	var r *route.Route
	for _, rt := range s.Routes() {
		if rt.Offer != nil && rt.Offer.ID == offer.ID && rt.Published() {
			r = rt
			break
		}
	}
	if r == nil {
		return nil
	}
	bz := x402seller.BazaarHTTP{Method: r.Method}
	if r.Body != "" {
		src := b.Schemas
		if src == nil {
			src = func() (map[string]json.RawMessage, error) { return shapeSchemas([]string{r.Body}) }
		}
		comps, err := src()
		if err != nil {
			return nil
		}
		svc := &Service{Components: comps}
		if schema, err := svc.SelfContained(r.Body); err == nil {
			bz.BodySchema = schema
		}
		if _, ok := tierOfRoute(r); ok {
			bz.Body = json.RawMessage(claimExample)
		} else {
			bz.Body = map[string]any{}
		}
	}
	if r.Query != "" {
		bz.QueryParams = map[string]string{}
		if q, ok := queryExamples()[r.Query]; ok {
			for k, v := range q {
				bz.QueryParams[k] = v
			}
		}
	}
	if strings.HasPrefix(r.ID, "claims.verify.") {
		bz.OutputExample = map[string]any{"verificationId": "cv_0123456789abcdef0123456789abcdef", "status": "confirmed"}
	}
	raw, err := x402seller.BazaarExtension(bz)
	if err != nil {
		return nil
	}
	return map[string]json.RawMessage{x402.ExtensionBazaar: raw}
}

// claimExample is the example request of the verification tiers.
const claimExample = `{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`

// queryExamples are example queries of the paid query shapes.
func queryExamples() map[string]map[string]string {
	return map[string]map[string]string{
		"NicheSearchQuery": {"q": "dental clinics", "limit": "5"},
	}
}
