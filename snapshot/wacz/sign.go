package wacz

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"

	"github.com/digitorus/timestamp"
)

// SignedData is datapackage-digest.json's "signedData" in the anonymous
// form, with the optional timestamp (see the package documentation).
type SignedData struct {
	Hash      string `json:"hash"`
	Created   string `json:"created"`
	Software  string `json:"software"`
	Version   string `json:"version,omitempty"`
	Signature string `json:"signature"`
	PublicKey string `json:"publicKey"`
	// TimeSignature is the base64 DER RFC 3161 TimeStampToken over the
	// SHA-256 of the signature bytes; TimestampCert the TSA's certificates
	// (PEM). Both empty without a TSA.
	TimeSignature string `json:"timeSignature,omitempty"`
	TimestampCert string `json:"timestampCert,omitempty"`
}

// Timestamper obtains an RFC 3161 TimeStampToken (DER) over data's
// SHA-256. TSAClient is the HTTP implementation.
type Timestamper interface {
	Timestamp(ctx context.Context, data []byte) ([]byte, error)
}

// Signer signs datapackage digests with an ECDSA P-384 key and, when TSA
// is set, timestamps the signature.
type Signer struct {
	key *ecdsa.PrivateKey
	// Software and Version are written into the signed data.
	Software, Version string
	// TSA, when set, timestamps every signature; a TSA failure fails Sign
	// (a bundle promised a timestamp is never delivered without it).
	TSA Timestamper
}

// ErrBadKey reports a signing key that is not ECDSA P-384.
var ErrBadKey = errors.New("wacz: signing key must be ECDSA P-384")

// NewSigner returns a signer with key.
func NewSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	if key == nil || key.Curve != elliptic.P384() {
		return nil, ErrBadKey
	}
	return &Signer{key: key, Software: "assay"}, nil
}

// GenerateKey returns a new ECDSA P-384 key.
func GenerateKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
}

// PublicKey returns the signer's public key.
func (s *Signer) PublicKey() *ecdsa.PublicKey { return &s.key.PublicKey }

// PublicKeyBase64 is the public key as signedData carries it: base64 of
// the DER SubjectPublicKeyInfo.
func PublicKeyBase64(pub *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

// Sign signs hash (datapackage-digest.json's "hash") at created.
func (s *Signer) Sign(ctx context.Context, hash string, created time.Time) (*SignedData, error) {
	sum := sha256.Sum256([]byte(hash))
	r, ss, err := ecdsa.Sign(rand.Reader, s.key, sum[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 96)
	r.FillBytes(sig[:48])
	ss.FillBytes(sig[48:])
	pub, err := PublicKeyBase64(&s.key.PublicKey)
	if err != nil {
		return nil, err
	}
	sd := &SignedData{Hash: hash, Created: created.UTC().Format(time.RFC3339), Software: s.Software, Version: s.Version,
		Signature: base64.StdEncoding.EncodeToString(sig), PublicKey: pub}
	if s.TSA != nil {
		tok, err := s.TSA.Timestamp(ctx, sig)
		if err != nil {
			return nil, fmt.Errorf("wacz: timestamp: %w", err)
		}
		ts, err := timestamp.Parse(tok)
		if err != nil {
			return nil, fmt.Errorf("wacz: timestamp token from the TSA: %w", err)
		}
		sd.TimeSignature, sd.TimestampCert = base64.StdEncoding.EncodeToString(tok), pemChain(ts.Certificates)
	}
	return sd, nil
}

// Signature verification errors.
var (
	ErrSignature = errors.New("wacz: signature does not verify")
	ErrTimestamp = errors.New("wacz: timestamp does not verify")
)

// Signed is what VerifySignature found.
type Signed struct {
	PublicKey *ecdsa.PublicKey
	Created   time.Time
	Software  string
	// Timestamp is set when the signed data carries one.
	Timestamp *Timestamped
}

// Timestamped is a verified RFC 3161 timestamp.
type Timestamped struct {
	Time time.Time
	// TSA is the certificate that signed the token.
	TSA *x509.Certificate
	// Trusted reports whether TSA chains to the roots given to
	// VerifySignature (false when none were given).
	Trusted bool
}

// MaxTimestampSkew is the largest distance between signedData.created and
// the TSA's time (the recommendation's 10 minutes).
const MaxTimestampSkew = 10 * time.Minute

// VerifySignature checks sd: its hash must be hash, its signature must
// verify with its public key (ECDSA P-384), and its timestamp, when
// present, must be a valid RFC 3161 token over the SHA-256 of the
// signature bytes whose time lies within MaxTimestampSkew of created.
// With tsaRoots, the TSA's certificate must chain to them. Errors wrap
// ErrSignature or ErrTimestamp.
func VerifySignature(sd *SignedData, hash string, tsaRoots *x509.CertPool) (*Signed, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrSignature}, args...)...)
	}
	if sd == nil {
		return nil, bad("the WACZ is not signed (no signedData)")
	}
	if sd.Hash != hash {
		return nil, bad("signedData.hash %q is not the digest %q", sd.Hash, hash)
	}
	der, err := base64.StdEncoding.DecodeString(sd.PublicKey)
	if err != nil {
		return nil, bad("publicKey is not base64")
	}
	k, err := x509.ParsePKIXPublicKey(der)
	pub, ok := k.(*ecdsa.PublicKey)
	if err != nil || !ok || pub.Curve != elliptic.P384() {
		return nil, bad("publicKey is not an ECDSA P-384 key")
	}
	sig, err := base64.StdEncoding.DecodeString(sd.Signature)
	if err != nil {
		return nil, bad("signature is not base64")
	}
	sum := sha256.Sum256([]byte(sd.Hash))
	valid := false
	if len(sig) == 96 {
		valid = ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:48]), new(big.Int).SetBytes(sig[48:]))
	} else {
		var rs struct{ R, S *big.Int }
		if rest, err := asn1.Unmarshal(sig, &rs); err == nil && len(rest) == 0 && rs.R != nil && rs.S != nil {
			valid = ecdsa.Verify(pub, sum[:], rs.R, rs.S)
		}
	}
	if !valid {
		return nil, bad("the signature of %s does not verify with the public key in signedData", sd.Hash)
	}
	created, err := time.Parse(time.RFC3339, sd.Created)
	if err != nil {
		return nil, bad("created %q is not an RFC 3339 time", sd.Created)
	}
	out := &Signed{PublicKey: pub, Created: created, Software: sd.Software}
	if sd.TimeSignature == "" {
		if sd.TimestampCert != "" {
			return nil, fmt.Errorf("%w: timestampCert without timeSignature", ErrTimestamp)
		}
		return out, nil
	}
	ts, chain, err := verifyTimestamp(sd.TimeSignature, sig, tsaRoots)
	if err != nil {
		return nil, err
	}
	if sd.TimestampCert != chain {
		return nil, fmt.Errorf("%w: timestampCert is not the certificates of the token", ErrTimestamp)
	}
	if d := ts.Time.Sub(created); d > MaxTimestampSkew || d < -MaxTimestampSkew {
		return nil, fmt.Errorf("%w: the TSA's time %s is %s away from created %s (at most %s)", ErrTimestamp,
			ts.Time.UTC().Format(time.RFC3339), d.Abs().Round(time.Second), sd.Created, MaxTimestampSkew)
	}
	out.Timestamp = ts
	return out, nil
}

func verifyTimestamp(b64 string, sig []byte, roots *x509.CertPool) (*Timestamped, string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrTimestamp}, args...)...)
	}
	tok, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, "", bad("timeSignature is not base64")
	}
	ts, err := timestamp.Parse(tok)
	if err != nil {
		return nil, "", bad("timeSignature is not a valid RFC 3161 token: %v", err)
	}
	if len(ts.Certificates) == 0 {
		return nil, "", bad("the token carries no TSA certificate")
	}
	sum := sha256.Sum256(sig)
	if ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, sum[:]) {
		return nil, "", bad("the token is not over the SHA-256 of the signature")
	}
	out := &Timestamped{Time: ts.Time, TSA: ts.Certificates[0]}
	if roots != nil {
		inter := x509.NewCertPool()
		for _, c := range ts.Certificates[1:] {
			inter.AddCert(c)
		}
		if _, err := out.TSA.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: ts.Time,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}); err != nil {
			return nil, "", bad("the TSA certificate %q does not chain to the trusted roots: %v", out.TSA.Subject.String(), err)
		}
		out.Trusted = true
	}
	return out, pemChain(ts.Certificates), nil
}

// TSAClient asks an RFC 3161 time-stamping authority over HTTP (POST
// application/timestamp-query, RFC 3161 section 3.4).
type TSAClient struct {
	URL    string
	Client *http.Client // nil: a client with a 15-second timeout
}

// maxTSAResponse bounds a TSA's answer.
const maxTSAResponse = 1 << 20

// Timestamp implements Timestamper.
func (c *TSAClient) Timestamp(ctx context.Context, data []byte) ([]byte, error) {
	req, err := timestamp.CreateRequest(bytes.NewReader(data), &timestamp.RequestOptions{Hash: crypto.SHA256, Certificates: true})
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(req))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/timestamp-query")
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	res, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxTSAResponse+1))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("TSA answered %s", res.Status)
	}
	if len(body) > maxTSAResponse {
		return nil, errors.New("TSA answer is larger than 1 MiB")
	}
	ts, err := timestamp.ParseResponse(body)
	if err != nil {
		return nil, fmt.Errorf("TSA answer: %w", err)
	}
	if ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, sha256Sum(data)) {
		return nil, errors.New("TSA answer is not over the data sent")
	}
	return ts.RawToken, nil
}

// pemChain is certificates as PEM, in order.
func pemChain(certs []*x509.Certificate) string {
	var chain bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return chain.String()
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
