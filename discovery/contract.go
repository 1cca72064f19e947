package discovery

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/server/route"
)

// This file states, per public route, what the OpenAPI documents declare
// besides the 200 body, the 402 and the 422 (which package discovery adds
// from the route's offer and inputs): the credentials and optional headers
// it reads, and every other status it answers with its media type and
// body. TestOpenAPIWalk sends generated requests to every operation and
// fails on any answer not declared here.

// Security scheme names of the documents.
const (
	secOrderToken  = "orderToken"
	secCustomerKey = "customerKey"
	secSubscriber  = "subscriber"
	secNicheUnlock = "nicheUnlock"
	secWebhook     = "webhookSignature"
	secX402        = "x402"
	secX402V1      = "x402v1"
	secMPP         = "mpp"
	secMPPHeader   = "mppHeader"
)

// nicheUnlockHeader carries a pay-per-call unlock token.
const nicheUnlockHeader = "x-niche-paid-call"

// securitySchemes are the credentials of the public routes. webhookHeader
// is the billing backend's signature header ("" without subscriptions).
func securitySchemes(webhookHeader string) map[string]SecurityScheme {
	m := map[string]SecurityScheme{
		secOrderToken: {Type: "apiKey", Name: httpgate.HeaderOrderToken,
			Description: "The order token of a paid call: returned once, in the X-Agentic-Order-Token header of its answer (commerce.orderToken over MCP and A2A). It reads that order, its result and its verification."},
		secCustomerKey: {Type: "apiKey", Name: httpgate.HeaderCustomerKey,
			Description: "A registered customer's key (ask_…), issued once by the operator: lists the customer's orders; on a paid call it files the order under the customer."},
		secSubscriber: {Type: "http", Scheme: "bearer",
			Description: "A niche subscription's subscriber token (nd_…), from POST /v1/subscription/claim once the checkout is paid."},
		secNicheUnlock: {Type: "apiKey", Name: nicheUnlockHeader,
			Description: "The unlock token of a pay-per-call purchase (access.unlockToken of GET /v1/niches/{niche_id}/pay-per-call): reads that one evaluation again until it expires."},
		secX402: {Type: "apiKey", Name: x402.HeaderPaymentSignature,
			Description: "An x402 v2 PaymentPayload (base64 JSON) paying the challenge of the 402 answer's PAYMENT-REQUIRED header."},
		secX402V1: {Type: "apiKey", Name: x402.HeaderXPayment,
			Description: "An x402 v1 PaymentPayload (base64 JSON) paying an accepts entry of the 402 body."},
		secMPP: {Type: "http", Scheme: "Payment",
			Description: "An MPP Payment credential (Authorization: Payment <credential>) answering one of the 402 answer's WWW-Authenticate challenges."},
		secMPPHeader: {Type: "apiKey", Name: mpp.HeaderPaymentAuthorization,
			Description: "The MPP Payment credential in its own header, for clients whose Authorization header is taken."},
	}
	if webhookHeader != "" {
		m[secWebhook] = SecurityScheme{Type: "apiKey", Name: webhookHeader,
			Description: "The billing processor's signature of a webhook delivery."}
	}
	return m
}

func stringSchema(extra map[string]any) json.RawMessage {
	s := map[string]any{"type": "string"}
	for k, v := range extra {
		s[k] = v
	}
	b, _ := json.Marshal(s)
	return b
}

// detail is a {"detail": "..."} answer.
func detail(status int, desc string) Response {
	return Response{Status: status, Description: desc}
}

func html(status int, desc string) Response {
	return Response{Status: status, Description: desc, MediaType: "text/html"}
}

// contract fills in what the documents say about route r's credentials,
// headers and answers (see the comment at the top of this file).
func (d *discoverer) contract(r *route.Route, op *Operation) {
	c := &contractOf{op: op}
	c.add(detail(http.StatusInternalServerError, "Internal Server Error."))
	if r.Body != "" {
		c.add(detail(http.StatusBadRequest, "The body could not be read: not UTF-8, or nested deeper than 512 levels."),
			detail(http.StatusRequestEntityTooLarge, "The body is larger than the server's limit ("+strconv.FormatInt(d.maxBody(r), 10)+" bytes)."))
	}
	if r.Offer != nil && d.paid() {
		d.paidContract(r, op, c.add, c.header)
	}
	switch id := r.ID; {
	case strings.HasPrefix(id, "commerce."):
		commerceContract(id, c)
	case strings.HasPrefix(id, "niche."):
		nicheContract(id, c)
	case strings.HasPrefix(id, "subscription."):
		d.subscriptionContract(id, c)
	default:
		claimsContract(r, c)
	}
	op.Responses = append(op.Responses, c.rs...)
}

// contractOf collects the contract of one operation: its responses, and
// its headers on op.
type contractOf struct {
	op *Operation
	rs []Response
}

func (c *contractOf) add(more ...Response) { c.rs = append(c.rs, more...) }

func (c *contractOf) header(name, desc string, required bool, schema json.RawMessage) {
	c.op.Headers = append(c.op.Headers, Param{Name: name, Description: desc, Required: required, Schema: schema})
}

// claimsContract is the contract of the health, claim and snapshot routes.
func claimsContract(r *route.Route, c *contractOf) {
	id := r.ID
	switch {
	case id == "health.ready":
		c.add(Response{Status: http.StatusServiceUnavailable, Description: "A readiness check failed (each check's outcome is listed).", Schema: "Readiness"})
	case strings.HasPrefix(id, "claims.verify."):
		c.add(detail(http.StatusConflict, "Idempotency-Key was already used for a different request, or its first request is still running."),
			detail(http.StatusBadGateway, "The evidence provider failed (nothing is charged)."),
			detail(http.StatusServiceUnavailable, "The evidence provider is busy or unavailable (nothing is charged)."),
			detail(http.StatusGatewayTimeout, "The verification timed out (nothing is charged)."))
		if bs, err := inputschema.ClaimBody(r.Offer.Product); err == nil {
			c.op.BodySchema = bs
		}
	case id == "claims.verification.get":
		c.op.Security = [][]string{{secOrderToken}}
		c.header(httpgate.HeaderOrderToken, "The order token of the paid call that made the verification.", true, nil)
		c.add(detail(http.StatusUnauthorized, "X-Agentic-Order-Token is missing."),
			detail(http.StatusNotFound, "No such verification, or the token is not its order's."))
	case id == "claims.verification.evidence":
		c.op.Security = [][]string{{secOrderToken}}
		c.header(httpgate.HeaderOrderToken, "The order token of a paid call that made or replayed the verification.", true, nil)
		c.add(detail(http.StatusUnauthorized, "X-Agentic-Order-Token is missing."),
			detail(http.StatusNotFound, "No such verification, the token is not its order's, or its result was not kept."),
			Response{Status: http.StatusConflict, Description: "The order is not completed yet (Retry-After while it settles): a bundle is a read of a settled result.",
				Headers: map[string]string{"Retry-After": "Seconds to wait before asking again."}},
			detail(http.StatusGone, "A page of the evidence is no longer stored."))
	case strings.HasPrefix(id, "snapshots."):
		c.add(detail(http.StatusNotFound, "No such snapshot, or its content is not stored."))
	}
}

// commerceContract is the contract of the commerce routes.
func commerceContract(id string, c *contractOf) {
	switch {
	case id == "commerce.quotes.create":
		c.add(detail(http.StatusServiceUnavailable, "Payments are not configured."))
	case id == "commerce.orders.get", id == "commerce.orders.result":
		c.op.Security = [][]string{{secOrderToken}}
		c.header(httpgate.HeaderOrderToken, "The order token returned with the paid call.", true, nil)
		c.add(detail(http.StatusUnauthorized, "X-Agentic-Order-Token is missing."),
			detail(http.StatusNotFound, "No such order, or the token is not its token (the same answer, so that a token cannot probe for orders)."))
		if id == "commerce.orders.result" {
			c.add(Response{Status: http.StatusConflict, Description: "The order is not completed yet (Retry-After while it settles).",
				Headers: map[string]string{"Retry-After": "Seconds to wait before asking again."}})
		}
	case id == "commerce.customer.orders.list", id == "commerce.customer.orders.get":
		c.op.Security = [][]string{{secCustomerKey}}
		c.header(httpgate.HeaderCustomerKey, "The customer's key.", true, nil)
		c.add(detail(http.StatusUnauthorized, "X-Agentic-Customer-Key is missing or not a valid key."))
		if id == "commerce.customer.orders.get" {
			c.add(detail(http.StatusNotFound, "No such order of this customer."))
		}
	case id == "commerce.receipts.verify.stored", id == "commerce.receipts.verify":
		c.add(detail(http.StatusNotFound, "No receipt is on record for this order (or no such order)."))
	}
}

// nicheContract is the contract of the niche routes.
func nicheContract(id string, c *contractOf) {
	switch {
	case id == "niche.list", id == "niche.search":
		c.op.Security = [][]string{{}, {secSubscriber}}
		c.add(detail(http.StatusUnauthorized, "The subscriber token is not active, or free searches are off and no subscription is presented."),
			Response{Status: http.StatusTooManyRequests, Description: "The daily search quota is used up.",
				Headers: map[string]string{"Retry-After": "Seconds until the quota resets."}},
			detail(http.StatusServiceUnavailable, "The subscription service is unavailable."))
	case id == "niche.preview":
		c.add(detail(http.StatusNotFound, "No such published niche evaluation."),
			detail(http.StatusServiceUnavailable, "The niche catalogue is empty."))
	case id == "niche.get", id == "niche.evidence":
		// The full reads of an evaluation: a subscription or an unlock token.
		c.op.Security = [][]string{{secSubscriber}, {secNicheUnlock}}
		c.header(nicheUnlockHeader, "A pay-per-call unlock token for this niche (instead of a subscription).", false, nil)
		c.add(Response{Status: http.StatusUnauthorized, Schema: "NicheLocked",
			Description: "Neither an active subscription nor a valid unlock token: the answer says how to get either.",
			Headers:     map[string]string{"WWW-Authenticate": "Bearer."}},
			detail(http.StatusNotFound, "No such published niche evaluation."),
			detail(http.StatusServiceUnavailable, "The subscription service is unavailable."))
		if id == "niche.evidence" {
			c.add(Response{Status: http.StatusConflict, Description: "The unlock token's order is not completed yet.",
				Headers: map[string]string{"Retry-After": "Seconds to wait before asking again."}},
				detail(http.StatusGone, "A page of the evidence is no longer stored."))
		}
	case id == "niche.pay-per-call", id == "niche.search.pay-per-call":
		c.add(detail(http.StatusServiceUnavailable, "The niche catalogue is empty."))
		if id == "niche.pay-per-call" {
			c.add(detail(http.StatusNotFound, "No such published niche evaluation (nothing is charged)."))
		}
	}
}

// subscriptionContract is the contract of the subscription routes.
func (d *discoverer) subscriptionContract(id string, c *contractOf) {
	switch {
	case id == "subscription.status":
		c.op.Security = [][]string{{}, {secSubscriber}}
		c.add(detail(http.StatusServiceUnavailable, "Subscriptions are not available."))
	case id == "subscription.checkout":
		c.add(detail(http.StatusServiceUnavailable, "Subscriptions are not available."),
			detail(http.StatusBadGateway, "The payment processor request failed; try again."))
	case id == "subscription.claim":
		c.add(detail(http.StatusNotFound, "No such checkout session."),
			Response{Status: http.StatusConflict, Description: "The payment is not confirmed yet; retry shortly.",
				Headers: map[string]string{"Retry-After": "Seconds to wait."}},
			detail(http.StatusGone, "The token of this checkout was already issued, or the claim window has passed."),
			detail(http.StatusServiceUnavailable, "Subscriptions are not available."))
	case id == "subscription.portal", id == "subscription.token.rotate", id == "subscription.token.revoke":
		c.op.Security = [][]string{{secSubscriber}}
		c.add(Response{Status: http.StatusUnauthorized, Description: "The subscriber token is missing or not valid.",
			Headers: map[string]string{"WWW-Authenticate": "Bearer."}},
			detail(http.StatusNotFound, "No subscription for this token."),
			detail(http.StatusConflict, "Not allowed in the subscription's current state."),
			detail(http.StatusBadGateway, "The payment processor request failed; try again."),
			detail(http.StatusServiceUnavailable, "Subscriptions are not available."))
	case id == "subscription.webhook":
		if wh := d.webhookHeader(); wh != "" {
			c.op.Security = [][]string{{secWebhook}}
			c.header(wh, "The billing processor's signature of this delivery.", true, nil)
		}
		c.op.BodySchema = json.RawMessage(`{"type":"object","description":"The billing processor's event, as it sends it (at most 256 KiB)."}`)
		c.add(detail(http.StatusBadRequest, "Invalid signature, stale timestamp or unreadable event."),
			detail(http.StatusRequestEntityTooLarge, "The event is larger than 256 KiB."),
			detail(http.StatusServiceUnavailable, "Subscriptions are not available, or the event could not be processed yet (the processor retries)."))
	case id == "subscription.success":
		c.op.QueryParams = append(c.op.QueryParams, Param{Name: "session_id", Required: true,
			Description: "The checkout session the processor sends the payer back with."})
		c.add(html(http.StatusBadRequest, "The session_id is missing."))
	case id == "subscription.success.claim":
		c.op.BodyMediaType = "application/x-www-form-urlencoded"
		c.op.BodySchema = json.RawMessage(`{"type":"object","required":["session_id"],"properties":{"session_id":{"type":"string","description":"The checkout session."}}}`)
		pageErrors(c.add)
	case id == "subscription.local.checkout", id == "subscription.local.portal":
		pageErrors(c.add)
	case id == "subscription.local.checkout.confirm":
		pageErrors(c.add)
	case id == "subscription.local.portal.action":
		c.op.BodyMediaType = "application/x-www-form-urlencoded"
		c.op.BodySchema = json.RawMessage(`{"type":"object","required":["action"],"properties":{"action":{"type":"string","enum":["` +
			niche.LocalActionCancel + `","` + niche.LocalActionFailPayment + `","` + niche.LocalActionPay + `"]}}}`)
		pageErrors(c.add)
	}
}

// pageErrors are the answers of the subscription pages: an HTML page, or
// {"detail"} JSON when the client asks for JSON (Accept or Content-Type
// application/json).
func pageErrors(add func(...Response)) {
	for _, st := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusGone,
		http.StatusInternalServerError, http.StatusServiceUnavailable} {
		add(html(st, http.StatusText(st)+": an HTML page, or {\"detail\"} JSON when the client asks for JSON."), detail(st, ""))
	}
}

// mergeResponses joins the descriptions of responses with the same status
// and media type (the first one's schema and headers are kept; a later
// one's headers are added).
func mergeResponses(rs []Response) []Response {
	var out []Response
	at := map[string]int{}
	for _, r := range rs {
		key := strconv.Itoa(r.Status) + " " + r.MediaType
		i, ok := at[key]
		if !ok {
			at[key] = len(out)
			out = append(out, r)
			continue
		}
		m := &out[i]
		if r.Description != "" && !strings.Contains(m.Description, r.Description) {
			m.Description = strings.TrimSpace(m.Description + " " + r.Description)
		}
		for k, v := range r.Headers {
			if m.Headers == nil {
				m.Headers = map[string]string{}
			}
			m.Headers[k] = v
		}
	}
	return out
}

// paidContract is what every paid route declares: the payment credentials
// (each an alternative; none gives the 402), the options of a paid call,
// and the answers of a refused payment.
func (d *discoverer) paidContract(r *route.Route, op *Operation, add func(...Response), header func(string, string, bool, json.RawMessage)) {
	op.Security = [][]string{{}, {secX402}, {secX402V1}, {secMPP}, {secMPPHeader}}
	header(x402.HeaderPaymentSignature, "x402 v2 payment (see the x402 security scheme); without a payment the answer is 402.", false, nil)
	header(x402.HeaderXPayment, "x402 v1 payment.", false, nil)
	header(mpp.HeaderPaymentAuthorization, "MPP Payment credential, when Authorization is taken.", false, nil)
	header(httpgate.HeaderIdempotencyKey, "Makes the call idempotent: a retry with the same key and request returns the stored answer of the first paid call, without a second charge (X-Agentic-Idempotent-Replay: true).",
		false, stringSchema(map[string]any{"maxLength": claims.MaxIdempotencyKeyLength}))
	header(httpgate.HeaderCustomerKey, "Files the order under a registered customer.", false, nil)
	if strings.HasPrefix(r.ID, "claims.verify.") {
		header(httpgate.HeaderQuoteID, "A quote (POST /v1/quotes) whose price this call pays.", false, nil)
	}
	op.OutputHeaders = map[string]string{
		x402.HeaderPaymentResponse:  "x402 v2 settlement (base64 JSON), when paid with x402 v2.",
		x402.HeaderXPaymentResponse: "x402 v1 settlement, when paid with x402 v1.",
		mpp.HeaderPaymentReceipt:    "MPP receipt, when paid with MPP.",
		httpgate.HeaderReplay:       "true when the answer is the stored answer of an earlier call with the same Idempotency-Key.",
	}
	add(detail(http.StatusBadRequest, "The payment credential is malformed or its method unsupported (an RFC 9457 problem: status, title, detail, type, error)."),
		detail(http.StatusUnauthorized, "X-Agentic-Customer-Key is not a valid key."),
		detail(http.StatusForbidden, "The payment was refused by policy (an RFC 9457 problem)."),
		detail(http.StatusConflict, "Idempotency-Key was already used for a different request, or its first request is still running."),
		detail(http.StatusServiceUnavailable, "Payment verification is temporarily unavailable; the payment was not used."))
}

// maxBody is the body limit of route r.
func (d *discoverer) maxBody(r *route.Route) int64 {
	if r.MaxBodyBytes > 0 {
		return r.MaxBodyBytes
	}
	return d.s.MaxBodyBytes()
}

// webhookHeader is the signature header of the billing backend, "" without
// one.
func (d *discoverer) webhookHeader() string {
	if svc := d.s.App().Subscriptions; svc != nil {
		if b := svc.Billing(); b != nil {
			return b.WebhookHeader()
		}
	}
	return ""
}
