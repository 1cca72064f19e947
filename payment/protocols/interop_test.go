package protocols_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
)

// Interop with the official npm clients.
//
// 1. go test ./payment/protocols -run TestInteropChallenges -write-challenges
//    writes testdata/npm/challenges.json: a 402 this package issues at a
//    fixed time.
// 2. (cd testdata/npm && npm ci && node generate.mjs) answers it with
//    @x402/fetch 2.27.0 (v2 and v1) and mppx 0.11.0 at that same time and
//    writes the headers to testdata/x402/official_*.txt and
//    testdata/mpp/official_evm.txt.
// 3. TestOfficialClientFixtures (plain go test, no Node) verifies them.

var writeChallenges = flag.Bool("write-challenges", false, "rewrite testdata/npm/challenges.json")

const interopBody = `{"claim":"The Eiffel Tower is in Paris","minimumSources":1}`

var interopRes = payment.Resource{URL: "https://api.example.com/v1/claims/verify/research", Method: "POST",
	BodyDigest: mpp.BodyDigest([]byte(interopBody)), Description: testOffer.Description, MimeType: "application/json"}

type interopChallenges struct {
	Now             string   `json:"now"`
	Body            string   `json:"requestBody"`
	PaymentRequired string   `json:"paymentRequired"`
	V1Body          string   `json:"v1Body"`
	WWWAuthenticate []string `json:"wwwAuthenticate"`
}

func TestInteropChallenges(t *testing.T) {
	f := newFixture(t, fixtureOpts{noStripe: true})
	ch, err := f.p.Challenge(context.Background(), testOffer, interopRes)
	if err != nil {
		t.Fatal(err)
	}
	got := interopChallenges{Now: testNow.Format(time.RFC3339), Body: interopBody,
		PaymentRequired: httpgate.ChallengeHeader(ch).Get(x402.HeaderPaymentRequired), V1Body: string(ch.Body),
		WWWAuthenticate: httpgate.ChallengeHeader(ch).Values(mpp.HeaderWWWAuthenticate)}
	b, _ := json.MarshalIndent(got, "", "  ")
	path := filepath.Join("testdata", "npm", "challenges.json")
	if *writeChallenges {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The committed challenges are exactly what this code issues, so the
	// fixtures signed against them stay meaningful.
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(old), bytes.TrimSpace(b)) {
		t.Fatalf("%s is stale: run go test -run TestInteropChallenges -write-challenges and regenerate the npm fixtures", path)
	}
}

// TestOfficialClientFixtures verifies headers produced by the official
// clients (committed fixtures; see generate.mjs).
func TestOfficialClientFixtures(t *testing.T) {
	f := newFixture(t, fixtureOpts{noStripe: true})
	tests := []struct {
		file     string
		header   string
		protocol string
		version  int
	}{
		{"x402/official_v2_fetch.txt", x402.HeaderPaymentSignature, "x402", 2},
		{"x402/official_v2_manual.txt", x402.HeaderPaymentSignature, "x402", 2},
		{"x402/official_v1.txt", x402.HeaderXPayment, "x402", 1},
		{"mpp/official_evm.txt", mpp.HeaderAuthorization, "mpp", 0},
	}
	for _, tc := range tests {
		raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Errorf("%s: %v (regenerate with testdata/npm/generate.mjs)", tc.file, err)
			continue
		}
		h := http.Header{}
		h.Set(tc.header, strings.TrimSpace(string(raw)))
		c, err := httpgate.ReadCredential(h)
		if err != nil || c == nil {
			t.Errorf("%s: read: %v", tc.file, err)
			continue
		}
		if c.Protocol != tc.protocol || c.Version != tc.version {
			t.Errorf("%s: credential %+v", tc.file, c)
		}
		a, err := f.p.Verify(context.Background(), testOffer, interopRes, c)
		if err != nil {
			t.Errorf("%s: verify: %v", tc.file, err)
			continue
		}
		if a.Payer != strings.ToLower(paymenttest.DevAddress) || a.AmountMicroUSD != 250000 {
			t.Errorf("%s: authorization %+v", tc.file, a)
		}
		s, err := f.p.Settle(context.Background(), a)
		if err != nil || !s.Dev {
			t.Errorf("%s: settle %+v %v", tc.file, s, err)
		}
		// The same fixture against another route's price fails.
		o := testOffer
		o.AmountMicroUSD = 120000
		if _, err := f.p.Verify(context.Background(), o, interopRes, c); err == nil {
			t.Errorf("%s: verified for another price", tc.file)
		}
	}
}

// TestOfficialClientsLive runs the official npm clients against an
// httptest server using the Processor (dev mode, real clock). It needs
// node and testdata/npm/node_modules (npm ci --prefix
// payment/protocols/testdata/npm);
// otherwise it stops through testenv.Node.
func TestOfficialClientsLive(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	node := testenv.Node(t, filepath.Join("testdata", "npm"), "mppx", "@x402/fetch")
	g := &paymenttest.Seller{Offer: testOffer}
	srv := paymenttest.NewSeller(t, g, testSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "live.mjs", srv.URL+"/v1/claims/verify/research")
	cmd.Dir = filepath.Join("testdata", "npm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node live.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Client   string          `json:"client"`
			Status   int             `json:"status"`
			Body     string          `json:"body"`
			Response json.RawMessage `json:"response"`
			Replay   int             `json:"replayStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		seen[r.Client] = true
		if r.Status != 200 || !strings.HasPrefix(r.Body, "paid:") || len(r.Response) == 0 || string(r.Response) == "null" {
			t.Errorf("%s: status %d body %q response %s", r.Client, r.Status, r.Body, r.Response)
		}
		if r.Client == "x402-v2-manual" && r.Replay != 402 {
			t.Errorf("replayed payment answered %d, want 402", r.Replay)
		}
		t.Logf("%s: %d %s", r.Client, r.Status, r.Response)
	}
	for _, c := range []string{"x402-v2-fetch", "x402-v2-manual", "x402-v1", "mppx-evm"} {
		if !seen[c] {
			t.Errorf("client %s did not report", c)
		}
	}
}
