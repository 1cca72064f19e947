package payment

import (
	"encoding/json"

	"github.com/assaykit/assay/payment/internal/wire"
)

// WithProblem returns a copy of c that reports p: the body's problem
// members (type, title, status, detail, reason) describe p, and the x402
// error fields (v1 body "error", v2 PaymentRequired "error") carry
// p.Reason (else its detail, else its type). The payment options stay, so
// the payer can pay again.
func (c *Challenge) WithProblem(p *Problem) *Challenge {
	out := &Challenge{Body: c.Body, PaymentRequired: c.PaymentRequired, MPP: c.MPP}
	reason := p.ErrorCode()
	var body map[string]any
	if json.Unmarshal(c.Body, &body) == nil {
		body["type"] = ProblemTypeBase + p.Type
		body["title"] = problemTitle(p.Type)
		body["status"] = p.Status
		body["detail"] = p.Detail
		body["reason"] = p.Reason
		body["error"] = reason
		if b, err := wire.Marshal(body); err == nil {
			out.Body = b
		}
	}
	if pr, err := wire.SetMember(c.PaymentRequired, "error", reason); err == nil && pr != nil {
		out.PaymentRequired = pr
	}
	return out
}

// problemTitle is the RFC 9457 title of an MPP problem type.
func problemTitle(typ string) string {
	switch typ {
	case "payment-required":
		return "Payment Required"
	case "malformed-credential":
		return "Malformed Credential"
	case "invalid-challenge":
		return "Invalid Challenge"
	case "payment-expired":
		return "Payment Expired"
	case "verification-failed":
		return "Verification Failed"
	case "payment-insufficient":
		return "Payment Insufficient"
	case "method-unsupported":
		return "Method Unsupported"
	}
	return "Payment Error"
}
