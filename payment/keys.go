package payment

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Keyring holds the Ed25519 keys of receipts: one signing key and any
// number of verification-only keys (earlier signing keys kept during a
// rotation). Keys are named by their RFC 7638 JWK thumbprint, which is the
// receipt's keyId and the JWKS kid.
type Keyring struct {
	signing ed25519.PrivateKey
	keys    []jwkKey // signing key first
}

type jwkKey struct {
	kid string
	pub ed25519.PublicKey
}

// ErrBadReceiptKey reports a receipt-key specification that cannot be parsed.
var ErrBadReceiptKey = errors.New("payment: invalid receipt key")

// MetaStore keeps instance-wide settings; store.DB implements it. Instances
// sharing a database agree on a generated receipt key through it.
type MetaStore interface {
	SetMetaOnce(ctx context.Context, key, value string) (string, error)
}

// ReceiptKeyMeta is the MetaStore key under which a generated signing key
// is kept.
const ReceiptKeyMeta = "payment.receipt_signing_key"

// NewKeyring returns a keyring that signs with signing and also accepts
// the verification-only keys.
func NewKeyring(signing ed25519.PrivateKey, verifyOnly ...ed25519.PublicKey) (*Keyring, error) {
	if len(signing) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: signing key must be an Ed25519 private key", ErrBadReceiptKey)
	}
	k := &Keyring{signing: signing}
	k.add(signing.Public().(ed25519.PublicKey))
	for _, p := range verifyOnly {
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: verification key must be 32 bytes", ErrBadReceiptKey)
		}
		k.add(p)
	}
	return k, nil
}

func (k *Keyring) add(p ed25519.PublicKey) {
	kid := Thumbprint(p)
	for _, e := range k.keys {
		if e.kid == kid {
			return
		}
	}
	k.keys = append(k.keys, jwkKey{kid: kid, pub: p})
}

// GenerateReceiptKey returns a new signing key in the form ParseKeyring
// reads ("ed25519:" + base64url of the 32-byte seed).
func GenerateReceiptKey() string {
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed) // crypto/rand.Read never fails on supported platforms
	return "ed25519:" + base64.RawURLEncoding.EncodeToString(seed)
}

// ParseKeyring reads a key specification such as ASSAY_RECEIPT_KEY: a
// comma-separated list whose first entry is the signing key and whose
// further entries are verification-only keys. A private key is
// "ed25519:<base64url 32-byte seed>"; a public key is
// "ed25519-pub:<base64url 32-byte key>". Private keys after the first are
// used for verification only.
func ParseKeyring(spec string) (*Keyring, error) {
	parts := strings.Split(spec, ",")
	var signing ed25519.PrivateKey
	var others []ed25519.PublicKey
	for i, p := range parts {
		p = strings.TrimSpace(p)
		kind, val, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("%w: entry %d has no ed25519: or ed25519-pub: prefix", ErrBadReceiptKey, i+1)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "="))
		if err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("%w: entry %d is not 32 bytes of base64url", ErrBadReceiptKey, i+1)
		}
		switch {
		case kind == "ed25519" && i == 0:
			signing = ed25519.NewKeyFromSeed(raw)
		case kind == "ed25519":
			others = append(others, ed25519.NewKeyFromSeed(raw).Public().(ed25519.PublicKey))
		case kind == "ed25519-pub" && i > 0:
			others = append(others, ed25519.PublicKey(raw))
		default:
			return nil, fmt.Errorf("%w: entry %d: the first entry must be a private ed25519: key", ErrBadReceiptKey, i+1)
		}
	}
	return NewKeyring(signing, others...)
}

// LoadKeyring returns the keyring described by spec when it is not empty.
// Otherwise it generates a signing key once and stores it through m, so
// that every instance sharing the database signs with the same key (the
// stored key is a secret: protect the database accordingly, or configure
// the key).
func LoadKeyring(ctx context.Context, m MetaStore, spec string) (*Keyring, error) {
	if strings.TrimSpace(spec) != "" {
		return ParseKeyring(spec)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: no key configured and no store to keep a generated one", ErrBadReceiptKey)
	}
	stored, err := m.SetMetaOnce(ctx, ReceiptKeyMeta, GenerateReceiptKey())
	if err != nil {
		return nil, fmt.Errorf("payment: receipt key: %w", err)
	}
	return ParseKeyring(stored)
}

// Thumbprint returns the RFC 7638 JWK thumbprint of an Ed25519 public key:
// base64url(SHA-256 of {"crv":"Ed25519","kty":"OKP","x":"<x>"}).
func Thumbprint(p ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(p) + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// KeyID returns the id of the signing key.
func (k *Keyring) KeyID() string { return k.keys[0].kid }

// Sign signs msg with the signing key and returns the key id and signature.
func (k *Keyring) Sign(msg []byte) (kid string, sig []byte) {
	return k.keys[0].kid, ed25519.Sign(k.signing, msg)
}

// PublicKey returns the verification key named kid.
func (k *Keyring) PublicKey(kid string) (ed25519.PublicKey, bool) {
	for _, e := range k.keys {
		if e.kid == kid {
			return e.pub, true
		}
	}
	return nil, false
}

// JWKS returns the public keys as a JSON Web Key Set, signing key first.
func (k *Keyring) JWKS() JWKS {
	s := JWKS{Keys: make([]JWK, 0, len(k.keys))}
	for _, e := range k.keys {
		s.Keys = append(s.Keys, JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(e.pub), Kid: e.kid, Use: "sig", Alg: "EdDSA"})
	}
	return s
}

// JWK is one public key of a JWKS (RFC 7517; RFC 8037 OKP keys for
// receipts, RFC 7518 EC keys, with Y, for other signatures published
// beside them such as the evidence bundles' key).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y,omitempty"`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
}

// JWKS is a JSON Web Key Set, as served at /.well-known/jwks.json.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// KeySet finds receipt verification keys by key id. *Keyring and JWKS
// implement it.
type KeySet interface {
	PublicKey(kid string) (ed25519.PublicKey, bool)
}

// PublicKey returns the Ed25519 key named kid. Keys of other types, and
// keys whose kid is not their thumbprint, are ignored.
func (s JWKS) PublicKey(kid string) (ed25519.PublicKey, bool) {
	for _, k := range s.Keys {
		if k.Kid != kid || k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(raw) != ed25519.PublicKeySize || Thumbprint(raw) != kid {
			continue
		}
		return ed25519.PublicKey(raw), true
	}
	return nil, false
}
