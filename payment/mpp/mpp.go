package mpp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/assaykit/assay/internal/eip712"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
)

// MPP (the "Payment" HTTP authentication scheme) header names and problem
// type base.
// Protocol names the protocol on orders, receipts and buyer payment info
// (payment.ProtocolMPP).
const Protocol = "mpp"

const (
	HeaderWWWAuthenticate      = "WWW-Authenticate"
	HeaderAuthorization        = "Authorization"
	HeaderPaymentAuthorization = "Payment-Authorization"
	HeaderPaymentReceipt       = "Payment-Receipt"
	// Scheme is the authentication scheme name.
	Scheme = "Payment"
	// IntentCharge is the one-off payment intent, the only one supported.
	IntentCharge = "charge"
	// MethodEVM and MethodStripe are the supported MPP methods.
	MethodEVM    = "evm"
	MethodStripe = "stripe"
)

// maxRequestParam bounds a challenge's request parameter (as mppx does).
const maxRequestParam = 16 << 10

// Challenge is one "Payment" challenge (a WWW-Authenticate value) and
// the challenge object echoed in a credential. Request and Opaque are kept
// in their base64url wire form: the binding covers those exact strings.
type Challenge struct {
	ID      string `json:"id"`
	Realm   string `json:"realm"`
	Method  string `json:"method"`
	Intent  string `json:"intent"`
	Request string `json:"request"`
	Expires string `json:"expires,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Opaque  string `json:"opaque,omitempty"`
	// Description is for display only; it is not bound.
	Description string `json:"description,omitempty"`
	// Header names an alternative credential header; this package never
	// sets it, and refuses credentials that echo a non-default one.
	Header string `json:"header,omitempty"`
}

// String formats the challenge as a WWW-Authenticate value:
// Payment id="…", realm="…", method="…", intent="…", request="…"[, …].
func (c Challenge) String() string {
	var b strings.Builder
	b.WriteString(Scheme)
	b.WriteByte(' ')
	param := func(name, value string, first bool) {
		if !first {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(quoteParam(value))
		b.WriteByte('"')
	}
	param("id", c.ID, true)
	param("realm", c.Realm, false)
	param("method", c.Method, false)
	param("intent", c.Intent, false)
	param("request", c.Request, false)
	if c.Description != "" {
		param("description", c.Description, false)
	}
	if c.Digest != "" {
		param("digest", c.Digest, false)
	}
	if c.Expires != "" {
		param("expires", c.Expires, false)
	}
	if c.Header != "" {
		param("header", c.Header, false)
	}
	if c.Opaque != "" {
		param("opaque", c.Opaque, false)
	}
	return b.String()
}

// quoteParam escapes a quoted-string value: backslash and quote are
// escaped, control characters become spaces, and characters above Latin-1
// become \uXXXX (the mppx convention, so the header stays a byte string).
func quoteParam(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r > 0xff:
			if r > 0xffff {
				r = utf8.RuneError
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MPPRequest decodes the challenge's request parameter into v.
func (c Challenge) MPPRequest(v any) error {
	b, err := DecodeBase64URL(c.Request)
	if err != nil {
		return err
	}
	return wire.DecodeObject(b, v)
}

// ErrMalformedChallenge reports a WWW-Authenticate Payment challenge that
// cannot be used.
var ErrMalformedChallenge = errors.New("payment: malformed Payment challenge")

// ParseChallenges reads every Payment challenge in a set of
// WWW-Authenticate values (each value may hold several challenges of any
// scheme, comma-separated). Challenges of other schemes are skipped;
// malformed Payment challenges are skipped and reported in the error,
// which is nil when all were usable.
func ParseChallenges(values []string) ([]Challenge, error) {
	var out []Challenge
	var errs []error
	for _, v := range values {
		for _, ch := range splitChallenges(v) {
			if !strings.EqualFold(ch.scheme, Scheme) {
				continue
			}
			c, err := ch.mpp()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

type rawChallenge struct {
	scheme  string
	token68 string
	params  map[string]string
	dup     bool
	bad     bool
}

func (r rawChallenge) mpp() (Challenge, error) {
	if r.bad || r.dup || r.token68 != "" {
		return Challenge{}, fmt.Errorf("%w: bad parameter syntax", ErrMalformedChallenge)
	}
	p := r.params
	c := Challenge{ID: p["id"], Realm: p["realm"], Method: p["method"], Intent: p["intent"], Request: p["request"],
		Expires: p["expires"], Digest: p["digest"], Opaque: p["opaque"], Description: p["description"], Header: p["header"]}
	_, hasRealm := p["realm"]
	switch {
	case c.ID == "" || !hasRealm || c.Intent == "" || c.Request == "":
		return Challenge{}, fmt.Errorf("%w: id, realm, method, intent and request are required", ErrMalformedChallenge)
	case !validMethodName(c.Method):
		return Challenge{}, fmt.Errorf("%w: method %q", ErrMalformedChallenge, wire.Clip(c.Method, 40))
	case len(c.Request) > maxRequestParam:
		return Challenge{}, fmt.Errorf("%w: request parameter too large", ErrMalformedChallenge)
	}
	return c, nil
}

func validMethodName(m string) bool {
	if m == "" || m[0] < 'a' || m[0] > 'z' {
		return false
	}
	for i := 1; i < len(m); i++ {
		c := m[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// splitChallenges parses one WWW-Authenticate field value per RFC 9110
// §11.6.1: a comma-separated list of challenges, each a scheme followed by
// a token68 or auth-params. It never fails: malformed parts are marked bad.
func splitChallenges(s string) []rawChallenge {
	sc := &challengeScanner{s: s}
	for sc.next() {
	}
	return sc.out
}

// challengeScanner is the state of splitChallenges: the position in s,
// the challenges read so far and the one being read.
type challengeScanner struct {
	s   string
	i   int
	out []rawChallenge
	cur *rawChallenge
	// justStarted is true when the last thing read was a scheme name.
	justStarted bool
}

func (sc *challengeScanner) skipOWS() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

func (sc *challengeScanner) readToken() string {
	start := sc.i
	for sc.i < len(sc.s) && isTokenChar(sc.s[sc.i]) {
		sc.i++
	}
	return sc.s[start:sc.i]
}

// next reads one token (a scheme, a token68 or an auth-param) and reports
// whether there is more to read.
func (sc *challengeScanner) next() bool {
	s, n := sc.s, len(sc.s)
	for sc.i < n && (s[sc.i] == ' ' || s[sc.i] == '\t' || s[sc.i] == ',') {
		if s[sc.i] == ',' {
			sc.justStarted = false
		}
		sc.i++
	}
	if sc.i >= n {
		return false
	}
	start := sc.i
	tok := sc.readToken()
	if tok == "" {
		// Not a token: skip one character of garbage.
		if sc.cur != nil {
			sc.cur.bad = true
		}
		sc.i++
		return true
	}
	sc.skipOWS()
	if sc.cur != nil && sc.i < n && s[sc.i] == '=' {
		return sc.param(start, tok)
	}
	if sc.justStarted {
		sc.cur.token68 = tok
		sc.justStarted = false
		return true
	}
	sc.out = append(sc.out, rawChallenge{scheme: tok, params: map[string]string{}})
	sc.cur = &sc.out[len(sc.out)-1]
	sc.justStarted = true
	return true
}

// param reads what follows tok (which starts at start) and an "=": a
// token68 with padding or an auth-param's value. It reports whether there
// is more to read (an unterminated quoted string ends the field).
func (sc *challengeScanner) param(start int, tok string) bool {
	s, n, i := sc.s, len(sc.s), sc.i
	j := i
	for j < n && s[j] == '=' {
		j++
	}
	k := j
	for k < n && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if j-i > 1 || k >= n || s[k] == ',' {
		// token68 with padding ("abc=="), valid only right after the
		// scheme.
		if sc.justStarted {
			sc.cur.token68 = s[start:j]
		} else {
			sc.cur.bad = true
		}
		sc.i, sc.justStarted = j, false
		return true
	}
	sc.justStarted = false
	sc.i = k
	var val string
	if s[sc.i] == '"' {
		v, next, ok := readQuoted(s, sc.i+1)
		if !ok {
			sc.cur.bad = true
			return false
		}
		val, sc.i = v, next
	} else {
		val = sc.readToken()
	}
	name := strings.ToLower(tok)
	if _, dup := sc.cur.params[name]; dup {
		sc.cur.dup = true
	}
	sc.cur.params[name] = val
	sc.skipOWS()
	if sc.i < n && s[sc.i] != ',' {
		sc.cur.bad = true
		for sc.i < n && s[sc.i] != ',' {
			sc.i++
		}
	}
	return true
}

// readQuoted reads a quoted-string body starting after the opening quote.
// It unescapes \x and the mppx \uXXXX form.
func readQuoted(s string, i int) (string, int, bool) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, true
		case '\\':
			if i+1 >= len(s) {
				return "", len(s), false
			}
			if s[i+1] == 'u' && i+6 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
					b.WriteRune(rune(v))
					i += 6
					continue
				}
			}
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", len(s), false
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/", c) >= 0
}

// Credential is a Payment credential: the echoed challenge, an optional
// payer identity (did:pkh:eip155:<chain>:<address> for evm) and the
// method-specific payload.
type Credential struct {
	Challenge Challenge       `json:"challenge"`
	Source    string          `json:"source,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

// Encode returns the Authorization header value: "Payment " + base64url
// (no padding) of the JSON credential.
func (c *Credential) Encode() (string, error) {
	b, err := wire.Marshal(c)
	if err != nil {
		return "", err
	}
	return Scheme + " " + base64.RawURLEncoding.EncodeToString(b), nil
}

// ErrMalformedHeader reports a credential or receipt that is not base64url
// of a JSON object (the same value as payment.ErrMalformedHeader).
var ErrMalformedHeader = wire.ErrMalformedHeader

// ErrSeveralCredentials reports a request carrying more than one payment
// credential.
var ErrSeveralCredentials = errors.New("payment: several payment credentials")

// ParseCredential reads a credential from an Authorization or
// Payment-Authorization value. It returns (nil, nil) when the value holds
// no Payment credential, ErrSeveralCredentials when it holds several, and
// an ErrMalformedHeader error when the credential is not base64url JSON.
func ParseCredential(value string) (*Credential, error) {
	var found []string
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		scheme, rest, ok := strings.Cut(part, " ")
		if !strings.EqualFold(scheme, Scheme) {
			continue
		}
		if !ok {
			return nil, fmt.Errorf("%w: Payment credential is empty", ErrMalformedHeader)
		}
		found = append(found, strings.TrimSpace(rest))
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, ErrSeveralCredentials
	}
	b, err := DecodeBase64URL(found[0])
	if err != nil {
		return nil, err
	}
	var msg struct {
		Challenge *struct {
			Challenge
			Opaque json.RawMessage `json:"opaque"`
		} `json:"challenge"`
		Source  string          `json:"source"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := wire.DecodeObject(b, &msg); err != nil {
		return nil, err
	}
	if msg.Challenge == nil || len(msg.Payload) == 0 || msg.Payload[0] != '{' {
		return nil, fmt.Errorf("%w: challenge and payload objects are required", ErrMalformedHeader)
	}
	c := &Credential{Challenge: msg.Challenge.Challenge, Source: msg.Source, Payload: msg.Payload}
	if op := msg.Challenge.Opaque; len(op) > 0 && string(op) != "null" {
		// Older mppx clients echo opaque as the expanded object;
		// normalise it back to the base64url string.
		var s string
		if json.Unmarshal(op, &s) == nil {
			c.Challenge.Opaque = s
		} else {
			var m map[string]string
			if err := json.Unmarshal(op, &m); err != nil {
				return nil, fmt.Errorf("%w: opaque must be a string", ErrMalformedHeader)
			}
			enc, err := EncodeJCSBase64URL(m)
			if err != nil {
				return nil, fmt.Errorf("%w: opaque: %v", ErrMalformedHeader, err)
			}
			c.Challenge.Opaque = enc
		}
	}
	return c, nil
}

// DecodeBase64URL decodes base64url with or without padding (also tolerating
// the standard alphabet, which some encoders produce).
func DecodeBase64URL(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrMalformedHeader)
	}
	if base64.RawURLEncoding.DecodedLen(len(s)) > wire.MaxHeaderBytes {
		return nil, fmt.Errorf("%w: too large", ErrMalformedHeader)
	}
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("+", "-", "/", "_").Replace(s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", ErrMalformedHeader)
	}
	return b, nil
}

// EncodeJCSBase64URL returns base64url (no padding) of the RFC 8785 (JCS)
// serialisation of v: the form of MPP request and opaque parameters.
func EncodeJCSBase64URL(v any) (string, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return "", err
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(c), nil
}

// ChallengeID computes the stateless HMAC binding of a challenge:
// base64url_nopad(HMAC-SHA256(secret, realm|method|intent|request|expires|digest|opaque)),
// with the credential-header slot inserted before opaque when a
// non-default header is named (as mppx does).
func ChallengeID(secret []byte, c Challenge) string {
	slots := []string{c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest}
	if c.Header != "" && !strings.EqualFold(c.Header, HeaderAuthorization) {
		slots = append(slots, c.Header)
	}
	slots = append(slots, c.Opaque)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strings.Join(slots, "|")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Receipt is the Payment-Receipt object.
type Receipt struct {
	Method      string `json:"method"`
	ChallengeID string `json:"challengeId,omitempty"`
	Reference   string `json:"reference"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	ChainID     uint64 `json:"chainId,omitempty"`
	ExternalID  string `json:"externalId,omitempty"`
}

// Encode returns the Payment-Receipt header value (base64url of JSON, no
// padding).
func (r *Receipt) Encode() (string, error) {
	b, err := wire.Marshal(r)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeReceipt reads a Payment-Receipt header value.
func DecodeReceipt(value string) (*Receipt, error) {
	b, err := DecodeBase64URL(value)
	if err != nil {
		return nil, err
	}
	var r Receipt
	if err := wire.DecodeObject(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// EVMRequest is the request of an evm charge (JCS sorts the keys).
type EVMRequest struct {
	Amount        string     `json:"amount"`
	Currency      string     `json:"currency"`
	MethodDetails EVMDetails `json:"methodDetails"`
	Recipient     string     `json:"recipient"`
	Description   string     `json:"description,omitempty"`
	ExternalID    string     `json:"externalId,omitempty"`
}

// EVMDetails are the methodDetails of an evm charge request.
type EVMDetails struct {
	ChainID         uint64   `json:"chainId"`
	CredentialTypes []string `json:"credentialTypes"`
	Decimals        int      `json:"decimals"`
}

// StripeRequest is the request of a stripe charge.
type StripeRequest struct {
	Amount        string        `json:"amount"`
	Currency      string        `json:"currency"`
	MethodDetails StripeDetails `json:"methodDetails"`
	Description   string        `json:"description,omitempty"`
	ExternalID    string        `json:"externalId,omitempty"`
}

// StripeDetails are the methodDetails of a stripe charge request.
type StripeDetails struct {
	NetworkID          string   `json:"networkId"`
	PaymentMethodTypes []string `json:"paymentMethodTypes"`
}

// EVMPayload is the evm charge credential payload (credential type
// "authorization").
type EVMPayload struct {
	Type string `json:"type"`
	evm.EIP3009Authorization
	Signature string `json:"signature"`
}

// StripePayload is the stripe charge credential payload.
type StripePayload struct {
	SPT        string `json:"spt"`
	ExternalID string `json:"externalId,omitempty"`
}

// Nonce returns the EIP-3009 nonce an evm credential for challenge id in
// realm must carry (0x + 64 hex digits):
// keccak256(utf8(id) ‖ utf8(realm)), binding the signature to the challenge.
func Nonce(id, realm string) string {
	h := eip712.Keccak256([]byte(id), []byte(realm))
	return "0x" + hex.EncodeToString(h[:])
}

// BodyDigest returns the RFC 9530 Content-Digest value of a request body,
// "sha-256=:<base64>:", or "" for an empty body (Resource.BodyDigest).
func BodyDigest(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	sum := sha256.Sum256(body)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}
