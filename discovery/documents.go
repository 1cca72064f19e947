package discovery

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/assaykit/assay/payment"
)

// X402Legacy is the legacy x402scan discovery document served at
// /.well-known/x402.
type X402Legacy struct {
	Version   int      `json:"version"`
	Resources []string `json:"resources"`
	// ResourceTemplates are the paid operations that need an identifier
	// in their path first: absolute URL templates (RFC 6570, level 1,
	// e.g. ".../v1/niches/{niche_id}/pay-per-call"). Readers of the
	// legacy shape ignore members they do not know.
	ResourceTemplates []string `json:"resourceTemplates,omitempty"`
	OwnershipProofs   []string `json:"ownershipProofs,omitempty"`
	Instructions      string   `json:"instructions,omitempty"`
}

// NewX402Legacy lists the paid operations of s (none when s is not paid):
//
//   - in resources, absolute URLs a crawler can call as they are and that
//     answer 402: the operation's URL, with its ExampleQuery when it has
//     required query parameters (such an operation without an example is
//     listed as a template "{?name,...}" instead);
//   - in resourceTemplates, URL templates of the operations with path
//     parameters (the identifier comes from a list or a search first).
func NewX402Legacy(s *Service) *X402Legacy {
	d := &X402Legacy{Version: 1, Resources: []string{}, OwnershipProofs: s.OwnershipProofs}
	methods := map[string]bool{}
	for _, op := range s.Operations {
		if op.Price == nil || !s.Paid {
			continue
		}
		methods[op.Method] = true
		required := s.requiredQuery(op)
		switch {
		case len(pathParams(op.Path)) > 0:
			u := s.URL(op.Path)
			if len(required) > 0 {
				u += "{?" + strings.Join(required, ",") + "}"
			}
			d.ResourceTemplates = append(d.ResourceTemplates, u)
		case len(required) > 0 && op.ExampleQuery == "":
			d.ResourceTemplates = append(d.ResourceTemplates, s.URL(op.Path)+"{?"+strings.Join(required, ",")+"}")
		case len(required) > 0:
			d.Resources = append(d.Resources, s.URL(op.Path)+"?"+op.ExampleQuery)
		default:
			d.Resources = append(d.Resources, s.URL(op.Path))
		}
	}
	var verbs []string
	for _, m := range []string{"GET", "POST"} {
		if methods[m] {
			verbs = append(verbs, m)
		}
	}
	d.Instructions = "Call a resource (" + strings.Join(verbs, " or ") + ", JSON; request shapes in " + s.URL(PathOpenAPI) +
		"). Without payment it answers 402 with x402 (PAYMENT-REQUIRED, v1 body) and MPP (WWW-Authenticate) challenges before any work; " +
		"invalid requests are answered 422 unpaid."
	if len(d.ResourceTemplates) > 0 {
		d.Instructions += " resourceTemplates are URL templates (RFC 6570): fill in an identifier from a list or search operation first."
	}
	return d
}

// Empty reports whether the list names nothing.
func (d *X402Legacy) Empty() bool { return len(d.Resources) == 0 && len(d.ResourceTemplates) == 0 }

// PaymentDiscoveryURL is where a payer finds the prices of s: the x402
// list when it names at least one paid operation, else the OpenAPI
// document (whose operations carry x-payment-info).
func (s *Service) PaymentDiscoveryURL() string {
	if !NewX402Legacy(s).Empty() {
		return s.URL(PathX402)
	}
	return s.URL(PathOpenAPI)
}

// requiredQuery lists the required query parameters of op.
func (s *Service) requiredQuery(op Operation) []string {
	if op.Query == "" {
		return nil
	}
	var def struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(s.Components[op.Query], &def)
	return def.Required
}

// MCPServer is an MCP registry server.json entry.
type MCPServer struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	WebsiteURL  string         `json:"websiteUrl,omitempty"`
	Repository  *MCPRepository `json:"repository,omitempty"`
	Version     string         `json:"version"`
	Remotes     []MCPRemote    `json:"remotes,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// MCPRepository is the source repository of an MCP server.
type MCPRepository struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// MCPRemote is a remote endpoint of an MCP server.
type MCPRemote struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// ErrNoMCP reports a service without an MCP endpoint.
var ErrNoMCP = errors.New("discovery: the service has no MCP endpoint")

// ErrNoA2A reports a service without an A2A endpoint.
var ErrNoA2A = errors.New("discovery: the service has no A2A endpoint")

// NewMCPServer generates the MCP registry entry of s. Prices are not part
// of it (they are in the tool descriptions and the x402 answer).
func NewMCPServer(s *Service) (*MCPServer, error) {
	if s.MCP == nil {
		return nil, ErrNoMCP
	}
	desc := s.Summary
	if desc == "" {
		desc = s.Description
	}
	if n := utf8.RuneCountInString(desc); n > 100 || n == 0 {
		return nil, fmt.Errorf("discovery: MCP description of %s must have 1 to 100 characters, has %d", s.Key, n)
	}
	if strings.Count(s.MCPName, "/") != 1 {
		return nil, fmt.Errorf("discovery: MCP name %q must contain exactly one /", s.MCPName)
	}
	d := &MCPServer{Schema: mcpServerSchema, Name: s.MCPName, Title: s.Name, Description: desc,
		WebsiteURL: s.Homepage, Version: s.Version,
		Remotes: []MCPRemote{{Type: "streamable-http", URL: s.URL(s.MCP.Path)}}}
	if s.Repository != "" {
		d.Repository = &MCPRepository{URL: s.Repository, Source: repoSource(s.Repository)}
	}
	return d, nil
}

func repoSource(u string) string {
	switch {
	case strings.Contains(u, "github.com/"):
		return "github"
	case strings.Contains(u, "gitlab.com/"):
		return "gitlab"
	}
	return "git"
}

// AgentCard is an A2A 1.0 AgentCard.
type AgentCard struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	Provider            *AgentProvider   `json:"provider,omitempty"`
	Version             string           `json:"version"`
	DocumentationURL    string           `json:"documentationUrl,omitempty"`
	Capabilities        AgentCaps        `json:"capabilities"`
	DefaultInputModes   []string         `json:"defaultInputModes"`
	DefaultOutputModes  []string         `json:"defaultOutputModes"`
	Skills              []AgentSkill     `json:"skills"`
	// Signatures are JWS signatures of the card (SignAgentCard).
	Signatures []AgentCardSignature `json:"signatures,omitempty"`
}

// AgentInterface is one A2A endpoint.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider is the card's provider.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCaps are the card's capabilities.
type AgentCaps struct {
	Streaming         bool             `json:"streaming"`
	PushNotifications bool             `json:"pushNotifications"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
}

// AgentExtension is one declared extension.
type AgentExtension struct {
	URI         string `json:"uri"`
	Description string `json:"description,omitempty"`
	// Required is left out when false, the protobuf default (the field
	// is not optional in the proto): the card's canonical form, which
	// its signature covers, has no default values.
	Required bool           `json:"required,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
}

// AgentSkill is one skill.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// NewAgentCard generates the A2A 1.0 card of s. When the A2A endpoint is
// paid, the card declares two informal payment extensions (no registry
// defines them): x402 (https://www.x402.org/) with the price and the
// discovery URL, and MPP (https://paymentauth.org/) with its methods. They
// are alternatives — a call is paid with either — so neither is marked
// required (in A2A, required means a client must support that extension);
// both name the pair in params.alternatives, and an unpaid call is
// answered 402 at the HTTP layer with the challenges of both.
func NewAgentCard(s *Service) (*AgentCard, error) {
	if s.A2A == nil {
		return nil, ErrNoA2A
	}
	in := []string{"text/plain", "application/json"}
	out := []string{"application/json", "text/plain"}
	c := &AgentCard{Name: s.Name, Description: s.Description, Version: s.Version, DocumentationURL: s.Homepage,
		SupportedInterfaces: []AgentInterface{{URL: s.URL(s.A2A.Path), ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		DefaultInputModes:   in, DefaultOutputModes: out, Skills: []AgentSkill{}, Capabilities: AgentCaps{Streaming: true}}
	if s.Provider.Name != "" && s.Provider.URL != "" {
		c.Provider = &AgentProvider{Organization: s.Provider.Name, URL: s.Provider.URL}
	}
	tierText, tierPrices, defaultTier := s.A2A.tierSummary(s.Paid)
	for _, sk := range s.A2A.Skills {
		desc := sk.Description
		if tierText != "" {
			desc = strings.TrimSuffix(desc, ".") + ". " + tierText
		}
		c.Skills = append(c.Skills, AgentSkill{ID: sk.ID, Name: sk.Name, Description: desc, Tags: sk.Tags,
			Examples: sk.Examples, InputModes: in, OutputModes: out})
	}
	if p := s.A2A.Price; p != nil && s.Paid {
		if x := p.methods("x402", ""); len(x) > 0 {
			params := map[string]any{"discoveryUrl": s.PaymentDiscoveryURL(), "priceUsd": payment.MicroUSD(p.AmountMicroUSD).Decimal(),
				"network": x[0].Network, "asset": x[0].AssetSymbol}
			if x[0].PayTo != "" {
				params["payTo"] = x[0].PayTo
			}
			desc := "Pay USD " + payment.MicroUSD(p.AmountMicroUSD).Decimal() + " in " + x[0].AssetSymbol + " on " + networkName(x[0].Network) +
				" per call (HTTP 402, x402 v2 PAYMENT-SIGNATURE or v1 X-PAYMENT header)."
			if len(tierPrices) > 0 {
				params["tiers"] = tierPrices
				params["defaultTier"] = defaultTier
				params["tierMetadataKey"] = s.A2A.TierKey
				desc = "Pay per call in " + x[0].AssetSymbol + " on " + networkName(x[0].Network) +
					" (HTTP 402, x402 v2 PAYMENT-SIGNATURE or v1 X-PAYMENT header), at the price of the tier chosen with params.metadata." +
					s.A2A.TierKey + ": " + tierList(s.A2A.Tiers) + "."
			}
			c.Capabilities.Extensions = append(c.Capabilities.Extensions, AgentExtension{URI: x402ExtensionURI,
				Description: desc, Params: params})
		}
		if mp := p.methods("mpp", ""); len(mp) > 0 {
			var names, parts []string
			for _, m := range mp {
				names = append(names, m.Scheme)
				if m.Scheme == "stripe" {
					parts = append(parts, "stripe card at USD "+payment.MicroUSD(p.CardMicroUSD).Decimal())
				} else {
					parts = append(parts, m.Scheme+" "+m.AssetSymbol+" on "+networkName(m.Network)+" at USD "+payment.MicroUSD(p.AmountMicroUSD).Decimal())
				}
			}
			params := map[string]any{"methods": names, "endpoint": s.URL(s.A2A.Path)}
			desc := "Or pay with an MPP charge (" + strings.Join(parts, "; ") + "), Authorization: Payment header."
			if len(tierPrices) > 0 {
				params["tiers"] = tierPrices
				params["defaultTier"] = defaultTier
				params["tierMetadataKey"] = s.A2A.TierKey
				desc = "Or pay with an MPP charge (" + strings.Join(parts, "; ") + " for the " + defaultTier +
					" tier; the USDC price follows the tier chosen with params.metadata." + s.A2A.TierKey + "), Authorization: Payment header."
			}
			c.Capabilities.Extensions = append(c.Capabilities.Extensions, AgentExtension{URI: mppExtensionURI,
				Description: desc, Params: params})
		}
		var alts []string
		for _, e := range c.Capabilities.Extensions {
			alts = append(alts, e.URI)
		}
		if len(alts) > 1 {
			for i := range c.Capabilities.Extensions {
				e := &c.Capabilities.Extensions[i]
				e.Params["alternatives"] = alts
				e.Description += " One of the payment extensions (" + strings.Join(alts, ", ") + ") is needed, not both."
			}
		}
	}
	return c, nil
}

// tierSummary describes the tiers of an A2A endpoint: a sentence for the
// skills (with the prices when paid), the USDC price of each tier (tier
// name → USD decimal) and the default tier; all empty when there is one
// price.
func (a *A2A) tierSummary(paid bool) (string, map[string]string, string) {
	if len(a.Tiers) == 0 || a.TierKey == "" {
		return "", nil, ""
	}
	prices := map[string]string{}
	deflt := ""
	for _, t := range a.Tiers {
		if t.Price != nil {
			prices[t.Name] = payment.MicroUSD(t.Price.AmountMicroUSD).Decimal()
		}
		if t.Default {
			deflt = t.Name
		}
	}
	list := tierList(a.Tiers)
	if !paid {
		var names []string
		for _, t := range a.Tiers {
			n := t.Name
			if t.Default {
				n += " (default)"
			}
			names = append(names, n)
		}
		list = strings.Join(names, ", ")
	}
	return "Choose the tier with params.metadata." + a.TierKey + ": " + list + ".", prices, deflt
}

// tierList is "quick (USD 0.02), standard (USD 0.05, default), …".
func tierList(tiers []A2ATier) string {
	var parts []string
	for _, t := range tiers {
		if t.Price == nil {
			continue
		}
		p := t.Name + " (USD " + payment.MicroUSD(t.Price.AmountMicroUSD).Decimal()
		if t.Default {
			p += ", default"
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, ", ")
}

//go:embed schemas/*.json
var schemaFS embed.FS

// Schema file names of the JSON Schemas this package ships.
const (
	SchemaManifest   = "agent-service-manifest-0.1.schema.json"
	SchemaMCPServer  = "mcp-server.schema.json"
	SchemaAgentCard  = "a2a-agent-card-1.0.schema.json"
	SchemaX402Legacy = "x402-discovery-legacy.schema.json"
)

// Schema returns one of the JSON Schemas (draft 2020-12) this package
// ships, by file name (the Schema* constants).
func Schema(name string) ([]byte, bool) {
	b, err := schemaFS.ReadFile("schemas/" + name)
	return b, err == nil
}
