package agents

// What the MCP and A2A transports share: how a call is paid for, how one
// verification runs for a transport, and how errors become the statuses and
// details the HTTP routes give.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/shapes"
)

// billing says how a transport that cannot sit behind an http.Handler
// paywall (MCP; A2A streaming) charges for a call.
type billing struct {
	// cashier charges paid calls; nil when free or not configured.
	cashier *payment.Cashier
	// free is true under httpgate.Free: paid calls run without charge.
	free bool
}

// billingFor returns the billing of a transport: its own Cashier when set,
// else the Cashier of Config.Paywall when it is a *httpgate.Gate, else free
// under httpgate.Free. Any other paywall (or none) leaves the transport's
// paid calls unconfigured.
func billingFor(s route.Host, own *payment.Cashier) billing {
	if own != nil {
		return billing{cashier: own}
	}
	switch pw := s.Paywall().(type) {
	case *httpgate.Gate:
		if pw != nil {
			return billing{cashier: pw.Cashier()}
		}
	case httpgate.Free, *httpgate.Free:
		return billing{free: true}
	}
	return billing{}
}

// publicBase parses a public base URL ("" allowed) and returns it without
// a trailing slash.
func publicBase(what, raw string) (string, *url.URL, error) {
	if raw == "" {
		return "", nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", nil, errorf("%s: PublicBaseURL %q is not an http(s) base URL", what, raw)
	}
	return strings.TrimRight(raw, "/"), u, nil
}

// decodeClaimRequest decodes a ClaimVerificationRequest and applies the
// tier rules, exactly as the HTTP tier routes do before payment. On
// failure it returns the 422 body the HTTP route would give (loc prefixed
// "body"); raw is the request object as received.
func decodeClaimRequest(s route.Host, tier string, raw []byte) (*claims.Request, *claims.Effective, *shapes.ValidationError, error) {
	var req claims.Request
	if err := shapes.Decode(raw, &req); err != nil {
		var ve *shapes.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, ve.WithPrefix("body"), nil
		}
		return nil, nil, nil, err
	}
	eff, err := s.App().Claims.Check(tier, &req)
	if err != nil {
		var re *claims.RequestError
		if errors.As(err, &re) {
			var input any = map[string]any{}
			if json.Valid(raw) {
				input = json.RawMessage(raw)
			}
			return nil, nil, shapes.NewValueError(re.Msg, input).WithPrefix("body"), nil
		}
		return nil, nil, nil, err
	}
	return &req, eff, nil, nil
}

// failureReason is the reason recorded on an order whose call failed, in
// the gate's words ("handler answered 502: Evidence provider failed").
func failureReason(status int, detail string) string {
	return fmt.Sprintf("handler answered %d: %s", status, detail)
}

// transportRequestHash identifies a transport call for idempotency: the
// transport, the operation and the effective request.
func transportRequestHash(transport, operation string, eff *claims.Effective) string {
	sum := sha256.Sum256([]byte(transport + "\n" + operation + "\n" + eff.Hash()))
	return hex.EncodeToString(sum[:])
}

// withMember returns the JSON object obj with one more member (key, value)
// appended at the end; obj's own bytes are kept as they are.
func withMember(obj []byte, key string, value any) (json.RawMessage, error) {
	v, err := httpjson.Marshal(value)
	if err != nil {
		return nil, err
	}
	k, err := httpjson.Marshal(key)
	if err != nil {
		return nil, err
	}
	t := strings.TrimSpace(string(obj))
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, errors.New("server: not a JSON object")
	}
	sep := ","
	if strings.TrimSpace(t[1:len(t)-1]) == "" {
		sep = ""
	}
	return json.RawMessage(t[:len(t)-1] + sep + string(k) + ":" + string(v) + "}"), nil
}

// commerce is what a paid transport call tells its payer about the order
// (MCP structuredContent.commerce; A2A task metadata).
type commerce struct {
	OrderID    string `json:"orderId,omitempty"`
	OrderToken string `json:"orderToken,omitempty"`
	ReceiptID  string `json:"receiptId,omitempty"`
	OrderURL   string `json:"orderUrl,omitempty"`
	// Status is the order status: completed, failed or settling.
	Status string `json:"status,omitempty"`
	// Replay is true when the answer is the stored response of an earlier
	// order: a retry with the payment that opened it, or with its
	// idempotency key (nothing was charged). OrderToken is then a fresh
	// token; the previous one no longer works.
	Replay bool `json:"replay,omitempty"`
}

// evidenceText describes the evidence bundle link of a paid result.
const evidenceText = "The signed evidence bundle (WACZ) of this verification: its pages, the result as delivered and its receipt; " +
	"GET it with the order token (X-Agentic-Order-Token) once the order is completed, and check it offline (examples/bundlecheck)."

// evidenceURL is the URL of a verification's evidence bundle under base,
// "" when bundles are not served or base is unknown.
func evidenceURL(s route.Host, base, verificationID string) string {
	p := s.EvidencePath(verificationID)
	if p == "" || base == "" || verificationID == "" {
		return ""
	}
	return base + p
}
