// Package stripebillingtest helps test code that sells subscriptions through
// Stripe without a Stripe account:
//
//   - Server is the one httptest fake of the Stripe API
//     (internal/stripefake, also payment/paymenttest.Stripe): it serves the
//     endpoints stripebilling uses (prices, checkout sessions,
//     subscriptions, billing portal) and keeps state, so tests can drive a
//     subscription through its life (checkout completed, renewal failed,
//     paid, canceled) — which stateless stripe-mock cannot.
//   - Event and Sign build signed webhook deliveries
//     (webhook.GenerateTestSignedPayload).
//   - StartStripeMock runs stripe-mock on loopback, or skips the test with a
//     message when it is not installed.
package stripebillingtest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/assaykit/assay/internal/stripefake"
	"github.com/assaykit/assay/internal/testenv"
)

// Server is the fake Stripe API (see the package doc).
type Server = stripefake.Server

// Price, Session and Subscription are the fake's prices, checkout
// sessions and subscriptions.
type (
	Price        = stripefake.Price
	Session      = stripefake.Session
	Subscription = stripefake.Subscription
)

// MonthlyPrice returns an active USD 9.99 monthly test-mode price.
func MonthlyPrice(id string) Price { return stripefake.MonthlyPrice(id) }

// NewServer starts a fake Stripe API on loopback. Close it when done.
func NewServer() *Server { return stripefake.Start() }

// InvoiceObject returns an invoice object of a subscription (API
// 2025-03-31 and later: parent.subscription_details.subscription).
func InvoiceObject(subscriptionID, status string) map[string]any {
	return map[string]any{"id": "in_" + randHex(12), "object": "invoice", "status": status, "livemode": false,
		"parent": map[string]any{"type": "subscription_details",
			"subscription_details": map[string]any{"subscription": subscriptionID, "metadata": map[string]any{}}}}
}

// Event returns a webhook payload for an event of type typ about object,
// with the API version of stripe-go and a random id.
func Event(typ string, object map[string]any) []byte {
	return EventWithID("evt_"+randHex(12), typ, object)
}

// EventWithID is Event with a chosen event id.
func EventWithID(id, typ string, object map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": stripe.APIVersion, "created": time.Now().Unix(),
		"livemode": object["livemode"] == true, "pending_webhooks": 1, "type": typ,
		"data": map[string]any{"object": object},
	})
	return b
}

// Sign returns the Stripe-Signature header for payload signed with secret
// at t (now when zero).
func Sign(payload []byte, secret string, t time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: t}).Header
}

// StripeMockVersion is the stripe-mock release the tests are written
// against (go install github.com/stripe/stripe-mock@v0.203.0).
const StripeMockVersion = "v0.203.0"

// StartStripeMock starts stripe-mock listening on loopback only (both its
// HTTP and HTTPS listeners) and returns its HTTP base URL; it is stopped
// when the test ends. The binary is found by testenv.Command (PATH, then
// $GOPATH/bin and ~/go/bin); when it is missing the test is skipped with a
// message saying how to install it, or fails under ASSAY_TEST_STRICT=1.
func StartStripeMock(tb testing.TB) string {
	tb.Helper()
	bin := testenv.Command(tb, "stripe-mock", "go install github.com/stripe/stripe-mock@"+StripeMockVersion)
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	pr, pw, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		tb.Fatalf("start stripe-mock: %v", err)
	}
	pw.Close()
	done := make(chan struct{})
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pr.Close()
		<-done
	})
	addr := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() { // keep draining so that stripe-mock never blocks on output
			if a, ok := strings.CutPrefix(sc.Text(), "Listening for HTTP at address: "); ok && !sent {
				addr <- strings.TrimSpace(a)
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			tb.Fatal("stripe-mock exited before listening")
		}
		return "http://" + a
	case <-time.After(30 * time.Second):
		tb.Fatal("stripe-mock did not start within 30 s")
	}
	return ""
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
