package evidence

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot/wacz"
)

// Keys holds the ECDSA P-384 keys of bundle signatures: one signing key
// and any number of verification-only keys (earlier signing keys kept
// during a rotation), all published as EC JWKs beside the receipt keys.
type Keys struct {
	signing *ecdsa.PrivateKey
	pubs    []*ecdsa.PublicKey // signing key's first
}

// ErrBadKey reports a bundle key specification that cannot be parsed.
var ErrBadKey = errors.New("evidence: invalid bundle key")

// KeyMeta is the MetaStore key under which a generated signing key is
// kept (instances sharing a database sign with the same key).
const KeyMeta = "evidence.bundle_signing_key"

// MetaStore keeps instance-wide settings; store.DB implements it, and
// metamem.Store in memory.
type MetaStore interface {
	SetMetaOnce(ctx context.Context, key, value string) (string, error)
}

// NewKeys returns keys that sign with signing (ECDSA P-384) and also
// publish the verification-only keys.
func NewKeys(signing *ecdsa.PrivateKey, verifyOnly ...*ecdsa.PublicKey) (*Keys, error) {
	if signing == nil || signing.Curve != elliptic.P384() {
		return nil, fmt.Errorf("%w: the signing key must be ECDSA P-384", ErrBadKey)
	}
	k := &Keys{signing: signing, pubs: []*ecdsa.PublicKey{&signing.PublicKey}}
	for _, p := range verifyOnly {
		if p == nil || p.Curve != elliptic.P384() {
			return nil, fmt.Errorf("%w: verification keys must be ECDSA P-384", ErrBadKey)
		}
		if !k.has(p) {
			k.pubs = append(k.pubs, p)
		}
	}
	return k, nil
}

func (k *Keys) has(p *ecdsa.PublicKey) bool {
	for _, q := range k.pubs {
		if q.Equal(p) {
			return true
		}
	}
	return false
}

// GenerateKeySpec returns a new signing key in the form ParseKeys reads:
// "ecdsa-p384:" + base64url of its PKCS #8 DER.
func GenerateKeySpec() (string, error) {
	key, err := wacz.GenerateKey()
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	return "ecdsa-p384:" + base64.RawURLEncoding.EncodeToString(der), nil
}

// ParseKeys reads a key specification such as ASSAY_BUNDLE_KEY: a
// comma-separated list whose first entry is the signing key
// ("ecdsa-p384:<base64url PKCS #8 DER>") and whose further entries are
// verification-only keys ("ecdsa-p384-pub:<base64url SubjectPublicKeyInfo
// DER>", or private keys, of which only the public half is used).
func ParseKeys(spec string) (*Keys, error) {
	var signing *ecdsa.PrivateKey
	var others []*ecdsa.PublicKey
	for i, p := range strings.Split(spec, ",") {
		kind, val, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			return nil, fmt.Errorf("%w: entry %d has no ecdsa-p384: or ecdsa-p384-pub: prefix", ErrBadKey, i+1)
		}
		der, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "="))
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d is not base64url", ErrBadKey, i+1)
		}
		switch kind {
		case "ecdsa-p384":
			k, err := x509.ParsePKCS8PrivateKey(der)
			priv, ok := k.(*ecdsa.PrivateKey)
			if err != nil || !ok || priv.Curve != elliptic.P384() {
				return nil, fmt.Errorf("%w: entry %d is not a PKCS #8 ECDSA P-384 private key", ErrBadKey, i+1)
			}
			if i == 0 {
				signing = priv
			} else {
				others = append(others, &priv.PublicKey)
			}
		case "ecdsa-p384-pub":
			k, err := x509.ParsePKIXPublicKey(der)
			pub, ok := k.(*ecdsa.PublicKey)
			if err != nil || !ok || pub.Curve != elliptic.P384() || i == 0 {
				return nil, fmt.Errorf("%w: entry %d: the first entry must be an ecdsa-p384: private key, the others ECDSA P-384 keys", ErrBadKey, i+1)
			}
			others = append(others, pub)
		default:
			return nil, fmt.Errorf("%w: entry %d: unknown key type %q", ErrBadKey, i+1, kind)
		}
	}
	return NewKeys(signing, others...)
}

// LoadKeys returns the keys of spec when it is not empty; otherwise it
// generates a signing key once and keeps it through m (KeyMeta), so that
// every instance sharing the database signs with the same key, as
// payment.LoadKeyring does for receipts.
func LoadKeys(ctx context.Context, m MetaStore, spec string) (*Keys, error) {
	if strings.TrimSpace(spec) != "" {
		return ParseKeys(spec)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: no key configured and no store to keep a generated one", ErrBadKey)
	}
	gen, err := GenerateKeySpec()
	if err != nil {
		return nil, err
	}
	stored, err := m.SetMetaOnce(ctx, KeyMeta, gen)
	if err != nil {
		return nil, fmt.Errorf("evidence: bundle key: %w", err)
	}
	return ParseKeys(stored)
}

// Signing returns the signing key.
func (k *Keys) Signing() *ecdsa.PrivateKey { return k.signing }

// KeyID returns the id of the signing key (its JWK thumbprint).
func (k *Keys) KeyID() string { return Thumbprint(&k.signing.PublicKey) }

// JWKs returns the public keys as JWKs (kty EC, crv P-384, use sig),
// signing key first, for the JWKS beside the receipt keys. No "alg" is
// given: bundle signatures are ECDSA P-384 over a SHA-256 digest (as WACZ
// tools verify them), which no JOSE algorithm names.
func (k *Keys) JWKs() []payment.JWK {
	out := make([]payment.JWK, 0, len(k.pubs))
	for _, p := range k.pubs {
		out = append(out, jwkOf(p))
	}
	return out
}

func jwkOf(p *ecdsa.PublicKey) payment.JWK {
	x, y := coords(p)
	return payment.JWK{Kty: "EC", Crv: "P-384", X: x, Y: y, Kid: Thumbprint(p), Use: "sig"}
}

func coords(p *ecdsa.PublicKey) (string, string) {
	raw, _ := p.Bytes() // 0x04 ‖ X ‖ Y, 48 bytes each
	return base64.RawURLEncoding.EncodeToString(raw[1:49]), base64.RawURLEncoding.EncodeToString(raw[49:97])
}

// Thumbprint is the RFC 7638 thumbprint of an EC public key.
func Thumbprint(p *ecdsa.PublicKey) string {
	x, y := coords(p)
	sum := sha256.Sum256([]byte(`{"crv":"P-384","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Published reports whether jwks lists pub as an EC P-384 key (its kid,
// when the key has one listed, must be its thumbprint).
func Published(jwks payment.JWKS, pub *ecdsa.PublicKey) bool {
	want := jwkOf(pub)
	for _, k := range jwks.Keys {
		if k.Kty == "EC" && k.Crv == "P-384" && k.X == want.X && k.Y == want.Y && (k.Kid == "" || k.Kid == want.Kid) {
			return true
		}
	}
	return false
}
