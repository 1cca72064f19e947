package discovery

import (
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
)

// devProcessor is the real payment processor in dev mode (signatures
// verified, nothing settled on-chain), realm = the server's host.
func devProcessor(t *testing.T, realm string) payment.Processor {
	t.Helper()
	p, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("interop-test-secret-of-at-least-32-bytes"), Realm: realm})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
