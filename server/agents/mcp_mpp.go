package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
)

// MPP over MCP (the Payment authentication scheme's JSON-RPC and MCP
// transport, draft-payment-transport-mcp): challenges, credentials and
// receipts as native JSON objects in _meta, beside the x402 binding.
//
// Where the transport left a choice: a paid tool asks for payment with the
// x402 tool result (isError, the PaymentRequired object) that also carries
// the MPP challenges in result._meta["org.paymentauth/payment-required"]
// ({httpStatus, challenges, problem}), never with the JSON-RPC error
// -32042. One answer then offers both protocols, and a client that sends
// neither learns both: x402 clients read the tool result as before, and
// mppx's MCP client (McpClient.wrap) accepts tool results carrying the
// payment-required metadata. The error form is not used because a
// JSON-RPC error cannot also be the x402 tool result, and because -32042
// is URLElicitationRequiredError in MCP 2025-11-25 (and inside the range
// 2026-07-28 reserves for MCP). Clients that meet -32042 elsewhere tell
// the two apart as MPP's transport does: payment data carries a non-empty
// "challenges" array of challenge objects, URL elicitation data an
// "elicitations" array; ours always carries "challenges" and never
// "elicitations". A refused MPP credential is answered the same way, with
// fresh challenges and the refusal in "problem" (the transport's -32043
// case).
const (
	metaMPPCredential      = "org.paymentauth/credential"
	metaMPPPaymentRequired = "org.paymentauth/payment-required"
	metaMPPReceipt         = "org.paymentauth/receipt"
)

// mppWireCredential is params._meta["org.paymentauth/credential"]: the
// credential with its challenge echoed as a JSON object, request included
// (not base64url).
type mppWireCredential struct {
	Challenge struct {
		ID          string          `json:"id"`
		Realm       string          `json:"realm"`
		Method      string          `json:"method"`
		Intent      string          `json:"intent"`
		Request     json.RawMessage `json:"request"`
		Expires     string          `json:"expires,omitempty"`
		Digest      string          `json:"digest,omitempty"`
		Opaque      json.RawMessage `json:"opaque,omitempty"`
		Description string          `json:"description,omitempty"`
		Header      string          `json:"header,omitempty"`
	} `json:"challenge"`
	Source  string          `json:"source,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// readMPPCredential reads params._meta["org.paymentauth/credential"] into
// the credential the HTTP binding reads from Authorization: the echoed
// challenge's request (and an opaque given as an object, as older mppx
// clients sent it) is canonicalised (RFC 8785) and base64url-encoded
// again, which gives back the exact parameter the challenge id binds. It
// returns the challenge id for the receipt. A credential that is not such
// an object is a 400 malformed-credential Problem.
func readMPPCredential(raw json.RawMessage) (*payment.Credential, string, error) {
	malformed := func(detail string) (*payment.Credential, string, error) {
		return nil, "", &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
			Detail: "Malformed MPP credential in _meta[\"" + metaMPPCredential + "\"]: " + detail}
	}
	var w mppWireCredential
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&w); err != nil {
		return malformed("not a credential object (" + err.Error() + ")")
	}
	c := w.Challenge
	if c.ID == "" || c.Method == "" || c.Intent == "" || len(bytes.TrimSpace(w.Payload)) == 0 {
		return malformed("challenge.id, challenge.method, challenge.intent and payload are required")
	}
	req, err := jcsObject(c.Request)
	if err != nil {
		return malformed("challenge.request must be a JSON object")
	}
	opaque := ""
	if o := bytes.TrimSpace(c.Opaque); len(o) > 0 && !bytes.Equal(o, []byte("null")) {
		if err := json.Unmarshal(o, &opaque); err != nil {
			if opaque, err = jcsObject(o); err != nil {
				return malformed("challenge.opaque must be a string")
			}
		}
	}
	mc := &mpp.Credential{Challenge: mpp.Challenge{ID: c.ID, Realm: c.Realm, Method: c.Method, Intent: c.Intent, Request: req,
		Expires: c.Expires, Digest: c.Digest, Opaque: opaque, Description: c.Description, Header: c.Header},
		Source: w.Source, Payload: w.Payload}
	hv, err := mc.Encode()
	if err != nil {
		return malformed(err.Error())
	}
	cred, err := mppseller.HeaderCredential(mpp.HeaderAuthorization, hv)
	if err != nil || cred == nil {
		var p *payment.Problem
		if errors.As(err, &p) {
			p.Status = http.StatusBadRequest
			return nil, "", p
		}
		return malformed("unreadable")
	}
	return cred, c.ID, nil
}

// jcsObject returns the base64url (no padding) of the RFC 8785 form of a
// JSON object.
func jcsObject(raw json.RawMessage) (string, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return "", errors.New("not a JSON object")
	}
	return mpp.EncodeJCSBase64URL(v)
}

// mppPaymentRequired is result._meta["org.paymentauth/payment-required"]
// of a challenge: every MPP challenge of ch as a JSON object (request
// decoded), and problem (when set) as the RFC 9457 problem of the refusal.
// Nil when ch has no MPP challenge (MPP not configured).
func mppPaymentRequired(ch *payment.Challenge, p *payment.Problem) map[string]any {
	if ch == nil || len(ch.MPP) == 0 {
		return nil
	}
	parsed, _ := mpp.ParseChallenges(ch.MPP)
	var challenges []map[string]any
	for _, c := range parsed {
		if c.Method == mpp.MethodStripe {
			// Cards are sold over HTTP and A2A only (the MCP binding is
			// tested with the evm method, which mppx's MCP client pays).
			continue
		}
		raw, err := mpp.DecodeBase64URL(c.Request)
		if err != nil || !json.Valid(raw) {
			continue
		}
		o := map[string]any{"id": c.ID, "realm": c.Realm, "method": c.Method, "intent": c.Intent, "request": json.RawMessage(raw)}
		for k, v := range map[string]string{"expires": c.Expires, "digest": c.Digest, "opaque": c.Opaque, "description": c.Description} {
			if v != "" {
				o[k] = v
			}
		}
		challenges = append(challenges, o)
	}
	if len(challenges) == 0 {
		return nil
	}
	problem := map[string]any{"type": payment.ProblemTypeBase + "payment-required", "title": "Payment Required", "status": http.StatusPaymentRequired,
		"detail": "Payment required: pay one of the challenges and repeat the call with the credential in _meta[\"" + metaMPPCredential + "\"]"}
	if p != nil {
		if p.Type != "" {
			problem["type"] = payment.ProblemTypeBase + p.Type
		}
		problem["detail"] = problemText(p)
		if p.Reason != "" {
			problem["error"] = p.Reason
		}
	}
	return map[string]any{"httpStatus": http.StatusPaymentRequired, "challenges": challenges, "problem": problem}
}

// mppReceipt is result._meta["org.paymentauth/receipt"] of an MPP
// settlement: its receipt object with the challenge id it paid.
func mppReceipt(s *payment.Settlement, challengeID string) json.RawMessage {
	var m map[string]any
	if s == nil || json.Unmarshal(s.Meta, &m) != nil || m == nil {
		return nil
	}
	if challengeID != "" {
		m["challengeId"] = challengeID
	}
	b, err := httpjson.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
