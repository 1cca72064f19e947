package main

import (
	"fmt"
	"github.com/assaykit/assay/claims"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/sell"

	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/anydb"
)

// settlementMargin is the time the write timeout must leave after a
// verification's whole deadline for settling the payment and writing the
// answer. Settlement on Base takes a few seconds; a facilitator that takes
// longer leaves the order settling (reconciled later) rather than holding
// the response.
const settlementMargin = 10 * time.Second

// validate checks every value after parsing, whatever its source (flag,
// variable or default), and resolves the payment mode and the parsed
// forms run uses (log level, trusted proxies). Every problem goes to p;
// problems that do not stop the server are kept in c.warnings. It reads
// nothing but the configuration (and whether -corpus-dir is a directory):
// no listener, store or corpus exists yet.
func (c *config) validate(p *problems) {
	c.checkServer(p)
	c.checkClaims(p)
	c.checkNiche(p)
	c.checkPayments(p)
}

func (c *config) checkServer(p *problems) {
	for _, d := range []struct {
		flag, env string
		v         time.Duration
		zeroOK    bool
	}{
		{"read-timeout", "ASSAY_READ_TIMEOUT", c.ReadTimeout, false},
		{"write-timeout", "ASSAY_WRITE_TIMEOUT", c.WriteTimeout, false},
		{"shutdown-wait", "ASSAY_SHUTDOWN_WAIT", c.ShutdownWait, false},
		{"claims-timeout", "ASSAY_CLAIMS_TIMEOUT", c.ClaimsTimeout, false},
		{"snapshot-timeout", "ASSAY_SNAPSHOT_TIMEOUT", c.SnapshotTimeout, false},
		{"snapshot-retention", "ASSAY_SNAPSHOT_RETENTION", c.SnapshotRetention, false},
		{"niche-unlock-ttl", "ASSAY_NICHE_UNLOCK_TTL", c.NicheUnlockTTL, false},
		{"niche-search-cache", "ASSAY_NICHE_SEARCH_CACHE", c.NicheSearchCache, true},
		{"purge-interval", "ASSAY_PURGE_INTERVAL", c.PurgeInterval, false},
		{"facilitator-timeout", "ASSAY_FACILITATOR_TIMEOUT", c.FacilitatorTimeout, false},
		{"settle-timeout", "ASSAY_SETTLE_TIMEOUT", c.SettleTimeout, false},
		{"resolve-every", "ASSAY_RESOLVE_EVERY", c.ResolveEvery, false},
	} {
		switch {
		case d.zeroOK && d.v < 0:
			p.add(d.flag, d.env, "must not be negative, got %s", d.v)
		case !d.zeroOK && d.v <= 0:
			p.add(d.flag, d.env, "must be positive, got %s", d.v)
		}
	}
	for _, n := range []struct {
		flag, env string
		v, min    int64
	}{
		{"max-body", "ASSAY_MAX_BODY_BYTES", c.MaxBodyBytes, 1},
		{"db-read-conns", "ASSAY_DB_READ_CONNS", c.DBReadConns, 1},
		{"claims-free-verdicts-per-day", "ASSAY_CLAIMS_FREE_VERDICTS_PER_DAY", c.FreeVerdicts, 1},
		{"db-write-conns", "ASSAY_DB_WRITE_CONNS", c.DBWriteConns, 1},
		{"snapshot-max-bytes", "ASSAY_SNAPSHOT_MAX_BYTES", c.SnapshotMaxBytes, 1},
		{"niche-search-price", "ASSAY_NICHE_SEARCH_PRICE", c.NicheSearchPrice, 1},
		{"niche-evaluation-price", "ASSAY_NICHE_EVALUATION_PRICE", c.NicheEvalPrice, 1},
		{"claims-card-price", "ASSAY_CLAIMS_CARD_PRICE", c.ClaimsCardPrice, sell.MinCardMicroUSD},
		// 0: no free searches; -1 (server.UnlimitedSearches): no quota.
		{"niche-free-searches", "ASSAY_NICHE_FREE_SEARCHES", int64(c.NicheFreeSearches), -1},
	} {
		if n.v < n.min {
			p.add(n.flag, n.env, "must be at least %d, got %d", n.min, n.v)
		}
	}
	for _, tp := range sell.DefaultPrices().Tiers() {
		if v := c.ClaimsPrices[tp.Tier]; v != nil && *v < 1 {
			p.add("claims-"+tp.Tier+"-price", "ASSAY_CLAIMS_"+strings.ToUpper(tp.Tier)+"_PRICE", "must be at least 1, got %d", *v)
		}
	}
	if err := c.level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		p.add("log-level", "ASSAY_LOG_LEVEL", "%q is not debug, info, warn or error", c.LogLevel)
	}
	switch strings.ToLower(c.LogFormat) {
	case "text", "json":
	default:
		p.add("log-format", "ASSAY_LOG_FORMAT", "%q is neither text nor json", c.LogFormat)
	}
	checkAddr(p, "addr", "ASSAY_ADDR", c.Addr)
	if c.MetricsAddr != "" {
		checkAddr(p, "metrics-addr", "ASSAY_METRICS_ADDR", c.MetricsAddr)
		if c.MetricsAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
			p.add("metrics-addr", "ASSAY_METRICS_ADDR", "%q is also -addr: give /metrics its own address", c.MetricsAddr)
		}
	}
	if c.PostgresURL != "" && !anydb.IsPostgres(c.PostgresURL) {
		p.add("postgres", "ASSAY_POSTGRES_URL", "not a postgres:// or postgresql:// URL")
	}
	if c.PublicBaseURL != "" && !isHTTPURL(c.PublicBaseURL) {
		p.add("public-base-url", "ASSAY_PUBLIC_BASE_URL", "%q is not an absolute http(s) URL", c.PublicBaseURL)
	}
	// A verification that uses its whole deadline must still be answered:
	// past the write timeout the connection is closed after the payment
	// settled, and the buyer gets nothing.
	// The checks of an answer that arrived just before the deadline may
	// run claims.DefaultCheckGrace past it.
	if c.ClaimsTimeout > 0 && c.WriteTimeout > 0 && c.WriteTimeout < c.ClaimsTimeout+claims.DefaultCheckGrace+settlementMargin {
		p.add("write-timeout", "ASSAY_WRITE_TIMEOUT", "%s must be at least -claims-timeout (%s) plus %s for the checks of an answer that arrived at the deadline and %s for settlement and the answer",
			c.WriteTimeout, c.ClaimsTimeout, claims.DefaultCheckGrace, settlementMargin)
	}
	// A shutdown shorter than a verification cuts the calls in flight: their
	// orders are released at the next start (never charged), but the buyers
	// get no answer. Allowed (orchestrators impose their own grace period),
	// but said.
	if c.ClaimsTimeout > 0 && c.ShutdownWait > 0 && c.ShutdownWait < c.ClaimsTimeout {
		c.warnings = append(c.warnings, fmt.Sprintf(
			"-shutdown-wait (%s) is shorter than -claims-timeout (%s): verifications in flight at shutdown may be cut off (their payments are released, not charged)",
			c.ShutdownWait, c.ClaimsTimeout))
	}
}

// checkAddr checks a listen address: host:port, the port a number (0: any
// free port).
func checkAddr(p *problems, flagName, env, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err == nil && port != "" { // "host:" is any free port, as :0
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port out of range")
		}
	}
	if err != nil {
		p.add(flagName, env, "%q is not a listen address host:port such as 127.0.0.1:8080", addr)
	}
}

// isHTTPURL reports whether s is an absolute http(s) URL.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (c *config) checkClaims(p *problems) {
	seen := map[string]bool{}
	for _, name := range c.providers() {
		switch {
		case seen[name]:
			p.add("provider", "ASSAY_PROVIDER", "%q is listed twice", name)
		case name == "openai" && c.OpenAIKey == "":
			p.add("provider", "ASSAY_PROVIDER", "openai needs OPENAI_API_KEY, which is not set")
		case name == "anthropic" && c.AnthropicKey == "":
			p.add("provider", "ASSAY_PROVIDER", "anthropic needs ANTHROPIC_API_KEY, which is not set")
		case name != "openai" && name != "anthropic":
			p.add("provider", "ASSAY_PROVIDER", "%q is not auto, corpus, or a comma-separated list of openai and anthropic", c.Provider)
		}
		seen[name] = true
	}
	if c.AnthropicBaseURL != "" && !isHTTPURL(c.AnthropicBaseURL) {
		p.add("anthropic-base-url", "ASSAY_ANTHROPIC_BASE_URL", "%q is not an absolute http(s) URL", c.AnthropicBaseURL)
	}
	if c.OpenAIBaseURL != "" && !isHTTPURL(c.OpenAIBaseURL) {
		p.add("openai-base-url", "ASSAY_OPENAI_BASE_URL", "%q is not an absolute http(s) URL", c.OpenAIBaseURL)
	}
	if c.OpenAIEffort != "" {
		// The provider knows the efforts it accepts.
		if _, err := openai.New(&openai.Options{ReasoningEffort: c.OpenAIEffort}); err != nil {
			p.add("openai-reasoning-effort", "ASSAY_OPENAI_REASONING_EFFORT", "%v", err)
		}
	}
	if c.NicheImport != "" {
		if fi, err := os.Stat(c.NicheImport); err != nil || !fi.Mode().IsRegular() {
			p.add("niche-import", "ASSAY_NICHE_IMPORT", "%q is not a file", c.NicheImport)
		}
	}
	if c.CorpusDir != "" {
		if fi, err := os.Stat(c.CorpusDir); err != nil || !fi.IsDir() {
			p.add("corpus-dir", "ASSAY_CORPUS_DIR", "%q is not a directory", c.CorpusDir)
		}
	}
	switch c.SnapshotBlobs {
	case "", "files", "db":
	case "s3":
		if c.S3Bucket == "" {
			p.add("s3-bucket", "ASSAY_S3_BUCKET", "required with -snapshot-blobs s3")
		}
	default:
		p.add("snapshot-blobs", "ASSAY_SNAPSHOT_BLOBS", "%q is not files, db or s3", c.SnapshotBlobs)
	}
	if (c.S3AccessKey == "") != (c.S3SecretKey == "") {
		p.add("s3-bucket", "AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
	}
	if c.S3Endpoint != "" {
		if u, err := url.Parse(c.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("s3-endpoint", "ASSAY_S3_ENDPOINT", "%q is not an http(s) URL", c.S3Endpoint)
		}
	}
	for _, pr := range []struct{ flag, env, v string }{
		{"claims-prefix", "ASSAY_CLAIMS_PREFIX", c.ClaimsPrefix},
		{"niche-prefix", "ASSAY_NICHE_PREFIX", c.NichePrefix},
	} {
		if t := strings.TrimRight(pr.v, "/"); t == "" || !strings.HasPrefix(t, "/") || strings.ContainsAny(t, "{}?# ") {
			p.add(pr.flag, pr.env, "%q is not a path prefix such as /claim-verification", pr.v)
		}
	}
	if s := c.ClaimsServiceSlug; s == "" || strings.ContainsAny(s, "/{}?# ") {
		p.add("claims-service-slug", "ASSAY_CLAIMS_SERVICE_SLUG", "%q is not one path segment", s)
	}
}

func (c *config) checkNiche(p *problems) {
	c.proxies = nil
	for _, s := range splitList(c.TrustedProxies) {
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			p.add("trusted-proxies", "ASSAY_TRUSTED_PROXIES", "%q is not a CIDR such as 10.0.0.0/8", s)
			continue
		}
		c.proxies = append(c.proxies, pr)
	}
}

// checkPayments checks the payment and subscription settings and resolves
// the payment mode. An explicit -dev-mode wins; without it, dev mode is
// chosen only when nothing of a production set-up is configured, so a
// deployment that forgot its facilitator refuses to start instead of
// serving for free.
func (c *config) checkPayments(p *problems) {
	if _, ok := evm.LookupNetwork(c.Network); !ok {
		p.add("network", "ASSAY_NETWORK", "%q is not eip155:8453 (Base) or eip155:84532 (Base Sepolia)", c.Network)
	}
	if c.PayTo != "" {
		if _, err := evm.ParseAddress(c.PayTo); err != nil {
			p.add("payee", "ASSAY_PAYEE_ADDRESS", "%q is not an address (0x and 40 hex digits)", c.PayTo)
		}
	}
	if c.ChainRPCURL != "" && !isHTTPURL(c.ChainRPCURL) {
		p.add("chain-rpc-url", "ASSAY_CHAIN_RPC_URL", "%q is not an absolute http(s) URL", c.ChainRPCURL)
	}
	if c.FacilitatorURL != "" && !isHTTPURL(c.FacilitatorURL) {
		p.add("facilitator-url", "ASSAY_FACILITATOR_URL", "%q is not an absolute http(s) URL", c.FacilitatorURL)
	}
	if c.FacilitatorAuth != "" {
		if _, err := x402.ParseHeaderLine(c.FacilitatorAuth); err != nil {
			p.add("", "ASSAY_FACILITATOR_AUTH", `not one header line "Name: value"`)
		}
	}
	if c.MPPSecret != "" && len(c.MPPSecret) < 32 {
		p.add("", "ASSAY_MPP_SECRET", "must be at least 32 bytes, has %d", len(c.MPPSecret))
	}
	if c.ReceiptKey != "" {
		if _, err := payment.ParseKeyring(c.ReceiptKey); err != nil {
			p.add("", "ASSAY_RECEIPT_KEY", "%v", err)
		}
	}
	if c.BundleKey != "" {
		if _, err := evidence.ParseKeys(c.BundleKey); err != nil {
			p.add("", "ASSAY_BUNDLE_KEY", "%v", err)
		}
	}
	if c.TSAURL != "" && !isHTTPURL(c.TSAURL) {
		p.add("tsa-url", "ASSAY_TSA_URL", "%q is not an absolute http(s) URL", c.TSAURL)
	}
	if c.StripeProfile != "" && c.StripeKey == "" {
		p.add("", "ASSAY_STRIPE_PROFILE_ID", "set without ASSAY_STRIPE_SECRET_KEY (card payments need both)")
	}
	if c.StripePrice != "" || c.StripeWebhookSecret != "" {
		var missing []string
		for _, v := range []struct{ name, v string }{
			{"ASSAY_STRIPE_SECRET_KEY", c.StripeKey}, {"ASSAY_STRIPE_PRICE_ID", c.StripePrice}, {"ASSAY_STRIPE_WEBHOOK_SECRET", c.StripeWebhookSecret},
		} {
			if v.v == "" {
				missing = append(missing, v.name)
			}
		}
		if len(missing) > 0 {
			p.add("", "subscriptions", "set all of ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and ASSAY_STRIPE_WEBHOOK_SECRET, or neither the price nor the webhook secret (missing: %s)",
				strings.Join(missing, ", "))
		}
	}

	loopbackBase := true
	if u, err := url.Parse(c.PublicBaseURL); c.PublicBaseURL != "" && err == nil {
		loopbackBase = isLoopbackHost(u.Hostname())
	}
	switch {
	case c.DevMode != nil && *c.DevMode && c.FacilitatorURL != "":
		p.add("dev-mode", "ASSAY_DEV_MODE", "dev mode contradicts -facilitator-url (ASSAY_FACILITATOR_URL); set one or the other")
		return
	case c.DevMode != nil && *c.DevMode:
		c.Dev = true
		return
	case c.DevMode != nil && c.FacilitatorURL == "":
		p.add("facilitator-url", "ASSAY_FACILITATOR_URL", "required when dev mode is off (-dev-mode=false)")
		return
	case c.FacilitatorURL != "":
		c.Dev = false
	case c.PayTo != "" || !loopbackBase:
		p.add("facilitator-url", "ASSAY_FACILITATOR_URL",
			"not set, but a payee or a non-loopback public base URL is: production payments need a facilitator; set -dev-mode (ASSAY_DEV_MODE=true) to run this set-up without settling anything")
		return
	default:
		c.Dev = true
		return
	}
	// Production: everything a real payment needs.
	if c.PayTo == "" {
		p.add("payee", "ASSAY_PAYEE_ADDRESS", "required in production (a facilitator is set): the address that receives USDC")
	}
	if c.MPPSecret == "" {
		p.add("", "ASSAY_MPP_SECRET", "required in production (a facilitator is set): at least 32 bytes, the same on every instance")
	}
	if c.PublicBaseURL == "" && c.MPPRealm == "" {
		p.add("public-base-url", "ASSAY_PUBLIC_BASE_URL", "required in production (a facilitator is set), or at least -mpp-realm (ASSAY_MPP_REALM)")
	}
}

// isLoopbackHost reports whether host names this machine only: localhost
// or a loopback IP address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// logger returns the server's logger: every line on w, in the configured
// format and level, except the start-up announcements (announce), which
// every level shows.
func (c *config) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if strings.EqualFold(c.LogFormat, "json") {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(&levelFilter{Handler: h, level: c.level})
}
