package discovery

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
)

// CardSigner signs an agent card with an Ed25519 key that the server
// publishes in its JWKS (/.well-known/jwks.json): payment.Keyring, the
// receipt keys, is one.
type CardSigner interface {
	// KeyID is the id of the signing key (its "kid" in the JWKS).
	KeyID() string
	// Sign returns the key id and the Ed25519 signature of msg.
	Sign(msg []byte) (kid string, sig []byte)
}

// AgentCardSignature is A2A 1.0's AgentCardSignature: a JWS (RFC 7515) in
// the flattened JSON serialization without its payload, which is the
// card's canonical form (CanonicalAgentCard).
type AgentCardSignature struct {
	// Protected is the base64url of the protected header: {"alg":"EdDSA",
	// "jku": the JWKS URL, "kid": the key id, "typ":"JOSE"}.
	Protected string `json:"protected"`
	// Signature is the base64url of the Ed25519 signature of
	// Protected + "." + base64url(canonical card).
	Signature string `json:"signature"`
}

// cardJWSHeader is the protected header of a card signature.
type cardJWSHeader struct {
	Alg string `json:"alg"`
	JKU string `json:"jku,omitempty"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// CanonicalAgentCard returns the bytes an agent card signature covers, as
// A2A 1.0 defines them (and its official SDKs compute them): the card's
// JSON without "signatures", every member whose value is empty — null,
// "", [] or {} — left out at every depth, in the JSON Canonicalization
// Scheme (RFC 8785). Members that are their protobuf field's default
// (false, 0) are not removed: the cards NewAgentCard makes hold none where
// the proto's field is not optional (AgentExtension.required is left out
// when false), which the tests check against the official JS SDK.
func CanonicalAgentCard(card []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(card))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("discovery: agent card: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("discovery: agent card: not a JSON object")
	}
	delete(obj, "signatures")
	clean, _ := withoutEmpty(obj)
	if clean == nil {
		clean = map[string]any{}
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// withoutEmpty drops null, "", [] and {} (after their own cleaning) from
// a JSON value; ok is false when v itself is empty.
func withoutEmpty(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, x != ""
	case []any:
		var out []any
		for _, e := range x {
			if c, ok := withoutEmpty(e); ok {
				out = append(out, c)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if c, ok := withoutEmpty(e); ok {
				out[k] = c
			}
		}
		return out, len(out) > 0
	}
	return v, true
}

// SignAgentCard adds a signature of c by s to c.Signatures: the JWS of
// A2A 1.0's optional card signature, alg EdDSA (RFC 8037), with the key id
// and, when jwksURL is not empty, the JWKS that holds the key ("jku") in
// its protected header. A card signed again is signed over the same
// canonical form (signatures are not covered), so signatures accumulate.
func SignAgentCard(c *AgentCard, s CardSigner, jwksURL string) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	payload, err := CanonicalAgentCard(raw)
	if err != nil {
		return err
	}
	kid := s.KeyID()
	h, err := json.Marshal(cardJWSHeader{Alg: "EdDSA", JKU: jwksURL, Kid: kid, Typ: "JOSE"})
	if err != nil {
		return err
	}
	protected := base64.RawURLEncoding.EncodeToString(h)
	signingInput := protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	kid2, sig := s.Sign([]byte(signingInput))
	if kid2 != kid || len(sig) != ed25519.SignatureSize {
		return errors.New("discovery: the card signer changed keys or is not Ed25519")
	}
	c.Signatures = append(c.Signatures, AgentCardSignature{Protected: protected, Signature: base64.RawURLEncoding.EncodeToString(sig)})
	return nil
}
