package discovery

import (
	"encoding/json"
	"strings"
)

// Service describes one published service: what every document is
// generated from. The server fills it from its routing table, the tier
// table, the shapes' JSON Schemas and the live payment challenges; nothing
// in it is a hand-kept copy of a price.
type Service struct {
	// Key names the service in documents that need a slug, e.g.
	// "claim-verification".
	Key string
	// Name is the display name (1–100 characters).
	Name string
	// Description says what the service does (1–1000 characters).
	Description string
	// Summary is the one-line description of the MCP registry entry
	// (1–100 characters). Empty means Description when it is short
	// enough; New reports an error otherwise.
	Summary string
	// Version is the service version, e.g. "0.3.1".
	Version string
	// Lifecycle is the lifecycle label, e.g. "paid-preview".
	Lifecycle string
	// Homepage is an absolute URL for people.
	Homepage string
	// Tags are free keywords (≤32, unique).
	Tags []string
	// Categories are the MPP discovery categories (≤5, lowercase,
	// hyphenated), e.g. "search", "data".
	Categories []string
	// Base is the absolute URL of the service: the public base URL plus
	// the service prefix, without a trailing slash. Operation paths are
	// relative to it.
	Base string
	// Prefix is the path prefix of the service ("" at the origin root).
	Prefix string
	// Provider operates the service.
	Provider Provider
	// Capabilities are what the service can do; operations name one.
	Capabilities []Capability
	// Operations are the public HTTP operations, in publishing order.
	Operations []Operation
	// Components are JSON Schema definitions referenced as
	// "#/components/schemas/<name>" by Operation.Body, Query and Output.
	Components map[string]json.RawMessage
	// MCP is the MCP endpoint, nil when the service has none.
	MCP *MCP
	// A2A is the A2A endpoint, nil when the service has none.
	A2A *A2A
	// Provenance and Policies are published in the manifest.
	Provenance Provenance
	Policies   Policies
	// Paid is true when calls are charged (a payment gate is configured);
	// false documents publish no payment challenges.
	Paid bool
	// OwnershipProofs are the payee addresses (x402 discovery).
	OwnershipProofs []string
	// Extensions are further members of the manifest's extensions.
	Extensions map[string]any
	// MCPName is the MCP registry name (reverse DNS, one "/"), e.g.
	// "io.github.assaykit/claim-verification".
	MCPName string
	// Repository is the source repository URL (MCP registry entry),
	// optional.
	Repository string
	// SecuritySchemes are the credentials operations may name in their
	// Security, by name (OpenAPI components.securitySchemes; a document
	// lists those its operations name).
	SecuritySchemes map[string]SecurityScheme
}

// SecurityScheme is one kind of credential (an OpenAPI security scheme).
type SecurityScheme struct {
	// Type is "apiKey" (a header, Name) or "http" (Authorization with
	// Scheme, e.g. "bearer" or "Payment").
	Type   string
	Name   string
	Scheme string
	// Description says what the credential is and where it comes from.
	Description string
}

// Param is a request header or query parameter an operation reads (an
// OpenAPI parameter) that is not a property of its query shape.
type Param struct {
	Name        string
	Description string
	Required    bool
	// Schema is its JSON Schema; nil means a string.
	Schema json.RawMessage
}

// Response is an answer of an operation besides its 200, 402 (paid) and
// 422 (input), which OpenAPI adds itself. Several Responses with one
// Status and different media types make one response with those media
// types (e.g. an HTML page, or JSON when the client asks for it).
type Response struct {
	Status      int
	Description string
	// MediaType is the media type of the body: "" means application/json;
	// "-" means no body (a 304).
	MediaType string
	// Schema names the component of a JSON body; "" means ErrorDetail
	// ({"detail": "..."}).
	Schema string
	// Headers are response headers, by name, with their descriptions.
	Headers map[string]string
}

// Provider is who operates the service.
type Provider struct {
	// ID is a URI naming the provider, e.g. its website.
	ID string
	// Name is the provider's name (1–200).
	Name string
	// Contact is an email address.
	Contact string
	// URL is the provider's website (A2A card).
	URL string
	// SigningKey is the URL of the keys that sign receipts (a JWKS).
	SigningKey string
}

// Capability is one thing the service can do.
type Capability struct {
	ID      string // ^[a-z0-9]+(?:[.-][a-z0-9]+)*$
	Summary string
	Domains []string
}

// Provenance says where results come from.
type Provenance struct {
	Summary   string
	Freshness string
	Sources   []string
	Coverage  string
}

// Policies are the terms of use.
type Policies struct {
	Terms             string
	Privacy           string
	DataRetentionDays int
	AllowedUse        []string
	ProhibitedUse     []string
}

// Operation is one public HTTP operation.
type Operation struct {
	// ID is the operation id (the route id), ^[a-z][a-z0-9_.-]*$.
	ID string
	// Capability is the id of the capability it serves.
	Capability string
	// Summary is one sentence (1–500).
	Summary string
	// Method is the HTTP method; Path the pattern relative to the
	// service Base, with {name} path parameters.
	Method string
	Path   string
	// Body and Query name components: the JSON body and the query
	// parameters (the properties of the named object schema).
	Body  string
	Query string
	// Params are the JSON Schemas of path parameters, by name; a
	// parameter without one is a plain string.
	Params map[string]json.RawMessage
	// ExampleQuery is a valid query string (URL-encoded, without "?")
	// for an operation with required query parameters: the x402 list
	// names the operation with it, so that a crawler can call it.
	ExampleQuery string
	// Output names the component of the 200 response, "" for a generic
	// JSON object.
	Output string
	// OutputMediaTypes are the media types of a 200 response that is not
	// JSON (an HTML page, captured bytes, a WARC record set, Prometheus
	// text): the documents describe the body as a string (text types) or
	// as bytes. With Output set too, the response is JSON by default and
	// these are alternatives the Accept header chooses (OpenAPI lists
	// them next to application/json, unless one of them is a JSON type
	// itself, such as application/jwk-set+json; the manifest keeps the
	// JSON schema).
	OutputMediaTypes []string
	// Price is set on paid operations.
	Price *Price
	// TimeoutSeconds is the longest a call takes (0: not published).
	TimeoutSeconds int
	// Idempotent tells whether a retry has no further effect.
	Idempotent bool
	// Extra is published per operation: as x-<key> members in OpenAPI and
	// under extensions.operations.<id> in the manifest.
	Extra map[string]any
	// Example is an example request body (or nil).
	Example json.RawMessage
	// BodySchema, when set, is the JSON Schema of the request body in
	// place of a reference to Body (e.g. the shape with an operation's own
	// limits); Body still names the shape.
	BodySchema json.RawMessage
	// BodyMediaType is the media type of the request body; "" means
	// application/json. A form body (application/x-www-form-urlencoded)
	// is described by BodySchema.
	BodyMediaType string
	// Headers are the request headers the operation reads: credentials
	// and options.
	Headers []Param
	// QueryParams are query parameters besides the properties of Query.
	QueryParams []Param
	// Security lists the alternative credentials that authorize the
	// operation: each names the SecuritySchemes needed together, and an
	// empty one means none is needed. Nil states no requirement.
	Security [][]string
	// Responses are its other answers (see Response).
	Responses []Response
	// OutputHeaders are headers of the 200 response, by name, with their
	// descriptions (paid operations get the order headers besides).
	OutputHeaders map[string]string
}

// Price is what a paid operation costs, as the payment processor states
// it.
type Price struct {
	// AmountMicroUSD is the USDC price (x402, MPP evm), micro-USD.
	AmountMicroUSD int64
	// CardMicroUSD is the card price (MPP stripe), 0 when cards are not
	// offered.
	CardMicroUSD int64
	// Methods are the accepted payment methods, read from the challenge.
	Methods []Method
	// Description is what the payer buys.
	Description string
	// ChallengeMediaType is the media type of the 402 answer; "" means
	// application/problem+json (MediaProblem).
	ChallengeMediaType string
}

// Method is one accepted way to pay, as a 402 challenge offers it.
type Method struct {
	// Protocol is "x402" or "mpp".
	Protocol string
	// Scheme is the x402 scheme ("exact") or the MPP method ("evm",
	// "stripe").
	Scheme string
	// Intent is the MPP intent ("charge"); "" for x402.
	Intent string
	// Network is the CAIP-2 network (eip155:8453), or "stripe" for cards.
	Network string
	// Asset is the token contract address, or the ISO 4217 currency
	// ("usd") for cards.
	Asset string
	// AssetSymbol names the asset for people ("USDC", "USD").
	AssetSymbol string
	// PayTo is the payee (address or payment profile).
	PayTo string
	// Amount is in the asset's base units (USDC atomic units, cents).
	Amount string
}

// MCP is a Model Context Protocol endpoint of the service.
type MCP struct {
	// Path is the endpoint path relative to Base, e.g. "/mcp".
	Path string
	// Tools are the service's tools as the endpoint's tools/list
	// publishes them; the manifest lists each as an operation on the MCP
	// transport.
	Tools []Tool
}

// Tool is one MCP tool of a service.
type Tool struct {
	// Name is the tool name (the manifest operation id is "mcp.<Name>").
	Name string
	// Summary is one sentence for the manifest (1–500 characters).
	Summary string
	// Capability is the id of the capability it serves ("" means the
	// service's first).
	Capability string
	// InputSchema and OutputSchema are the tool's schemas exactly as
	// tools/list publishes them (OutputSchema nil: a generic object).
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Price is set on tools that charge (per call, x402 only); a tool
	// with a free mode and a paid one (previews and full evaluations)
	// carries the paid mode's price.
	Price *Price
	// TimeoutSeconds is the longest a call takes (0: not published).
	TimeoutSeconds int
	// Idempotent tells whether a retry has no further effect.
	Idempotent bool
}

// A2A is an A2A JSON-RPC endpoint of the service.
type A2A struct {
	// Path is the endpoint path relative to Base, e.g. "/a2a".
	Path string
	// Price is what one A2A call costs at the default tier (nil: free).
	Price *Price
	// Tiers are the prices of every tier a message can choose, in order
	// (empty: one price). TierKey is the member of the SendMessage
	// params.metadata that chooses one ("tier").
	Tiers   []A2ATier
	TierKey string
	// Skills are the skills the agent card lists.
	Skills []Skill
	// InputSchema is the JSON Schema of the SendMessage params (the
	// manifest's input schema of the operation); nil means an object.
	InputSchema json.RawMessage
}

// A2ATier is one tier an A2A message can choose and its price.
type A2ATier struct {
	Name    string
	Price   *Price
	Default bool
}

// Skill is one A2A skill.
type Skill struct {
	ID          string
	Name        string
	Description string
	Tags        []string
	Examples    []string
}

// Document paths, relative to a service Base.
const (
	PathOpenAPI   = "/openapi.json"
	PathManifest  = "/.well-known/agent-service.json"
	PathX402      = "/.well-known/x402"
	PathMCPServer = "/.well-known/mcp/server.json"
	PathAgentCard = "/.well-known/agent-card.json"
	// PathJWKS is the JWKS of the receipt keys, which also sign the
	// agent cards (served by the commerce routes).
	PathJWKS         = "/.well-known/jwks.json"
	ManifestVersion  = "0.1"
	mcpServerSchema  = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
	x402ExtensionURI = "https://www.x402.org/"
	mppExtensionURI  = "https://paymentauth.org/"
)

// URL returns the absolute URL of a path relative to the service.
func (s *Service) URL(path string) string { return s.Base + path }

// methods returns the methods of p with the given protocol and scheme
// ("" matches any).
func (p *Price) methods(protocol, scheme string) []Method {
	var out []Method
	for _, m := range p.Methods {
		if (protocol == "" || m.Protocol == protocol) && (scheme == "" || m.Scheme == scheme) {
			out = append(out, m)
		}
	}
	return out
}

// slug turns an operation id into an offer id fragment: lowercase letters,
// digits and hyphens.
func slug(id string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(id) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}
