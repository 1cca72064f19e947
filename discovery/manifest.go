package discovery

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/payment"
)

// Manifest is an agent-service manifest, format 0.1 (see
// schemas/agent-service-manifest-0.1.schema.json).
type Manifest struct {
	ManifestVersion string               `json:"manifestVersion"`
	Service         ManifestService      `json:"service"`
	Provider        ManifestProvider     `json:"provider"`
	Capabilities    []ManifestCapability `json:"capabilities"`
	Transports      []ManifestTransport  `json:"transports"`
	Operations      []ManifestOperation  `json:"operations"`
	Offers          []ManifestOffer      `json:"offers"`
	Provenance      ManifestProvenance   `json:"provenance"`
	Policies        ManifestPolicies     `json:"policies"`
	Extensions      map[string]any       `json:"extensions,omitempty"`
}

// ManifestService is the manifest's service member.
type ManifestService struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	Homepage    string   `json:"homepage"`
	Tags        []string `json:"tags,omitempty"`
}

// ManifestProvider is the manifest's provider member.
type ManifestProvider struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Contact    string `json:"contact"`
	SigningKey string `json:"signingKey,omitempty"`
}

// ManifestCapability is one capability.
type ManifestCapability struct {
	ID      string   `json:"id"`
	Summary string   `json:"summary"`
	Domains []string `json:"domains,omitempty"`
}

// Transport authorisation labels of the manifest (our schema's enum).
const (
	AuthNone          = "none"
	AuthSignedRequest = "signed-request" // every paid call carries a signed payment credential, x402 or MPP
	AuthX402          = "x402"           // x402 only
	AuthMPP           = "mpp"            // MPP only
	AuthX402OrMPP     = "x402-or-mpp"    // either (HTTP headers; MCP _meta)
)

// ManifestTransport is one transport.
type ManifestTransport struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	URL           string `json:"url"`
	Specification string `json:"specification,omitempty"`
	Authorization string `json:"authorization,omitempty"`
}

// ManifestOperation is one operation.
type ManifestOperation struct {
	ID             string          `json:"id"`
	Capability     string          `json:"capability"`
	Transport      string          `json:"transport"`
	Summary        string          `json:"summary"`
	Method         string          `json:"method,omitempty"`
	Path           string          `json:"path,omitempty"`
	Tool           string          `json:"tool,omitempty"`
	InputSchema    json.RawMessage `json:"inputSchema"`
	OutputSchema   json.RawMessage `json:"outputSchema"`
	TimeoutSeconds int             `json:"timeoutSeconds,omitempty"`
	Idempotent     *bool           `json:"idempotent,omitempty"`
}

// ManifestOffer is one offer.
type ManifestOffer struct {
	ID             string                  `json:"id"`
	Operation      string                  `json:"operation"`
	Model          string                  `json:"model"`
	Amount         string                  `json:"amount"`
	Currency       string                  `json:"currency"`
	Unit           string                  `json:"unit,omitempty"`
	PaymentMethods []ManifestPaymentMethod `json:"paymentMethods"`
}

// ManifestPaymentMethod is one way to pay an offer.
type ManifestPaymentMethod struct {
	Protocol string `json:"protocol"`
	Network  string `json:"network,omitempty"`
	Asset    string `json:"asset,omitempty"`
	PayTo    string `json:"payTo,omitempty"`
}

// ManifestProvenance is the manifest's provenance member.
type ManifestProvenance struct {
	Summary   string   `json:"summary"`
	Freshness string   `json:"freshness"`
	Sources   []string `json:"sources,omitempty"`
	Coverage  string   `json:"coverage,omitempty"`
}

// ManifestPolicies is the manifest's policies member.
type ManifestPolicies struct {
	Terms             string   `json:"terms"`
	Privacy           string   `json:"privacy"`
	DataRetentionDays int      `json:"dataRetentionDays"`
	AllowedUse        []string `json:"allowedUse,omitempty"`
	ProhibitedUse     []string `json:"prohibitedUse,omitempty"`
}

// Manifest ids of the transports.
const (
	TransportHTTP = "public-http"
	TransportMCP  = "public-mcp"
	TransportA2A  = "public-a2a"
)

// NewManifest generates the agent-service manifest of s.
//
// Paid operations get one per-call offer priced in USD with the USDC
// methods of their price (x402 and MPP evm), and, when the
// processor offers cards, a separate card offer at the card price with the
// MPP stripe method only. Every MCP tool of the service is an operation on
// the MCP transport ("mcp.<tool>", with the tool's own input schema, as
// tools/list publishes it) and, when it charges, has an x402-only offer;
// the A2A endpoint appears as one operation with its own offer.
// Per-operation extras go under extensions.operations (the schema forbids
// unknown members elsewhere).
func NewManifest(s *Service) (*Manifest, error) {
	m := &Manifest{
		ManifestVersion: ManifestVersion,
		Service: ManifestService{ID: s.URL(PathManifest), Name: s.Name, Description: s.Description,
			Version: s.Version, Homepage: s.Homepage, Tags: s.Tags},
		Provider: ManifestProvider{ID: s.Provider.ID, Name: s.Provider.Name, Contact: s.Provider.Contact,
			SigningKey: s.Provider.SigningKey},
		Provenance: ManifestProvenance{Summary: s.Provenance.Summary, Freshness: s.Provenance.Freshness,
			Sources: s.Provenance.Sources, Coverage: s.Provenance.Coverage},
		Policies: ManifestPolicies{Terms: s.Policies.Terms, Privacy: s.Policies.Privacy,
			DataRetentionDays: s.Policies.DataRetentionDays, AllowedUse: s.Policies.AllowedUse,
			ProhibitedUse: s.Policies.ProhibitedUse},
		Capabilities: []ManifestCapability{},
		Operations:   []ManifestOperation{},
		Offers:       []ManifestOffer{},
	}
	for _, c := range s.Capabilities {
		m.Capabilities = append(m.Capabilities, ManifestCapability(c))
	}
	m.Transports = s.manifestTransports()
	opExtras, err := s.addHTTPOperations(m)
	if err != nil {
		return nil, err
	}
	capID := ""
	if len(s.Capabilities) > 0 {
		capID = s.Capabilities[0].ID
	}
	if s.MCP != nil {
		s.addMCPOperations(m, capID)
	}
	if s.A2A != nil {
		s.addA2AOperation(m, capID)
	}
	if len(m.Offers) == 0 {
		return nil, fmt.Errorf("discovery: service %s has no priced operation: a manifest needs at least one offer", s.Key)
	}
	ext := map[string]any{}
	for k, v := range s.Extensions {
		ext[k] = v
	}
	if s.Lifecycle != "" {
		ext["lifecycle"] = s.Lifecycle
	}
	if s.Paid {
		ext["paymentDiscovery"] = s.PaymentDiscoveryURL()
		ext["payments"] = "enabled"
	} else {
		ext["payments"] = "disabled"
	}
	if len(opExtras) > 0 {
		ext["operations"] = opExtras
	}
	m.Extensions = ext
	return m, nil
}

// offers returns the per-call offers of one priced operation: USDC, and a
// separate card offer when cards are accepted (and card is true).
func (s *Service) offers(opID string, p *Price, card bool) []ManifestOffer {
	base := slug(opID)
	var usdc, cards []ManifestPaymentMethod
	for _, m := range p.Methods {
		pm := ManifestPaymentMethod{Protocol: m.Protocol, Network: m.Network, Asset: m.AssetSymbol, PayTo: m.PayTo}
		if pm.Asset == "" {
			pm.Asset = m.Asset
		}
		if m.Scheme == "stripe" {
			cards = append(cards, pm)
		} else {
			usdc = append(usdc, pm)
		}
	}
	if !s.Paid {
		// Nothing is charged: list the prices, no way to pay them.
		usdc = []ManifestPaymentMethod{{Protocol: "x402"}, {Protocol: "mpp"}}
		cards = nil
	}
	var out []ManifestOffer
	if len(usdc) > 0 {
		out = append(out, ManifestOffer{ID: base + "-call", Operation: opID, Model: "per_call",
			Amount: payment.MicroUSD(p.AmountMicroUSD).Decimal(), Currency: "USD", Unit: "request", PaymentMethods: usdc})
	}
	if card && len(cards) > 0 && p.CardMicroUSD > 0 {
		out = append(out, ManifestOffer{ID: base + "-card", Operation: opID, Model: "per_call",
			Amount: payment.MicroUSD(p.CardMicroUSD).Decimal(), Currency: "USD", Unit: "request", PaymentMethods: cards})
	}
	return out
}

// inputSchema is the self-contained JSON Schema of an operation's input:
// its body, or an object of its query parameters, or an empty object.
func (s *Service) inputSchema(op Operation) (json.RawMessage, error) {
	switch {
	case op.BodySchema != nil:
		return s.selfContainedRoot(op.BodySchema)
	case op.Body != "":
		return s.SelfContained(op.Body)
	case op.Query != "":
		return s.SelfContained(op.Query)
	}
	return json.RawMessage(`{"type":"object"}`), nil
}

// SelfContained returns {"type":"object","$ref":"#/$defs/name","$defs":{…}}:
// the named component as a standalone JSON Schema (draft 2020-12)
// with every definition name uses, or a generic object for "".
func (s *Service) SelfContained(name string) (json.RawMessage, error) {
	if name == "" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if _, ok := s.Components[name]; !ok {
		return nil, fmt.Errorf("discovery: no schema named %q", name)
	}
	return s.selfContainedRoot(json.RawMessage(`{"type":"object","$ref":"#/components/schemas/` + name + `"}`))
}

// selfContainedRoot is root (a schema that refers to components) made
// standalone (draft 2020-12): the components it uses under $defs.
func (s *Service) selfContainedRoot(root json.RawMessage) (json.RawMessage, error) {
	defs := map[string]json.RawMessage{}
	var visit func(string) error
	visit = func(n string) error {
		if _, done := defs[n]; done {
			return nil
		}
		d, ok := s.Components[n]
		if !ok {
			return fmt.Errorf("discovery: a schema refers to unknown %q", n)
		}
		defs[n] = json.RawMessage(strings.ReplaceAll(string(d), `"#/components/schemas/`, `"#/$defs/`))
		for _, r := range refsIn(d) {
			if err := visit(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range refsIn(root) {
		if err := visit(r); err != nil {
			return nil, err
		}
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(root), `"#/components/schemas/`, `"#/$defs/`)), &out); err != nil {
		return nil, fmt.Errorf("discovery: body schema: %w", err)
	}
	out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	if _, ok := out["type"]; !ok {
		out["type"] = "object"
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return json.Marshal(out)
}

// refsIn lists the component names a schema refers to.
func refsIn(b []byte) []string {
	const marker = `"#/components/schemas/`
	var out []string
	for s := string(b); ; {
		i := strings.Index(s, marker)
		if i < 0 {
			return out
		}
		s = s[i+len(marker):]
		j := strings.IndexByte(s, '"')
		if j < 0 {
			return out
		}
		out = append(out, s[:j])
		s = s[j:]
	}
}

// manifestTransports are the service's transports: HTTP, and MCP and A2A
// when it has those endpoints.
func (s *Service) manifestTransports() []ManifestTransport {
	httpAuth := AuthNone
	if s.Paid {
		httpAuth = AuthSignedRequest
	}
	out := []ManifestTransport{{ID: TransportHTTP, Type: "http", URL: s.Base,
		Specification: s.URL(PathOpenAPI), Authorization: httpAuth}}
	if s.MCP != nil {
		auth := AuthNone
		if s.Paid {
			auth = AuthX402OrMPP
		}
		out = append(out, ManifestTransport{ID: TransportMCP, Type: "mcp", URL: s.URL(s.MCP.Path),
			Specification: s.URL(PathMCPServer), Authorization: auth})
	}
	if s.A2A != nil {
		auth := AuthNone
		if s.Paid && s.A2A.Price != nil {
			auth = AuthX402OrMPP
		}
		out = append(out, ManifestTransport{ID: TransportA2A, Type: "a2a", URL: s.URL(s.A2A.Path),
			Specification: s.URL(PathAgentCard), Authorization: auth})
	}

	return out
}

// addHTTPOperations adds the HTTP operations of s and their offers to m,
// and returns the operations' extras by id.
func (s *Service) addHTTPOperations(m *Manifest) (map[string]any, error) {
	opExtras := map[string]any{}
	for _, op := range s.Operations {
		in, err := s.inputSchema(op)
		if err != nil {
			return nil, err
		}
		out, err := s.SelfContained(op.Output)
		if err != nil {
			return nil, err
		}
		if len(op.OutputMediaTypes) > 0 && op.Output == "" {
			// Not JSON: a string in the first media type.
			if out, err = json.Marshal(map[string]string{"type": "string", "contentMediaType": op.OutputMediaTypes[0]}); err != nil {
				return nil, err
			}
		}
		idem := op.Idempotent
		mo := ManifestOperation{ID: op.ID, Capability: op.Capability, Transport: TransportHTTP, Summary: op.Summary,
			Method: op.Method, Path: s.Prefix + op.Path, InputSchema: in, OutputSchema: out,
			TimeoutSeconds: op.TimeoutSeconds, Idempotent: &idem}
		m.Operations = append(m.Operations, mo)
		if len(op.Extra) > 0 {
			opExtras[op.ID] = op.Extra
		}
		if op.Price != nil {
			m.Offers = append(m.Offers, s.offers(op.ID, op.Price, true)...)
		}
	}
	return opExtras, nil
}

// addMCPOperations adds every MCP tool of s as an operation on the MCP
// transport, with an x402-only offer when it charges.
func (s *Service) addMCPOperations(m *Manifest, capID string) {
	for _, tl := range s.MCP.Tools {
		id := "mcp." + tl.Name
		in, out := tl.InputSchema, tl.OutputSchema
		if len(in) == 0 {
			in = json.RawMessage(`{"type":"object"}`)
		}
		if len(out) == 0 {
			out = json.RawMessage(`{"type":"object"}`)
		}
		c := tl.Capability
		if c == "" {
			c = capID
		}
		idem := tl.Idempotent
		m.Operations = append(m.Operations, ManifestOperation{ID: id, Capability: c, Transport: TransportMCP,
			Summary: tl.Summary, Tool: tl.Name, InputSchema: in, OutputSchema: out,
			TimeoutSeconds: tl.TimeoutSeconds, Idempotent: &idem})
		if tl.Price != nil {
			// MCP calls pay with x402 (_meta["x402/payment"]) or an MPP
			// evm charge (_meta["org.paymentauth/credential"]); cards
			// (MPP stripe) are sold over HTTP and A2A only.
			xp := *tl.Price
			xp.Methods = slices.DeleteFunc(slices.Clone(tl.Price.Methods), func(m Method) bool { return m.Scheme == "stripe" })
			if len(xp.Methods) > 0 || !s.Paid {
				m.Offers = append(m.Offers, s.offers(id, &xp, false)...)
			}
		}
	}
}

// addA2AOperation adds the A2A endpoint as one operation with its offer.
func (s *Service) addA2AOperation(m *Manifest, capID string) {
	id := "a2a.send-message"
	f := false
	in := s.A2A.InputSchema
	if in == nil {
		in = json.RawMessage(`{"type":"object"}`)
	}
	m.Operations = append(m.Operations, ManifestOperation{ID: id, Capability: capID, Transport: TransportA2A,
		Summary:     "Send a message to the agent (A2A 1.0 SendMessage over JSON-RPC).",
		InputSchema: in, OutputSchema: json.RawMessage(`{"type":"object"}`), Idempotent: &f})
	if s.A2A.Price != nil {
		m.Offers = append(m.Offers, s.offers(id, s.A2A.Price, true)...)
	}
}
