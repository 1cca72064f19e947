package discovery

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// X402Legacy is the legacy x402scan discovery document served at
// /.well-known/x402.
type X402Legacy struct {
	Version         int      `json:"version"`
	Resources       []string `json:"resources"`
	OwnershipProofs []string `json:"ownershipProofs,omitempty"`
	Instructions    string   `json:"instructions,omitempty"`
}

// NewX402Legacy lists the absolute URLs of the paid operations of s that a
// crawler can call as they are (operations with path parameters or
// required query parameters need input first and are left out; OpenAPI
// lists them).
func NewX402Legacy(s *Service) *X402Legacy {
	d := &X402Legacy{Version: 1, Resources: []string{}, OwnershipProofs: s.OwnershipProofs}
	methods := map[string]bool{}
	for _, op := range s.Operations {
		if op.Price == nil || !s.Paid || len(pathParams(op.Path)) > 0 || s.requiresQuery(op) {
			continue
		}
		d.Resources = append(d.Resources, s.URL(op.Path))
		methods[op.Method] = true
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
	return d
}

// PaymentDiscoveryURL is where a payer finds the prices of s: the x402
// list when it names at least one resource, else the OpenAPI document
// (whose operations carry x-payment-info).
func (s *Service) PaymentDiscoveryURL() string {
	if len(NewX402Legacy(s).Resources) > 0 {
		return s.URL(PathX402)
	}
	return s.URL(PathOpenAPI)
}

// requiresQuery reports whether op has a required query parameter.
func (s *Service) requiresQuery(op Operation) bool {
	if op.Query == "" {
		return false
	}
	var def struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(s.Components[op.Query], &def)
	return len(def.Required) > 0
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
	URI         string         `json:"uri"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required"`
	Params      map[string]any `json:"params,omitempty"`
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
// discovery URL, and MPP (https://paymentauth.org/) with its methods. Both
// are marked required: an unpaid call is answered 402 at the HTTP layer.
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
	for _, sk := range s.A2A.Skills {
		c.Skills = append(c.Skills, AgentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags,
			Examples: sk.Examples, InputModes: in, OutputModes: out})
	}
	if p := s.A2A.Price; p != nil && s.Paid {
		if x := p.methods("x402", ""); len(x) > 0 {
			params := map[string]any{"discoveryUrl": s.PaymentDiscoveryURL(), "priceUsd": USD(p.AmountMicroUSD),
				"network": x[0].Network, "asset": x[0].AssetSymbol}
			if x[0].PayTo != "" {
				params["payTo"] = x[0].PayTo
			}
			c.Capabilities.Extensions = append(c.Capabilities.Extensions, AgentExtension{URI: x402ExtensionURI, Required: true,
				Description: "Pay USD " + USD(p.AmountMicroUSD) + " in " + x[0].AssetSymbol + " on " + networkName(x[0].Network) +
					" per call (HTTP 402, x402 v2 PAYMENT-SIGNATURE or v1 X-PAYMENT header).",
				Params: params})
		}
		if mp := p.methods("mpp", ""); len(mp) > 0 {
			var names, parts []string
			for _, m := range mp {
				names = append(names, m.Scheme)
				if m.Scheme == "stripe" {
					parts = append(parts, "stripe card at USD "+USD(p.CardMicroUSD))
				} else {
					parts = append(parts, m.Scheme+" "+m.AssetSymbol+" on "+networkName(m.Network)+" at USD "+USD(p.AmountMicroUSD))
				}
			}
			c.Capabilities.Extensions = append(c.Capabilities.Extensions, AgentExtension{URI: mppExtensionURI, Required: true,
				Description: "Or pay with an MPP charge (" + strings.Join(parts, "; ") + "), Authorization: Payment header.",
				Params:      map[string]any{"methods": names, "endpoint": s.URL(s.A2A.Path)}})
		}
	}
	return c, nil
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
