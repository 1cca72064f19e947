// Command hostile measures what unpaid hostile input costs. First, in
// process, shapes.Decode of a ClaimVerificationRequest with 1,000 to 95,000
// unknown keys (the body of issue 13: 95,000 keys make 1 MB): time per key
// and the ratio of the largest size's per-key time to the smallest's (goal:
// at most 2, i.e. linear). Then, for each family of adversarial requests,
// it grows the input (keys, parameters, headers, parts, escapes), sends
// each size over loopback HTTP to a freshly built examples/server (paid
// mode, dev payments), and prints the time per unit, the same ratio, and
// the largest answer against its request (goal: no larger).
//
//	go run ./bench/hostile [-rounds 3] [-only body-unknown-keys] [-decode-only]
//
// Each size is run -rounds times; the fastest counts (a shared machine is
// noisy). Nothing is paid: every answer is a 4xx (or a 402 challenge)
// before any payment.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/shapes"
)

// request is one hostile request of size n.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

// family is one kind of hostile input.
type family struct {
	name  string
	unit  string
	sizes []int
	make  func(n int) request
}

var sizes = []int{1000, 3000, 10000, 30000, 95000}

func jsonBody(path string, body []byte) request {
	h := http.Header{"Content-Type": {"application/json"}}
	return request{method: "POST", path: path, header: h, body: body}
}

// keys writes n members "k<i>":v after prefix (an open JSON object).
func keys(prefix string, n int, key func(i int) string, v string) []byte {
	var b bytes.Buffer
	b.WriteString(prefix)
	for i := range n {
		if i > 0 || !strings.HasSuffix(prefix, "{") {
			b.WriteByte(',')
		}
		b.WriteString(`"` + key(i) + `":` + v)
	}
	return b.Bytes()
}

func distinct(i int) string { return "k" + strconv.Itoa(i) }
func same(int) string       { return "k" }

const claim = `"claim":"The Base mainnet chain ID is 8453."`

func families() []family {
	verify := "/claim-verification/v1/claims/verify"
	rpc := func(method string, params []byte) []byte {
		return append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`), params...), '}')
	}
	mcpCall := func(tool string, args []byte) request {
		r := jsonBody("/claim-verification/mcp", rpc("tools/call", append(append([]byte(`{"name":"`+tool+`","arguments":`), args...), '}')))
		r.header.Set("Accept", "application/json, text/event-stream")
		r.header.Set("Mcp-Protocol-Version", "2025-06-18")
		return r
	}
	a2a := func(parts []byte) request {
		r := jsonBody("/claim-verification/a2a", rpc("SendMessage", append(append([]byte(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":`), parts...), []byte("}}")...)))
		r.header.Set("A2A-Version", "1.0")
		return r
	}
	return []family{
		{"body-unknown-keys", "key", sizes, func(n int) request {
			return jsonBody(verify, append(keys("{"+claim, n, distinct, "0"), '}'))
		}},
		{"body-repeated-unknown-key", "key", sizes, func(n int) request {
			return jsonBody(verify, append(keys("{"+claim, n, same, "[1]"), '}'))
		}},
		{"body-repeated-known-key", "key", sizes, func(n int) request {
			return jsonBody(verify, append(keys("{", n, func(int) string { return "claim" }, "1"), '}'))
		}},
		{"body-array-items", "item", sizes, func(n int) request {
			return jsonBody(verify, []byte("{"+claim+`,"allowedDomains":[`+strings.TrimSuffix(strings.Repeat("1,", n), ",")+"]}"))
		}},
		{"body-escapes", "escape", sizes, func(n int) request {
			return jsonBody(verify, []byte(`{"claim":"`+strings.Repeat(`\u00e9`, n)+`"}`))
		}},
		{"body-deep-nesting", "level", []int{1000, 3000, 10000, 30000, 95000}, func(n int) request {
			// n levels in all, in values nested 500 deep (MaxDepth is 512).
			var b strings.Builder
			b.WriteString("{" + claim)
			for i := 0; i < n/500; i++ {
				b.WriteString(`,"k` + strconv.Itoa(i) + `":` + strings.Repeat("[", 500) + strings.Repeat("]", 500))
			}
			b.WriteString("}")
			return jsonBody(verify, []byte(b.String()))
		}},
		{"body-missing-echo", "byte", []int{10000, 30000, 100000, 300000, 950000}, func(n int) request {
			// One unknown key holding n bytes: the missing claim echoes the
			// whole object, the extra key its value.
			return jsonBody(verify, []byte(`{"k":"`+strings.Repeat("a", n)+`"}`))
		}},
		{"query-many-params", "parameter", sizes, func(n int) request {
			return request{method: "GET", path: "/niche-discovery/v1/niches?" + strings.Repeat("x=1&", n) + "limit=%ZZ"}
		}},
		{"query-repeated-param", "parameter", sizes, func(n int) request {
			return request{method: "GET", path: "/niche-discovery/v1/niches?" + strings.TrimSuffix(strings.Repeat("sort=%ZZ&", n), "&")}
		}},
		{"query-long-value", "escape", sizes, func(n int) request {
			return request{method: "GET", path: "/niche-discovery/v1/search?q=" + strings.Repeat("%C3%A9", n)}
		}},
		{"headers-many", "header", []int{1000, 3000, 10000, 30000, 60000}, func(n int) request {
			r := jsonBody(verify, []byte(`{"claim":1}`))
			for i := range n {
				r.header.Set("X-H"+strconv.Itoa(i), "v")
			}
			return r
		}},
		{"headers-repeated", "header", []int{1000, 3000, 10000, 30000, 60000}, func(n int) request {
			r := jsonBody(verify, []byte(`{"claim":1}`))
			for range n {
				r.header.Add("X-Forwarded-For", "10.0.0.1")
				r.header.Add("Idempotency-Key", "k")
			}
			return r
		}},
		{"mcp-arguments", "argument", sizes, func(n int) request {
			return mcpCall("verify_claim", append(keys("{"+claim, n, distinct, "0"), '}'))
		}},
		{"mcp-niche-arguments", "argument", sizes, func(n int) request {
			r := mcpCall("search_niches", append(keys(`{"q":"invoice"`, n, distinct, "0"), '}'))
			r.path = "/niche-discovery/mcp"
			return r
		}},
		{"a2a-data-part", "key", sizes, func(n int) request {
			return a2a(append(append([]byte(`[{"data":`), append(keys("{"+claim, n, distinct, "0"), '}')...), ']'))
		}},
		{"a2a-text-parts", "part", sizes, func(n int) request {
			return a2a([]byte("[" + strings.TrimSuffix(strings.Repeat(`{"text":"a"},`, n), ",") + "]"))
		}},
		{"a2a-bad-parts", "part", sizes, func(n int) request {
			return a2a([]byte("[" + strings.TrimSuffix(strings.Repeat(`{"text":"a","data":{}},`, n), ",") + "]"))
		}},
		{"header-x402-payment", "key", []int{1000, 3000, 10000, 30000, 60000}, func(n int) request {
			r := jsonBody(verify, []byte("{"+claim+"}"))
			payload := append(keys(`{"x402Version":2`, n, distinct, "0"), '}')
			r.header.Set("PAYMENT-SIGNATURE", base64.StdEncoding.EncodeToString(payload))
			return r
		}},
		{"header-mpp-credential", "key", []int{1000, 3000, 10000, 30000, 60000}, func(n int) request {
			r := jsonBody(verify, []byte("{"+claim+"}"))
			cred := append(keys(`{"challenge":{"id":"x"},"payload":{}`, n, distinct, "0"), '}')
			r.header.Set("Authorization", "Payment "+base64.RawURLEncoding.EncodeToString(cred))
			return r
		}},
	}
}

// decodeTable times shapes.Decode of bodies with 1,000 to 95,000 unknown
// keys and returns the ratio of the largest size's time per key to the
// smallest's.
func decodeTable(rounds int) float64 {
	fmt.Printf("%-28s %9s %11s %8s %11s %11s  %s\n", "shapes.Decode", "keys", "time", "per key", "body", "422 body", "errors")
	var first, last float64
	for k, n := range sizes {
		body := append(keys("{"+claim, n, distinct, "0"), '}')
		best := time.Duration(1 << 62)
		var answer []byte
		var errs int
		for range max(rounds, 5) {
			var req claims.Request
			start := time.Now()
			err := shapes.Decode(body, &req)
			best = min(best, time.Since(start))
			var ve *shapes.ValidationError
			if errors.As(err, &ve) {
				errs = len(ve.Detail)
				answer, _ = ve.MarshalJSON()
			}
		}
		per := float64(best.Nanoseconds()) / float64(n)
		if k == 0 {
			first = per
		}
		last = per
		fmt.Printf("%-28s %9d %11s %8s %11d %11d  %d\n", "unknown keys", n, best.Round(time.Microsecond), fmtNs(per), len(body), len(answer), errs)
	}
	ratio := last / first
	fmt.Printf("%-28s ratio per-key time largest/smallest %.2f (goal <= 2)\n\n", "shapes.Decode", ratio)
	return ratio
}

func main() {
	rounds := flag.Int("rounds", 3, "times each size is sent (the fastest counts)")
	only := flag.String("only", "", "run only the families whose name contains this")
	decodeOnly := flag.Bool("decode-only", false, "time shapes.Decode only (no server)")
	flag.Parse()
	decodeTable(*rounds)
	if *decodeOnly {
		return
	}
	ctx := context.Background()
	if err := run(ctx, *rounds, *only); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rounds int, only string) error {
	dir, err := os.MkdirTemp("", "assay-hostile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	base, stop, err := startServer(ctx, dir)
	if err != nil {
		return err
	}
	defer stop()
	client := &http.Client{Timeout: 5 * time.Minute}
	fmt.Printf("%-28s %9s %11s %8s %11s %11s  %s\n", "family", "n", "time", "per unit", "request", "answer", "status")
	worst := 0.0
	for _, f := range families() {
		if only != "" && !strings.Contains(f.name, only) {
			continue
		}
		var first, last float64
		maxRatio := 0.0
		for k, n := range f.sizes {
			r := f.make(n)
			best := time.Duration(1 << 62)
			var status, answer int
			for range rounds {
				d, st, size, err := send(ctx, client, base, r)
				if err != nil {
					return fmt.Errorf("%s n=%d: %w", f.name, n, err)
				}
				best, status, answer = min(best, d), st, size
			}
			reqSize := len(r.body) + len(r.path)
			for k, v := range r.header {
				reqSize += len(k) + len(strings.Join(v, ""))
			}
			per := float64(best.Nanoseconds()) / float64(n)
			if k == 0 {
				first = per
			}
			last = per
			maxRatio = max(maxRatio, float64(answer)/float64(reqSize))
			fmt.Printf("%-28s %9d %11s %8s %11d %11d  %d\n", f.name, n, best.Round(time.Microsecond), fmtNs(per)+"/"+f.unit, reqSize, answer, status)
		}
		ratio := last / first
		worst = max(worst, ratio)
		fmt.Printf("%-28s ratio per-%s time largest/smallest %.2f; largest answer/request %.2f\n\n", f.name, f.unit, ratio, maxRatio)
	}
	fmt.Printf("worst per-unit ratio: %.2f (goal <= 2)\n", worst)
	return nil
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.1fms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	}
	return fmt.Sprintf("%.0fns", ns)
}

// send sends r and returns the time to the end of the answer, its status
// and the answer's size (body plus header bytes).
func send(ctx context.Context, c *http.Client, base string, r request) (time.Duration, int, int, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, 0, 0, err
	}
	if r.body == nil {
		req.Body = nil
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, 0, 0, err
	}
	size := int(n)
	for k, v := range res.Header {
		size += len(k) + len(strings.Join(v, ""))
	}
	return d, res.StatusCode, size, nil
}

// startServer builds and starts examples/server on a free loopback port
// with its data in dir, and returns its base URL and a stop function.
func startServer(ctx context.Context, dir string) (string, func(), error) {
	bin := filepath.Join(dir, "assay-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/assaykit/assay/examples/server")
	if out, err := build.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("go build ./examples/server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ASSAY_ADDR=127.0.0.1:0", "ASSAY_DATA="+filepath.Join(dir, "data"), "ASSAY_LOG_LEVEL=error",
		"ASSAY_PROVIDER=corpus", "ASSAY_NICHE_FREE_SEARCHES=-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The server logs its start on stderr, the listening address first.
	out, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case a := <-addr:
		return "http://" + a, stop, nil
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, errors.New("the server did not start within 60 s")
	}
}

// listening finds the address in the server's start line.
var listening = regexp.MustCompile(`assay listening on http://([^\s"]+)`)
