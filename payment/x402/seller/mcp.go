package seller

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/x402"
)

// Keys of the x402 MCP binding (tool results, current spec): the client
// puts its PaymentPayload in params._meta["x402/payment"]; the server puts
// the SettleResponse in result._meta["x402/payment-response"].
const (
	MCPMetaPayment         = "x402/payment"
	MCPMetaPaymentResponse = "x402/payment-response"
)

// MCPResourceURL is the conventional x402 resource URL of an MCP tool,
// "mcp://<host>/<tool>".
func MCPResourceURL(host, tool string) string {
	return "mcp://" + host + "/" + tool
}

// CredentialFromMCPMeta reads the x402 payment of an MCP tools/call from
// its params._meta. It returns nil and no error when there is none, and a
// *payment.Problem (400) when it is not a payment payload object.
func CredentialFromMCPMeta(meta map[string]any) (*payment.Credential, error) {
	v, ok := meta[MCPMetaPayment]
	if !ok || v == nil {
		return nil, nil
	}
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case string:
		// Some clients send the header form (base64 JSON) instead of the
		// object; accept it.
		b, err := x402.DecodeBase64(x)
		if err != nil {
			return nil, malformed(MCPMetaPayment, err)
		}
		raw = b
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, malformed(MCPMetaPayment, err)
		}
		raw = b
	}
	return CredentialFromX402(raw)
}

// MCPPaymentRequired returns the PaymentRequired object an MCP paid tool
// answers with (isError result: as structuredContent and as the JSON text
// of content[0]). A non-empty msg replaces its error, e.g. "Settlement
// failed" or a Problem's reason.
func MCPPaymentRequired(ch *payment.Challenge, msg string) (json.RawMessage, error) {
	if ch == nil || len(ch.PaymentRequired) == 0 {
		return nil, errors.New("payment: challenge has no PaymentRequired object")
	}
	if msg == "" {
		return ch.PaymentRequired, nil
	}
	return wire.SetMember(ch.PaymentRequired, "error", msg)
}

// BazaarHTTP describes an HTTP route for the x402 bazaar discovery
// extension, so that crawlers list it as callable.
type BazaarHTTP struct {
	// Method is the HTTP method ("GET", "POST", …).
	Method string
	// Body is an example JSON body (POST, PUT, PATCH); QueryParams an
	// example query (GET).
	Body        any
	QueryParams map[string]string
	// BodySchema is the JSON Schema of the body, if known (for example
	// with the tier's maxSources maximum).
	BodySchema json.RawMessage
	// OutputExample is an example JSON response.
	OutputExample any
}

// BazaarExtension returns {"info": …, "schema": …} for
// PaymentRequired.extensions["bazaar"] (use with
// protocols.Options.Extensions).
func BazaarExtension(b BazaarHTTP) (json.RawMessage, error) {
	method := strings.ToUpper(b.Method)
	if method == "" {
		return nil, errors.New("payment: bazaar: method is required")
	}
	input := map[string]any{"type": "http", "method": method}
	inputProps := map[string]any{
		"type":   map[string]any{"type": "string", "const": "http"},
		"method": map[string]any{"type": "string", "enum": []string{method}},
	}
	switch method {
	case "GET", "HEAD", "DELETE":
		if b.QueryParams != nil {
			input["queryParams"] = b.QueryParams
			inputProps["queryParams"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
		}
	default:
		input["bodyType"] = "json"
		inputProps["bodyType"] = map[string]any{"type": "string", "const": "json"}
		if b.Body != nil {
			input["body"] = b.Body
		}
		if len(b.BodySchema) > 0 {
			if !json.Valid(b.BodySchema) {
				return nil, errors.New("payment: bazaar: body schema is not valid JSON")
			}
			inputProps["body"] = b.BodySchema
		} else {
			inputProps["body"] = map[string]any{"type": "object"}
		}
	}
	info := map[string]any{"input": input}
	props := map[string]any{"input": map[string]any{"type": "object", "properties": inputProps, "required": []string{"type", "method"}}}
	if b.OutputExample != nil {
		info["output"] = map[string]any{"type": "json", "example": b.OutputExample}
		props["output"] = map[string]any{"type": "object", "properties": map[string]any{
			"type": map[string]any{"type": "string", "const": "json"}, "example": map[string]any{}}}
	}
	schema := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"properties": props, "required": []string{"input"}}
	return wire.Marshal(map[string]any{"info": info, "schema": schema})
}
