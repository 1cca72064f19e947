package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// config is the example server's configuration, from flags and ASSAY_*
// environment variables (a flag on the command line wins). Secrets (API
// keys, webhook secrets) come from the environment only, so that -help never
// prints them.
type config struct {
	Addr          string
	DataDir       string
	PostgresURL   string
	PublicBaseURL string
	MetricsAddr   string
	LogLevel      string
	LogFormat     string
	MaxBodyBytes  int64
	DBReadConns   int64
	DBWriteConns  int64
	ReadTimeout   time.Duration
	WriteTimeout  time.Duration
	ShutdownWait  time.Duration

	// Secrets, from the environment only.
	AdminKey  string
	OpenAIKey string

	// Payments (not secrets: flags too). DevMode is -dev-mode as given (nil:
	// not given); Dev is the resolved mode (see validate).
	PayTo          string
	Network        string
	FacilitatorURL string
	MPPRealm       string
	DevMode        *bool
	Dev            bool

	// Claims.
	Provider          string
	CorpusDir         string
	OpenAIModel       string
	OpenAIBaseURL     string
	OpenAIEffort      string
	OpenAISendBlocked bool
	ClaimsResultCache bool
	ClaimsTimeout     time.Duration
	ClaimsPrefix      string
	ClaimsServiceSlug string

	// Snapshots.
	SnapshotBlobs     string
	SnapshotMaxBytes  int64
	SnapshotTimeout   time.Duration
	SnapshotRetention time.Duration
	SnapshotPorts     []int

	// Niche discovery.
	NicheDemo         bool
	NicheFreeSearches int
	NicheSearchPrice  int64
	NichePrefix       string
	NicheUnlockTTL    time.Duration
	NicheSearchCache  time.Duration
	TrustedProxies    string

	// Discovery documents.
	Discovery     bool
	ProviderName  string
	ProviderEmail string
	ProviderURL   string
	HomepageURL   string
	TermsURL      string
	PrivacyURL    string

	// Agent transports.
	MCPNoLocalhostProtection bool
	MCPTrustedOrigins        string

	// Maintenance.
	PurgeInterval time.Duration

	// warnings are configuration problems that do not stop the server;
	// run logs them at start.
	warnings []string
}

// flagSet registers typed flags whose defaults come from environment
// variables, and collects parse errors of those variables.
type flagSet struct {
	*flag.FlagSet
	getenv func(string) string
	errs   []error
}

func (f *flagSet) env(name, def string) string {
	if v := f.getenv(name); v != "" {
		return v
	}
	return def
}

func (f *flagSet) str(p *string, name, envName, def, usage string) {
	f.StringVar(p, name, f.env(envName, def), fmt.Sprintf("%s (env %s)", usage, envName))
}

func (f *flagSet) dur(p *time.Duration, name, envName string, def time.Duration, usage string) {
	d := def
	if v := f.getenv(envName); v != "" {
		parsed, err := time.ParseDuration(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: invalid duration %q", envName, v))
		}
		d = parsed
	}
	f.DurationVar(p, name, d, fmt.Sprintf("%s (env %s)", usage, envName))
}

func (f *flagSet) int64(p *int64, name, envName string, def int64, usage string) {
	n := def
	if v := f.getenv(envName); v != "" {
		parsed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: invalid number %q", envName, v))
		}
		n = parsed
	}
	f.Int64Var(p, name, n, fmt.Sprintf("%s (env %s)", usage, envName))
}

func (f *flagSet) boolean(p *bool, name, envName string, usage string) {
	b := false
	if v := f.getenv(envName); v != "" {
		parsed, err := strconv.ParseBool(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: invalid boolean %q", envName, v))
		}
		b = parsed
	}
	f.BoolVar(p, name, b, fmt.Sprintf("%s (env %s)", usage, envName))
}

// optBool is a boolean flag that also tells whether it was given at all.
type optBool struct{ v **bool }

func (o optBool) String() string {
	if o.v == nil || *o.v == nil {
		return ""
	}
	return strconv.FormatBool(**o.v)
}

func (o optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*o.v = &b
	return nil
}

func (o optBool) IsBoolFlag() bool { return true }

// optBoolean registers a boolean flag whose absence (flag and variable
// both unset) is distinguishable from false: *p stays nil.
func (f *flagSet) optBoolean(p **bool, name, envName, usage string) {
	if v := f.getenv(envName); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: invalid boolean %q", envName, v))
		}
		*p = &b
	}
	f.Var(optBool{p}, name, fmt.Sprintf("%s (env %s)", usage, envName))
}

func (f *flagSet) ints(p *[]int, name, envName, def, usage string) {
	parse := func(s string) ([]int, error) {
		var out []int
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("invalid port %q", part)
			}
			out = append(out, n)
		}
		return out, nil
	}
	v, err := parse(f.env(envName, def))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("%s: %w", envName, err))
	}
	*p = v
	f.Func(name, fmt.Sprintf("%s (env %s, default %s)", usage, envName, def), func(s string) error {
		v, err := parse(s)
		if err == nil {
			*p = v
		}
		return err
	})
}

// envOnlyHelp lists the settings read only from the environment: secrets and
// deployment facts that must never appear in a process listing or -help.
const envOnlyHelp = `
Environment only (secrets and deployment facts):
  ASSAY_ADMIN_KEY                key for the /v1/admin/... routes (empty: admin routes disabled)
  OPENAI_API_KEY                 enables OpenAI web search (else the offline demo corpus)
  ASSAY_FACILITATOR_AUTH         header sent to the facilitator, "Name: value"
  ASSAY_MPP_SECRET               MPP challenge-binding secret, at least 32 bytes (required outside dev mode)
  ASSAY_RECEIPT_KEY              receipt signing key "ed25519:<base64url seed>[,ed25519-pub:<old key>...]";
                                 empty: generated once and kept in the database
  ASSAY_STRIPE_SECRET_KEY        Stripe key: card payments (MPP stripe) and niche subscriptions
  ASSAY_STRIPE_PROFILE_ID        Stripe business-network profile id (MPP stripe)
  ASSAY_STRIPE_PRICE_ID          monthly USD price of the niche subscription
  ASSAY_STRIPE_WEBHOOK_SECRET    Stripe webhook signing secret (subscriptions)
  ASSAY_COST_INPUT_PER_MTOK, ASSAY_COST_CACHED_INPUT_PER_MTOK, ASSAY_COST_OUTPUT_PER_MTOK,
  ASSAY_COST_PER_SEARCH_CALL     provider prices in micro-USD for per-order cost accounting
`

// parseConfig reads flags from args, falling back to environment variables
// and then to defaults. It returns flag.ErrHelp for -help.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	c := &config{}
	f := &flagSet{FlagSet: flag.NewFlagSet("server", flag.ContinueOnError), getenv: getenv}
	f.SetOutput(out)
	f.Usage = func() {
		fmt.Fprintln(out, "Usage of server (every flag also reads the environment variable named in its help):")
		f.PrintDefaults()
		fmt.Fprint(out, envOnlyHelp)
	}

	f.str(&c.Addr, "addr", "ASSAY_ADDR", "127.0.0.1:8080", "listen address")
	f.str(&c.DataDir, "data", "ASSAY_DATA", "./assay-data", "directory for the SQLite database and snapshot files")
	f.str(&c.PostgresURL, "postgres", "ASSAY_POSTGRES_URL", "", "PostgreSQL URL; when set, used instead of SQLite (several instances may share it)")
	f.str(&c.PublicBaseURL, "public-base-url", "ASSAY_PUBLIC_BASE_URL", "", "absolute URL clients reach this server at, e.g. https://api.example.com (payment resources, discovery documents, checkout pages); empty: http://<listen address>")
	f.str(&c.MetricsAddr, "metrics-addr", "ASSAY_METRICS_ADDR", "", "serve /metrics only on this separate listen address, e.g. 127.0.0.1:9090 (empty: /metrics on the main address, public)")
	f.str(&c.LogLevel, "log-level", "ASSAY_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	f.str(&c.LogFormat, "log-format", "ASSAY_LOG_FORMAT", "text", "log format: text or json")
	f.int64(&c.MaxBodyBytes, "max-body", "ASSAY_MAX_BODY_BYTES", 1<<20, "largest request body in bytes (413 above)")
	f.int64(&c.DBReadConns, "db-read-conns", "ASSAY_DB_READ_CONNS", 16, "database connections for reads (SQLite and PostgreSQL); reads never wait behind writes")
	f.int64(&c.DBWriteConns, "db-write-conns", "ASSAY_DB_WRITE_CONNS", 16, "PostgreSQL connections for writes (orders, payments, stored results); SQLite always writes through one")
	f.dur(&c.ReadTimeout, "read-timeout", "ASSAY_READ_TIMEOUT", 30*time.Second, "time to read a request")
	f.dur(&c.WriteTimeout, "write-timeout", "ASSAY_WRITE_TIMEOUT", 150*time.Second, "time to write a response (covers a 120 s verification)")
	f.dur(&c.ShutdownWait, "shutdown-wait", "ASSAY_SHUTDOWN_WAIT", 130*time.Second, "how long shutdown waits for in-flight calls")

	f.str(&c.Provider, "provider", "ASSAY_PROVIDER", "auto", "claim search provider: auto (OpenAI when OPENAI_API_KEY is set, else the offline corpus), openai or corpus")
	f.str(&c.CorpusDir, "corpus-dir", "ASSAY_CORPUS_DIR", "", "directory of your own corpus documents (Markdown/HTML with front matter); empty: the embedded demo corpus")
	f.str(&c.OpenAIModel, "openai-model", "ASSAY_OPENAI_MODEL", "", "OpenAI model (empty: the provider's default)")
	f.str(&c.OpenAIBaseURL, "openai-base-url", "ASSAY_OPENAI_BASE_URL", "", "OpenAI API base URL (empty: https://api.openai.com/v1)")
	f.str(&c.OpenAIEffort, "openai-reasoning-effort", "ASSAY_OPENAI_REASONING_EFFORT", "", "reasoning effort sent to OpenAI (empty: low)")
	f.boolean(&c.OpenAISendBlocked, "openai-send-blocked-domains", "ASSAY_OPENAI_SEND_BLOCKED_DOMAINS", "also send blocked domains to OpenAI's search tool (they are always enforced locally)")
	f.boolean(&c.ClaimsResultCache, "claims-result-cache", "ASSAY_CLAIMS_RESULT_CACHE", "answer identical requests within their freshness window from stored results (cacheHit: true)")
	f.dur(&c.ClaimsTimeout, "claims-timeout", "ASSAY_CLAIMS_TIMEOUT", 120*time.Second, "deadline of one verification")
	f.str(&c.ClaimsPrefix, "claims-prefix", "ASSAY_CLAIMS_PREFIX", "/claim-verification", "service prefix of the claim-verification and snapshot routes (also MCP, A2A and discovery documents)")
	f.str(&c.ClaimsServiceSlug, "claims-service-slug", "ASSAY_CLAIMS_SERVICE_SLUG", "claim-verification", "{service_slug} of the legacy /v1/services/{service_slug}/claims/verify... aliases")

	f.str(&c.SnapshotBlobs, "snapshot-blobs", "ASSAY_SNAPSHOT_BLOBS", "", "where snapshot content is kept: files (under -data) or db; empty: db with PostgreSQL, files otherwise")
	f.int64(&c.SnapshotMaxBytes, "snapshot-max-bytes", "ASSAY_SNAPSHOT_MAX_BYTES", 5_000_000, "largest captured body (too_large above)")
	f.dur(&c.SnapshotTimeout, "snapshot-timeout", "ASSAY_SNAPSHOT_TIMEOUT", 15*time.Second, "time limit of one capture")
	f.dur(&c.SnapshotRetention, "snapshot-retention", "ASSAY_SNAPSHOT_RETENTION", 30*24*time.Hour, "how long snapshots are kept")
	f.ints(&c.SnapshotPorts, "snapshot-ports", "ASSAY_SNAPSHOT_PORTS", "80,443", "ports snapshots may connect to")

	demo := f.env("ASSAY_NICHE_DEMO", "true")
	if b, err := strconv.ParseBool(demo); err != nil {
		f.errs = append(f.errs, fmt.Errorf("ASSAY_NICHE_DEMO: invalid boolean %q", demo))
	} else {
		f.BoolVar(&c.NicheDemo, "niche-demo", b, "load the demo niche catalogue at start (env ASSAY_NICHE_DEMO)")
	}
	var free int64
	f.int64(&free, "niche-free-searches", "ASSAY_NICHE_FREE_SEARCHES", 3, "free text searches (/v1/search, /v1/niches?q=) per caller and UTC day; 0: none, -1: unlimited")
	f.int64(&c.NicheSearchPrice, "niche-search-price", "ASSAY_NICHE_SEARCH_PRICE", 50_000, "price of GET /v1/search/pay-per-call in micro-USD")
	f.str(&c.NichePrefix, "niche-prefix", "ASSAY_NICHE_PREFIX", "/niche-discovery", "service prefix of the niche routes")
	f.dur(&c.NicheUnlockTTL, "niche-unlock-ttl", "ASSAY_NICHE_UNLOCK_TTL", 15*time.Minute, "validity of an x-niche-paid-call token")
	f.dur(&c.NicheSearchCache, "niche-search-cache", "ASSAY_NICHE_SEARCH_CACHE", 5*time.Second, "how long niche list/search results are reused (0: off); this instance's writes clear them at once, other instances' show within this time")
	f.str(&c.TrustedProxies, "trusted-proxies", "ASSAY_TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed (free-search quotas)")

	disc := f.env("ASSAY_DISCOVERY", "true")
	if b, err := strconv.ParseBool(disc); err != nil {
		f.errs = append(f.errs, fmt.Errorf("ASSAY_DISCOVERY: invalid boolean %q", disc))
	} else {
		f.BoolVar(&c.Discovery, "discovery", b, "serve openapi.json and the .well-known discovery documents (env ASSAY_DISCOVERY)")
	}
	f.str(&c.ProviderName, "provider-name", "ASSAY_PROVIDER_NAME", "", "operator name in discovery documents (empty: assay)")
	f.str(&c.ProviderEmail, "provider-email", "ASSAY_PROVIDER_EMAIL", "", "operator contact e-mail in discovery documents")
	f.str(&c.ProviderURL, "provider-url", "ASSAY_PROVIDER_URL", "", "operator web site in discovery documents")
	f.str(&c.HomepageURL, "homepage-url", "ASSAY_HOMEPAGE_URL", "", "service homepage in discovery documents")
	f.str(&c.TermsURL, "terms-url", "ASSAY_TERMS_URL", "", "terms of service URL in discovery documents")
	f.str(&c.PrivacyURL, "privacy-url", "ASSAY_PRIVACY_URL", "", "privacy policy URL in discovery documents")

	f.boolean(&c.MCPNoLocalhostProtection, "mcp-disable-localhost-protection", "ASSAY_MCP_DISABLE_LOCALHOST_PROTECTION", "accept MCP requests whose Host is not loopback on a loopback listener (behind a reverse proxy on the same host)")
	f.str(&c.MCPTrustedOrigins, "mcp-trusted-origins", "ASSAY_MCP_TRUSTED_ORIGINS", "", "comma-separated browser origins allowed to call the MCP endpoint")

	f.dur(&c.PurgeInterval, "purge-interval", "ASSAY_PURGE_INTERVAL", time.Hour, "how often expired verifications and snapshots are purged")

	f.str(&c.PayTo, "payee", "ASSAY_PAYEE_ADDRESS", "", "USDC payee address (0x...), x402 payTo and MPP recipient; required outside dev mode")
	f.str(&c.Network, "network", "ASSAY_NETWORK", "eip155:8453", "USDC network: eip155:8453 (Base) or eip155:84532 (Base Sepolia)")
	f.str(&c.FacilitatorURL, "facilitator-url", "ASSAY_FACILITATOR_URL", "", "x402 facilitator base URL (settles x402 and MPP evm payments); empty: dev mode, allowed only without a payee and a non-loopback public base URL, or with -dev-mode")
	f.str(&c.MPPRealm, "mpp-realm", "ASSAY_MPP_REALM", "", "MPP realm (empty: host of the public base URL)")
	f.optBoolean(&c.DevMode, "dev-mode", "ASSAY_DEV_MODE", "payments in DEV MODE: signatures verified, nothing settled on-chain (unset: dev mode only when nothing of a production set-up is configured)")

	if err := f.Parse(args); err != nil {
		return nil, err
	}
	if len(f.errs) > 0 {
		return nil, errors.Join(f.errs...)
	}
	c.NicheFreeSearches = int(free)
	c.AdminKey = getenv("ASSAY_ADMIN_KEY")
	c.OpenAIKey = getenv("OPENAI_API_KEY")
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// settlementMargin is the time the write timeout must leave after a
// verification's whole deadline for settling the payment and writing the
// answer. Settlement on Base takes a few seconds; a facilitator that takes
// longer leaves the order settling (reconciled later) rather than holding
// the response.
const settlementMargin = 10 * time.Second

// validate checks every value after parsing, whatever its source (flag,
// variable or default), and resolves the payment mode. It returns every
// problem at once. Problems that do not stop the server are kept in
// c.warnings.
func (c *config) validate() error {
	var errs []error
	bad := func(flagName, env, format string, args ...any) {
		errs = append(errs, fmt.Errorf("-%s (%s): %s", flagName, env, fmt.Sprintf(format, args...)))
	}
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
	} {
		switch {
		case d.zeroOK && d.v < 0:
			bad(d.flag, d.env, "must not be negative, got %s", d.v)
		case !d.zeroOK && d.v <= 0:
			bad(d.flag, d.env, "must be positive, got %s", d.v)
		}
	}
	for _, n := range []struct {
		flag, env string
		v, min    int64
	}{
		{"max-body", "ASSAY_MAX_BODY_BYTES", c.MaxBodyBytes, 1},
		{"db-read-conns", "ASSAY_DB_READ_CONNS", c.DBReadConns, 1},
		{"db-write-conns", "ASSAY_DB_WRITE_CONNS", c.DBWriteConns, 1},
		{"snapshot-max-bytes", "ASSAY_SNAPSHOT_MAX_BYTES", c.SnapshotMaxBytes, 1},
		{"niche-search-price", "ASSAY_NICHE_SEARCH_PRICE", c.NicheSearchPrice, 1},
		// 0: no free searches; -1 (server.UnlimitedSearches): no quota.
		{"niche-free-searches", "ASSAY_NICHE_FREE_SEARCHES", int64(c.NicheFreeSearches), -1},
	} {
		if n.v < n.min {
			bad(n.flag, n.env, "must be at least %d, got %d", n.min, n.v)
		}
	}
	switch c.Provider {
	case "auto", "openai", "corpus":
	default:
		bad("provider", "ASSAY_PROVIDER", "%q is not auto, openai or corpus", c.Provider)
	}
	switch c.SnapshotBlobs {
	case "", "files", "db":
	default:
		bad("snapshot-blobs", "ASSAY_SNAPSHOT_BLOBS", "%q is neither files nor db", c.SnapshotBlobs)
	}
	for _, p := range []struct{ flag, env, v string }{
		{"claims-prefix", "ASSAY_CLAIMS_PREFIX", c.ClaimsPrefix},
		{"niche-prefix", "ASSAY_NICHE_PREFIX", c.NichePrefix},
	} {
		if t := strings.TrimRight(p.v, "/"); t == "" || !strings.HasPrefix(t, "/") || strings.ContainsAny(t, "{}?# ") {
			bad(p.flag, p.env, "%q is not a path prefix such as /claim-verification", p.v)
		}
	}
	if s := c.ClaimsServiceSlug; s == "" || strings.ContainsAny(s, "/{}?# ") {
		bad("claims-service-slug", "ASSAY_CLAIMS_SERVICE_SLUG", "%q is not one path segment", s)
	}
	loopbackBase := true
	if c.PublicBaseURL != "" {
		u, err := url.Parse(c.PublicBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("public-base-url", "ASSAY_PUBLIC_BASE_URL", "%q is not an absolute http(s) URL", c.PublicBaseURL)
		} else {
			loopbackBase = isLoopbackHost(u.Hostname())
		}
	}

	// A verification that uses its whole deadline must still be answered:
	// past the write timeout the connection is closed after the payment
	// settled, and the buyer gets nothing.
	if c.ClaimsTimeout > 0 && c.WriteTimeout > 0 && c.WriteTimeout < c.ClaimsTimeout+settlementMargin {
		bad("write-timeout", "ASSAY_WRITE_TIMEOUT", "%s must be at least -claims-timeout (%s) plus %s for settlement and the answer",
			c.WriteTimeout, c.ClaimsTimeout, settlementMargin)
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

	// Payment mode. An explicit -dev-mode wins; without it, dev mode is
	// chosen only when nothing of a production set-up is configured, so a
	// deployment that forgot its facilitator refuses to start instead of
	// serving for free.
	switch {
	case c.DevMode != nil && *c.DevMode && c.FacilitatorURL != "":
		bad("dev-mode", "ASSAY_DEV_MODE", "dev mode contradicts -facilitator-url (ASSAY_FACILITATOR_URL); set one or the other")
	case c.DevMode != nil && *c.DevMode:
		c.Dev = true
	case c.DevMode != nil && c.FacilitatorURL == "":
		bad("facilitator-url", "ASSAY_FACILITATOR_URL", "required when dev mode is off (-dev-mode=false)")
	case c.FacilitatorURL != "":
		c.Dev = false
	case c.PayTo != "" || !loopbackBase:
		bad("facilitator-url", "ASSAY_FACILITATOR_URL",
			"not set, but a payee or a non-loopback public base URL is: production payments need a facilitator; set -dev-mode (ASSAY_DEV_MODE=true) to run this set-up without settling anything")
	default:
		c.Dev = true
	}
	return errors.Join(errs...)
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

func (c *config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.LogFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format: %q is neither text nor json", c.LogFormat)
}
