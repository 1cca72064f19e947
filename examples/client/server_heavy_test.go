//go:build heavy

// The client is tested against the real example server started as its own
// process, so these tests are heavy: go test -tags heavy runs them (.ci/run
// does, in its own step).

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/evm"
)

// serverBin is the examples/server binary, built once by TestMain: the
// client is tested against the real example server, started as its own
// process the way a user starts it.
var serverBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "assay-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	// The go command that runs the tests puts its own GOROOT/bin first
	// on PATH, so this is the same toolchain.
	gotool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building examples/server needs the go command:", err)
		os.Exit(1)
	}
	build := exec.Command(gotool, "build", "-o", serverBin, "github.com/assaykit/assay/examples/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building examples/server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// listening finds the address in the server's first log line (text or
// JSON), which it logs at every level.
var listening = regexp.MustCompile(`assay listening on (http://[^\s"]+)`)

// startServer runs examples/server on a free loopback port with its data in
// a temporary directory, and returns its base URL. The environment is
// built from scratch, so that no OPENAI_API_KEY or ASSAY_* variable of the
// developer's shell reaches it: it always runs the offline corpus and
// dev-mode payments.
func startServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(serverBin)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir(),
		"ASSAY_ADDR=127.0.0.1:0", "ASSAY_DATA=" + t.TempDir(), "ASSAY_LOG_LEVEL=warn",
	}
	logs := &syncBuffer{}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		// Read the log until the process ends: the first line names the
		// address; then reap the process.
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(logs, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && len(base) == 0 {
				base <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	stopped := false
	t.Cleanup(func() {
		if stopped {
			return
		}
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("server exited with %v\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("server did not stop on interrupt\n%s", logs.String())
		}
	})
	select {
	case b := <-base:
		return b
	case err := <-exited:
		stopped = true
		t.Fatalf("server exited before announcing its address: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not start\n%s", logs.String())
	}
	return ""
}

// syncBuffer collects the server's log while the test may read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runClient runs the client with args and the environment env.
func runClient(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

func TestClientBuysAndChecksReceipts(t *testing.T) {
	base := startServer(t)
	out, err := runClient(t, nil, "-base", base)
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	t.Logf("summary:\n%s", out)
	for _, want := range []string{
		"wallet 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (public dev wallet",
		"Claim verification, standard tier",
		"verdict     confirmed: ",
		"Niche evaluation",
		"re-opened GET /v1/niches/niche_",
		"paid      USD 0.05 by x402 v2 on eip155:8453",
		"paid      USD 0.25 by x402 v2 on eip155:8453",
		"DEV MODE  the server settled nothing on-chain",
		"Signed for USD 0.30 in total.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if n := strings.Count(out, "receipt   signature OK"); n != 2 {
		t.Errorf("%d receipts checked, want 2", n)
	}
}

func TestClientOwnWalletAndTier(t *testing.T) {
	base := startServer(t)
	w, err := evm.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASSAY_BASE_URL": base, "ASSAY_WALLET_KEY": w.PrivateKeyHex()}
	out, err := runClient(t, env, "-tier", "deep", "-skip-niche", "-claim", "Base mainnet uses chain ID 8543.")
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	for _, want := range []string{
		"wallet " + w.Address().String() + " (key from ASSAY_WALLET_KEY)",
		"Claim verification, deep tier",
		"verdict     contradicted: ",
		"paid      USD 0.12 by x402 v2",
		"Signed for USD 0.12 in total.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Niche evaluation") {
		t.Error("bought a niche evaluation despite -skip-niche")
	}
}

// A delivery that is not what the receipt covers is refused: a proxy
// between client and server changes the verdict in the body, and the
// receipt's resultSha256 no longer matches.
func TestClientRefusesAlteredDelivery(t *testing.T) {
	base := startServer(t)
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Request.URL.Path, "/v1/claims/verify") {
			return nil
		}
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		b = bytes.Replace(b, []byte(`"status":"confirmed"`), []byte(`"status":"contradicted"`), 1)
		res.Body = io.NopCloser(bytes.NewReader(b))
		res.ContentLength = int64(len(b))
		res.Header.Del("Content-Length")
		return nil
	}
	mitm := httptest.NewServer(proxy)
	defer mitm.Close()

	out, err := runClient(t, nil, "-base", mitm.URL, "-skip-niche")
	if err == nil || !strings.Contains(err.Error(), "resultSha256 is not the SHA-256 of the body received") {
		t.Fatalf("altered delivery accepted: %v\n%s", err, out)
	}
}

func TestClientFailures(t *testing.T) {
	base := startServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"price above the cap", []string{"-base", base, "-max-spend", "10000"}, "402 Payment Required"},
		{"cap explains itself", []string{"-base", base, "-max-spend", "10000"}, "no offered payment fits -max-spend"},
		{"invalid claim is the server's 422", []string{"-base", base, "-claim", "x"}, "422"},
		{"unknown niche", []string{"-base", base, "-niche", "niche_00000000000000000000000000000000"}, "404"},
		{"nobody listening", []string{"-base", closed}, "connection refused"},
		{"bad base URL", []string{"-base", "ftp://example.org"}, "not an http(s) URL"},
		{"bad tier", []string{"-base", base, "-tier", "gold"}, "tier"},
		{"bad key", []string{"-base", base}, "ASSAY_WALLET_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			if tt.name == "bad key" {
				env["ASSAY_WALLET_KEY"] = "0x1234"
			}
			_, err := runClient(t, env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := runClient(t, nil, "-help"); !errors.Is(err, flag.ErrHelp) || exitCode(err, io.Discard) != 0 {
		t.Errorf("-help: %v", err)
	}
	// A wrong command line exits 2 (nothing bought), a failure 1.
	for args, code := range map[string]int{"-tier gold": 2, "-no-such-flag": 2, "-base " + closed: 1} {
		_, err := runClient(t, nil, strings.Fields(args)...)
		if got := exitCode(err, io.Discard); got != code {
			t.Errorf("%s: exit status %d (%v), want %d", args, got, err, code)
		}
	}
}
