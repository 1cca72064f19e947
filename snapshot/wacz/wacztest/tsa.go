// Package wacztest runs an RFC 3161 time-stamping authority on loopback,
// for tests of timestamped WACZ signatures that must not reach the
// network. Its certificate is self-signed (a root of its own), with the
// critical timeStamping extended key usage RFC 3161 requires.
package wacztest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/digitorus/timestamp"
)

// TSA is a time-stamping authority served on loopback.
type TSA struct {
	// URL is where to POST application/timestamp-query.
	URL string
	// Cert is the TSA's (self-signed) certificate; Roots holds it.
	Cert  *x509.Certificate
	Roots *x509.CertPool
	// Now is the TSA's clock (time.Now when nil); tests move it to make
	// a token's time disagree with a signature's.
	Now func() time.Time
	// Fail, when set, makes the TSA answer 503.
	Fail atomic.Bool
	// Requests counts the requests answered.
	Requests atomic.Int64

	srv *httptest.Server
	key *ecdsa.PrivateKey
}

// Start starts a TSA on 127.0.0.1; Close stops it.
func Start() (*TSA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	eku, err := asn1.Marshal([]asn1.ObjectIdentifier{{1, 3, 6, 1, 5, 5, 7, 3, 8}})
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "assay test TSA", Organization: []string{"assay tests"}},
		// Valid for any clock a test sets.
		NotBefore: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true, IsCA: true,
		// RFC 3161 2.3: the one extended key usage, marked critical.
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Critical: true, Value: eku}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	t := &TSA{Cert: cert, Roots: x509.NewCertPool(), key: key}
	t.Roots.AddCert(cert)
	t.srv = httptest.NewServer(http.HandlerFunc(t.serve))
	t.URL = t.srv.URL + "/tsr"
	return t, nil
}

// Close stops the TSA.
func (t *TSA) Close() { t.srv.Close() }

func (t *TSA) serve(w http.ResponseWriter, r *http.Request) {
	if t.Fail.Load() {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	req, err := timestamp.ParseRequest(body)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	ts := &timestamp.Timestamp{HashAlgorithm: req.HashAlgorithm, HashedMessage: req.HashedMessage, Time: now().UTC(),
		Nonce: req.Nonce, Policy: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, AddTSACertificate: req.Certificates}
	resp, err := ts.CreateResponseWithOpts(t.Cert, t.key, crypto.SHA256)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	t.Requests.Add(1)
	w.Header().Set("Content-Type", "application/timestamp-reply")
	_, _ = w.Write(resp)
}
