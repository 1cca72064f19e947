package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server"
)

type config struct {
	Base       string
	Tier       string
	Claim      string
	MinSources int
	NicheID    string
	SkipNiche  bool
	MaxSpend   int64
	Timeout    time.Duration
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := "http://127.0.0.1:8080"
	if v := getenv("ASSAY_BASE_URL"); v != "" {
		base = v
	}
	fs.StringVar(&c.Base, "base", base, "base URL of the assay server (env ASSAY_BASE_URL)")
	fs.StringVar(&c.Tier, "tier", claims.Standard, "verification tier: quick, standard, deep or research")
	fs.StringVar(&c.Claim, "claim", "Base mainnet uses chain ID 8453.", "the claim to verify")
	fs.IntVar(&c.MinSources, "minimum-sources", 1, "minimumSources of the request (0: the server's default, 2)")
	fs.StringVar(&c.NicheID, "niche", "", "id of the niche evaluation to buy (empty: the top one of the catalogue)")
	fs.BoolVar(&c.SkipNiche, "skip-niche", false, "do not buy a niche evaluation (for servers without the niche catalogue)")
	fs.Int64Var(&c.MaxSpend, "max-spend", 1_000_000, "most this run may sign for, in micro-USD (1000000 = USD 1)")
	fs.DurationVar(&c.Timeout, "timeout", 3*time.Minute, "time limit of the whole run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	// Every problem at once.
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q (quote the claim and pass it with -claim)", fs.Args()))
	}
	u, err := url.Parse(c.Base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("-base (ASSAY_BASE_URL): base URL %q is not an http(s) URL", c.Base))
	}
	c.Base = strings.TrimRight(c.Base, "/")
	if _, ok := claims.TierByName(c.Tier); !ok {
		errs = append(errs, fmt.Errorf("-tier: tier %q is not quick, standard, deep or research", c.Tier))
	}
	if c.MaxSpend <= 0 {
		errs = append(errs, errors.New("-max-spend: max-spend must be positive"))
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	return c, nil
}

// wallet returns the signer from ASSAY_WALLET_KEY, or the public dev
// wallet, and a label for the summary.
func wallet(getenv func(string) string) (evm.Signer, string, error) {
	if k := getenv("ASSAY_WALLET_KEY"); k != "" {
		s, err := evm.NewKeySigner(k)
		if err != nil {
			return nil, "", fmt.Errorf("ASSAY_WALLET_KEY: %w", err)
		}
		return s, "key from ASSAY_WALLET_KEY", nil
	}
	return paymenttest.DevWallet(), "public dev wallet: a well-known test key, never fund it", nil
}

// run buys a verification and a niche evaluation from the server at -base,
// checks the receipts and prints the summary to stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	signer, label, err := wallet(getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	transport := paying.NewTransport(signer, nil, &paying.TransportOptions{
		MaxPerCallMicroUSD: cfg.MaxSpend,
		BudgetMicroUSD:     cfg.MaxSpend,
	})
	// The routes of the tiers (the catalogue's paths; its prices are the
	// server's business: the 402 says what a call costs).
	cat, err := sell.NewCatalogue(nil)
	if err != nil {
		return err
	}
	c := &client{
		base:      cfg.Base,
		paying:    &http.Client{Transport: transport},
		plain:     &http.Client{},
		payer:     signer.Address(),
		catalogue: cat,
	}
	fmt.Fprintf(stdout, "assay client → %s\nwallet %s (%s); spending cap %s\n", cfg.Base, signer.Address(), label, "USD "+payment.MicroUSD(cfg.MaxSpend).String())

	v, err := c.verify(ctx, cfg)
	if err != nil {
		return fmt.Errorf("claim verification: %w", err)
	}
	printVerification(stdout, cfg.Tier, v)
	purchases := []*purchase{&v.purchase}

	if !cfg.SkipNiche {
		n, err := c.buyNiche(ctx, cfg.NicheID)
		if err != nil {
			return fmt.Errorf("niche evaluation: %w", err)
		}
		printNiche(stdout, n)
		purchases = append(purchases, &n.purchase)
	}

	fmt.Fprintln(stdout, "\nPayments and receipts (checked offline against "+cfg.Base+"/.well-known/jwks.json)")
	for _, p := range purchases {
		printPurchase(stdout, p)
	}
	fmt.Fprintf(stdout, "\nSigned for %s in total.\n", "USD "+payment.MicroUSD(transport.Spent()).String())
	return nil
}

// client talks to one server: paying requests go through the Transport,
// lookups (orders, JWKS) do not.
type client struct {
	base      string
	paying    *http.Client
	plain     *http.Client
	payer     evm.Address
	jwks      *payment.JWKS
	catalogue *sell.Catalogue
}

// purchase is one paid call and what its receipt proves.
type purchase struct {
	what    string // "verification cv_…" or "niche niche_…"
	paid    *paying.PaymentInfo
	receipt *payment.Receipt // nil when the server did not charge
}

type verification struct {
	purchase
	result claims.Result
}

type nichePurchase struct {
	purchase
	eval     niche.Evaluation
	unlocked bool // the unlock token reopened the evaluation without paying
}

// verify buys one verification on cfg.Tier.
func (c *client) verify(ctx context.Context, cfg *config) (*verification, error) {
	tier, _ := c.catalogue.Tier(cfg.Tier)
	body := map[string]any{"claim": cfg.Claim}
	if cfg.MinSources > 0 {
		body["minimumSources"] = cfg.MinSources
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+tier.HTTPPath, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, got, err := c.do(c.paying, req)
	if err != nil {
		return nil, err
	}
	v := &verification{}
	if err := json.Unmarshal(got, &v.result); err != nil {
		return nil, fmt.Errorf("reading the result: %w", err)
	}
	v.what = "verification " + v.result.VerificationID
	if err := c.checkPurchase(ctx, &v.purchase, res, got, v.result.VerificationID); err != nil {
		return nil, err
	}
	return v, nil
}

// buyNiche buys the full evaluation id (or the top one of the catalogue)
// and re-reads it with the unlock token it came with.
func (c *client) buyNiche(ctx context.Context, id string) (*nichePurchase, error) {
	if id == "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/niches?limit=1", nil)
		if err != nil {
			return nil, err
		}
		_, got, err := c.do(c.plain, req)
		if err != nil {
			return nil, err
		}
		var list server.NicheListResponse
		if err := json.Unmarshal(got, &list); err != nil {
			return nil, fmt.Errorf("reading the catalogue: %w", err)
		}
		if len(list.Niches) == 0 {
			return nil, errors.New("the catalogue has no published evaluation to buy")
		}
		id = list.Niches[0].ID
	}
	path := c.base + "/v1/niches/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path+"/pay-per-call", nil)
	if err != nil {
		return nil, err
	}
	res, got, err := c.do(c.paying, req)
	if err != nil {
		return nil, err
	}
	n := &nichePurchase{}
	var answer server.NicheEvaluationResponse
	if err := json.Unmarshal(got, &answer); err != nil {
		return nil, fmt.Errorf("reading the evaluation: %w", err)
	}
	if answer.Evaluation == nil {
		return nil, errors.New("the answer holds no evaluation")
	}
	n.eval = *answer.Evaluation
	n.what = "niche " + n.eval.ID
	if err := c.checkPurchase(ctx, &n.purchase, res, got, n.eval.ID); err != nil {
		return nil, err
	}
	if token := res.Header.Get("X-Niche-Paid-Call"); token != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Niche-Paid-Call", token)
		if _, _, err := c.do(c.plain, req); err != nil {
			return nil, fmt.Errorf("re-reading with the unlock token: %w", err)
		}
		n.unlocked = true
	}
	return n, nil
}

// do sends req and returns the response with its whole body, or an error
// naming the status and the server's detail for anything but 200.
func (c *client) do(hc *http.Client, req *http.Request) (*http.Response, []byte, error) {
	res, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode == http.StatusOK {
		return res, body, nil
	}
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	detail := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && len(e.Detail) > 0 {
		detail = string(e.Detail)
	}
	if len(detail) > 300 {
		detail = detail[:300] + "…"
	}
	msg := fmt.Sprintf("%s %s: %s %s", req.Method, req.URL.Path, res.Status, detail)
	if res.StatusCode == http.StatusPaymentRequired {
		if _, paid := paying.ResponseInfo(res); paid {
			msg += " (the server refused the payment)"
		} else {
			msg += " (not paid: no offered payment fits -max-spend and this wallet)"
		}
	}
	return nil, nil, errors.New(msg)
}

// checkPurchase fills p from a paid response: what the Transport paid, and
// the receipt, fetched with the order token and checked offline. A server
// that did not charge (httpgate.Free) leaves p.paid nil.
func (c *client) checkPurchase(ctx context.Context, p *purchase, res *http.Response, body []byte, resultID string) error {
	info, paid := paying.ResponseInfo(res)
	if !paid {
		return nil
	}
	p.paid = info
	if info.OrderID == "" || info.OrderToken == "" {
		return fmt.Errorf("paid response without order headers (%s, %s)", httpgate.HeaderOrderID, httpgate.HeaderOrderToken)
	}
	rc, err := c.receipt(ctx, info.OrderID, info.OrderToken)
	if err != nil {
		return err
	}
	p.receipt = rc
	sum := sha256.Sum256(body)
	var problems []string
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) {
		problems = append(problems, "resultSha256 is not the SHA-256 of the body received")
	}
	if rc.OrderID != info.OrderID {
		problems = append(problems, "the receipt names order "+rc.OrderID)
	}
	if rc.ResultID != resultID {
		problems = append(problems, "the receipt names result "+rc.ResultID)
	}
	if rc.AmountMicroUSD != info.AmountMicroUSD {
		problems = append(problems, fmt.Sprintf("the receipt says %s, the wallet signed for %s", "USD "+payment.MicroUSD(rc.AmountMicroUSD).String(), "USD "+payment.MicroUSD(info.AmountMicroUSD).String()))
	}
	if !strings.EqualFold(rc.Payer, c.payer.Hex()) {
		problems = append(problems, "the receipt names payer "+rc.Payer)
	}
	if len(problems) > 0 {
		return fmt.Errorf("receipt %s does not match the delivery: %s", rc.ReceiptID, strings.Join(problems, "; "))
	}
	return nil
}

// receipt reads the order with its token and verifies its receipt against
// the server's published keys.
func (c *client) receipt(ctx context.Context, orderID, token string) (*payment.Receipt, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/orders/"+url.PathEscape(orderID), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(httpgate.HeaderOrderToken, token)
	_, got, err := c.do(c.plain, req)
	if err != nil {
		return nil, err
	}
	var order server.Order
	if err := json.Unmarshal(got, &order); err != nil {
		return nil, fmt.Errorf("reading order %s: %w", orderID, err)
	}
	if order.Status != string(payment.OrderCompleted) || len(order.Receipt) == 0 || string(order.Receipt) == "null" {
		return nil, fmt.Errorf("order %s is %s, without a receipt", orderID, order.Status)
	}
	if c.jwks == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/.well-known/jwks.json", nil)
		if err != nil {
			return nil, err
		}
		_, got, err := c.do(c.plain, req)
		if err != nil {
			return nil, err
		}
		var jwks payment.JWKS
		if err := json.Unmarshal(got, &jwks); err != nil {
			return nil, fmt.Errorf("reading the JWKS: %w", err)
		}
		c.jwks = &jwks
	}
	rc, err := payment.VerifyReceipt(order.Receipt, *c.jwks)
	if err != nil {
		return nil, fmt.Errorf("receipt of order %s: %w", orderID, err)
	}
	return rc, nil
}
