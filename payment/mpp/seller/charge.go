package seller

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// Options configure New.
type Options struct {
	// Exact verifies and settles evm payments (as x402 v2 payloads built
	// from their authorization). Required.
	Exact *x402seller.Exact
	// Secret keys the stateless HMAC binding of challenge ids: at least
	// 32 bytes. Nil disables MPP (Enabled is false).
	Secret []byte
	// PreviousSecrets are still accepted for verification (rotation with
	// overlap); new challenges use Secret.
	PreviousSecrets [][]byte
	// Realm is the realm of challenges (usually the public host name).
	// Required with Secret.
	Realm string
	// ChallengeTTL is how long a payer has to answer a challenge (default
	// 5 minutes); expires adds the work and settlement time on top.
	ChallengeTTL time.Duration
	// Cards enables the stripe method for offers with a card price.
	Cards CardCharger
	// Random is the source of challenge nonces (default crypto/rand).
	Random io.Reader
	// Now is the clock (default time.Now); Logger receives settlement
	// logs (nil discards).
	Now    func() time.Time
	Logger *slog.Logger
}

// Charge is the MPP charge mechanism. It is stateless apart from its
// configuration and safe for concurrent use.
type Charge struct {
	exact      *x402seller.Exact
	secret     []byte
	oldSecrets [][]byte
	realm      string
	ttl        time.Duration
	cards      CardCharger
	random     io.Reader
	now        func() time.Time
	log        *slog.Logger
}

// minCardCents is Stripe's minimum USD charge.
const minCardCents = 50

// New returns the mechanism o describes, or an error for a secret shorter
// than 32 bytes or a secret without a realm.
func New(o *Options) (*Charge, error) {
	m := &Charge{exact: o.Exact, realm: o.Realm, ttl: o.ChallengeTTL, cards: o.Cards, random: o.Random, now: o.Now, log: o.Logger}
	if m.now == nil {
		m.now = time.Now
	}
	if m.random == nil {
		m.random = rand.Reader
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.ttl <= 0 {
		m.ttl = 5 * time.Minute
	}
	if o.Secret != nil {
		if len(o.Secret) < 32 {
			return nil, errors.New("payment: MPPSecret must be at least 32 bytes")
		}
		if o.Realm == "" {
			return nil, errors.New("payment: Realm is required with MPPSecret")
		}
		m.secret = append([]byte(nil), o.Secret...)
		for _, s := range o.PreviousSecrets {
			if len(s) < 32 {
				return nil, errors.New("payment: MPPPreviousSecrets must be at least 32 bytes each")
			}
			m.oldSecrets = append(m.oldSecrets, append([]byte(nil), s...))
		}
	}
	return m, nil
}

// Enabled reports whether MPP payments are accepted (a Secret is set).
func (m *Charge) Enabled() bool { return m.secret != nil }

// CardsOffered reports whether offer can be paid by card: MPP enabled, a
// CardCharger configured, and a card price.
func (m *Charge) CardsOffered(offer payment.Offer) bool {
	return m.Enabled() && m.cards != nil && CardCents(offer) > 0
}

// CardProfile is the CardCharger's profile id ("" without cards).
func (m *Charge) CardProfile() string {
	if m.cards == nil {
		return ""
	}
	return m.cards.ProfileID()
}

// CardCents is the card price in cents: CardMicroUSD rounded up, at least
// Stripe's 50-cent minimum. 0 when the offer has no card price.
func CardCents(offer payment.Offer) int64 {
	if offer.CardMicroUSD <= 0 {
		return 0
	}
	c := (offer.CardMicroUSD + 9999) / 10000
	return max(c, minCardCents)
}

// request returns the base64url JCS request parameter for method.
func (m *Charge) request(method string, offer payment.Offer) (string, error) {
	n := m.exact.Network()
	switch method {
	case mpp.MethodEVM:
		return mpp.EncodeJCSBase64URL(mpp.EVMRequest{
			Amount: strconv.FormatInt(offer.AmountMicroUSD, 10), Currency: n.USDC.String(),
			MethodDetails: mpp.EVMDetails{ChainID: n.ChainID, CredentialTypes: []string{"authorization"}, Decimals: n.Decimals},
			Recipient:     m.exact.PayTo().String(),
		})
	case mpp.MethodStripe:
		return mpp.EncodeJCSBase64URL(mpp.StripeRequest{
			Amount: strconv.FormatInt(CardCents(offer), 10), Currency: "usd",
			MethodDetails: mpp.StripeDetails{NetworkID: m.cards.ProfileID(), PaymentMethodTypes: []string{"card"}},
		})
	}
	return "", fmt.Errorf("payment: unknown MPP method %q", method)
}

// opaque carries the challenge's random nonce, the resource it is issued
// for and the quote id, if any.
func opaque(nonce string, res payment.Resource) (string, error) {
	o := map[string]string{"n": nonce, "resource": res.URL}
	if res.QuoteID != "" {
		o["quoteId"] = res.QuoteID
	}
	return mpp.EncodeJCSBase64URL(o)
}

// newNonce returns 16 random bytes in unpadded base64url.
func (m *Charge) newNonce() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(m.random, b[:]); err != nil {
		return "", fmt.Errorf("payment: challenge nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// checkOpaque checks an echoed opaque parameter against what this route
// issues for res: a nonce of the issued form, exactly res's resource and
// exactly res's quote. It returns "" or what differs.
func checkOpaque(opaque string, res payment.Resource) string {
	raw, err := mpp.DecodeBase64URL(opaque)
	if err != nil {
		return "The challenge's opaque parameter is not base64url JSON."
	}
	var o map[string]string
	if err := json.Unmarshal(raw, &o); err != nil {
		return "The challenge's opaque parameter is not a JSON object of strings."
	}
	want := 2
	if res.QuoteID != "" {
		want = 3
	}
	switch n, err := base64.RawURLEncoding.DecodeString(o["n"]); {
	case err != nil || len(n) != 16:
		return "The challenge was not issued by this route."
	case o["resource"] != res.URL:
		return fmt.Sprintf("The challenge was issued for resource %q, not this one.", wire.Clip(o["resource"], 200))
	case o["quoteId"] != res.QuoteID:
		return "The challenge names another quote."
	case len(o) != want:
		return "The challenge was not issued by this route."
	}
	return ""
}

// opaqueQuote returns the quoteId of an opaque parameter, if any.
func opaqueQuote(opaque string) string {
	raw, err := mpp.DecodeBase64URL(opaque)
	if err != nil {
		return ""
	}
	var o map[string]string
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o["quoteId"]
}

// challenge builds the challenge this route issues for method, expiring
// at expires.
func (m *Charge) challenge(method string, offer payment.Offer, res payment.Resource, expires time.Time) (mpp.Challenge, error) {
	req, err := m.request(method, offer)
	if err != nil {
		return mpp.Challenge{}, err
	}
	nonce, err := m.newNonce()
	if err != nil {
		return mpp.Challenge{}, err
	}
	op, err := opaque(nonce, res)
	if err != nil {
		return mpp.Challenge{}, err
	}
	desc := res.Description
	if desc == "" {
		desc = offer.Description
	}
	c := mpp.Challenge{Realm: m.realm, Method: method, Intent: mpp.IntentCharge, Request: req,
		Expires: expires.UTC().Format(time.RFC3339), Digest: res.BodyDigest, Opaque: op, Description: desc}
	c.ID = mpp.ChallengeID(m.secret, c)
	return c, nil
}

// Challenges returns the challenges of offer at res, one per method (evm;
// stripe when cards are offered), each in the Payment scheme's
// serialization; none when MPP is disabled. They expire at issue +
// ChallengeTTL + the offer's work and settlement.
func (m *Charge) Challenges(offer payment.Offer, res payment.Resource) ([]string, error) {
	if !m.Enabled() {
		return nil, nil
	}
	expires := m.now().Add(m.ttl + m.exact.ValidFor(offer)).Truncate(time.Second)
	methods := []string{mpp.MethodEVM}
	if m.CardsOffered(offer) {
		methods = append(methods, mpp.MethodStripe)
	}
	out := make([]string, 0, len(methods))
	for _, method := range methods {
		c, err := m.challenge(method, offer, res, expires)
		if err != nil {
			return nil, err
		}
		out = append(out, c.String())
	}
	return out, nil
}

// bound reports whether the challenge id is the HMAC of its fields under
// the current or a previous secret.
func (m *Charge) bound(ch mpp.Challenge) bool {
	if hmac.Equal([]byte(mpp.ChallengeID(m.secret, ch)), []byte(ch.ID)) {
		return true
	}
	for _, s := range m.oldSecrets {
		if hmac.Equal([]byte(mpp.ChallengeID(s, ch)), []byte(ch.ID)) {
			return true
		}
	}
	return false
}
