package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
)

// config is the example server's configuration, from flags and ASSAY_*
// environment variables (a flag on the command line wins). Secrets (API
// keys, webhook secrets) come from the environment only, so that -help never
// prints them.
//
// parseConfig reads and checks all of it before anything starts (no
// listener, no store, no corpus): every problem, whatever its source, is
// reported at once, each naming its flag and its variable.
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
	AdminKey     string
	OpenAIKey    string
	AnthropicKey string

	// Payments (not secrets: flags too). DevMode is -dev-mode as given (nil:
	// not given); Dev is the resolved mode (see validate).
	PayTo          string
	Network        string
	FacilitatorURL string
	MPPRealm       string
	DevMode        *bool
	Dev            bool
	// Settlement resolution.
	ChainRPCURL        string
	FacilitatorTimeout time.Duration
	SettleTimeout      time.Duration
	ResolveEvery       time.Duration

	// Payment and subscription secrets, from the environment only.
	FacilitatorAuth     string // ASSAY_FACILITATOR_AUTH, "Name: value"
	MPPSecret           string // ASSAY_MPP_SECRET, at least 32 bytes
	ReceiptKey          string // ASSAY_RECEIPT_KEY
	BundleKey           string // ASSAY_BUNDLE_KEY
	StripeKey           string // ASSAY_STRIPE_SECRET_KEY
	StripeProfile       string // ASSAY_STRIPE_PROFILE_ID (MPP stripe cards)
	StripePrice         string // ASSAY_STRIPE_PRICE_ID (subscriptions)
	StripeWebhookSecret string // ASSAY_STRIPE_WEBHOOK_SECRET (subscriptions)
	Costs               payment.CostPrices

	// Claims.
	Provider          string
	CorpusDir         string
	OpenAIModel       string
	OpenAIBaseURL     string
	OpenAIEffort      string
	OpenAISendBlocked bool
	AnthropicModel    string
	AnthropicBaseURL  string
	ClaimsResultCache bool
	ClaimsTimeout     time.Duration
	// NoVerdictNoCharge are the claim tiers where an insufficient_evidence
	// verdict is free (-claims-no-verdict-no-charge), FreeVerdicts the
	// free verdicts per payer per UTC day.
	NoVerdictNoCharge []string
	FreeVerdicts      int64
	ClaimsPrefix      string
	ClaimsServiceSlug string

	// Snapshots.
	SnapshotBlobs string
	S3Bucket      string
	S3Prefix      string
	S3Endpoint    string
	S3Region      string
	// Object store credentials (env only; empty: the AWS default chain).
	S3AccessKey, S3SecretKey, S3SessionToken string
	SnapshotMaxBytes                         int64
	SnapshotTimeout                          time.Duration
	SnapshotRetention                        time.Duration
	TSAURL                                   string
	SnapshotPorts                            []int

	// Niche discovery.
	NicheDemo         bool
	NicheImport       string
	NicheFreeSearches int
	NicheSearchPrice  int64
	NicheEvalPrice    int64

	// Prices of the claim tiers (micro-USD), and of a card payment.
	ClaimsPrices     map[string]*int64
	ClaimsCardPrice  int64
	NichePrefix      string
	NicheUnlockTTL   time.Duration
	NicheSearchCache time.Duration
	TrustedProxies   string

	// Discovery serves the index and the discovery documents.
	Discovery bool
	// Pages serves the pages for people (package pages).
	Pages         bool
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

	// Resolved by validate.
	level   slog.Level
	proxies []netip.Prefix

	// warnings are configuration problems that do not stop the server;
	// run logs them at start.
	warnings []string
}

// problems collects configuration problems in the order they are found.
// A setting whose value did not parse is reported once: later checks of
// the same flag are dropped.
type problems struct {
	errs    []error
	invalid map[string]bool // flags whose value did not parse
}

// add records a problem of the setting named by flag (without its dash)
// and variable; either may be empty.
func (p *problems) add(flagName, env, format string, args ...any) {
	if flagName != "" && p.invalid[flagName] {
		return
	}
	var who string
	switch {
	case flagName != "" && env != "":
		who = fmt.Sprintf("-%s (%s)", flagName, env)
	case flagName != "":
		who = "-" + flagName
	default:
		who = env
	}
	p.errs = append(p.errs, fmt.Errorf("%s: %s", who, fmt.Sprintf(format, args...)))
}

// ConfigError is every problem of a configuration; the server does not
// start. main exits with status 2.
type ConfigError struct{ Problems []error }

func (e *ConfigError) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		b.WriteString("configuration: ")
		b.WriteString(e.Problems[0].Error())
	} else {
		fmt.Fprintf(&b, "configuration: %d problems:", len(e.Problems))
		for _, p := range e.Problems {
			b.WriteString("\n  ")
			b.WriteString(p.Error())
		}
	}
	b.WriteString("\n(run with -help for every flag and variable)")
	return b.String()
}

// flagSet registers typed flags whose defaults come from environment
// variables. A value that does not parse, from a variable or a flag, is
// recorded against its flag instead of stopping the parse, so that every
// problem is reported together; a flag given on the command line replaces
// the variable's value and any problem it had.
type flagSet struct {
	*flag.FlagSet
	getenv func(string) string
	order  []string         // flag names, in registration order
	errs   map[string]error // the current value's parse problem, by flag
	env    map[string]string
}

// value is a flag.Value whose Set never fails: it hands its problem to
// the flag set.
type value struct {
	set    func(string) error
	get    func() string
	isBool bool
	fail   func(error)
}

func (v *value) String() string {
	if v == nil || v.get == nil {
		return ""
	}
	return v.get()
}

func (v *value) Set(s string) error {
	v.fail(v.set(s))
	return nil
}

func (v *value) IsBoolFlag() bool { return v != nil && v.isBool }

// register adds flag name read from variable envName (else def) with the
// parser set; get renders the current value for -help.
func (f *flagSet) register(name, envName, def, usage string, isBool bool, set func(string) error, get func() string) {
	f.order = append(f.order, name)
	f.env[name] = envName
	fail := func(err error) {
		if err != nil {
			f.errs[name] = err
		} else {
			delete(f.errs, name)
		}
	}
	if v := f.getenv(envName); v != "" {
		def = v
	}
	fail(set(def))
	f.Var(&value{set: set, get: get, isBool: isBool, fail: fail}, name, fmt.Sprintf("%s (env %s)", usage, envName))
}

func (f *flagSet) str(p *string, name, envName, def, usage string) {
	f.register(name, envName, def, usage, false, func(s string) error { *p = s; return nil }, func() string { return *p })
}

func (f *flagSet) dur(p *time.Duration, name, envName string, def time.Duration, usage string) {
	f.register(name, envName, def.String(), usage, false, func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q (e.g. 90s, 15m, 2h)", s)
		}
		*p = d
		return nil
	}, func() string { return p.String() })
}

func (f *flagSet) int64(p *int64, name, envName string, def int64, usage string) {
	f.register(name, envName, strconv.FormatInt(def, 10), usage, false, func(s string) error {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid number %q", s)
		}
		*p = n
		return nil
	}, func() string { return strconv.FormatInt(*p, 10) })
}

func (f *flagSet) boolean(p *bool, name, envName string, def bool, usage string) {
	f.register(name, envName, strconv.FormatBool(def), usage, true, func(s string) error {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("invalid boolean %q (true or false)", s)
		}
		*p = b
		return nil
	}, func() string { return strconv.FormatBool(*p) })
}

// optBoolean registers a boolean flag whose absence (flag and variable
// both unset) is distinguishable from false: *p stays nil.
func (f *flagSet) optBoolean(p **bool, name, envName, usage string) {
	f.register(name, envName, "", usage, true, func(s string) error {
		if s == "" {
			return nil
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("invalid boolean %q (true or false)", s)
		}
		*p = &b
		return nil
	}, func() string {
		if *p == nil {
			return ""
		}
		return strconv.FormatBool(**p)
	})
}

// tiers registers a boolean-like flag that may also name claim tiers:
// false (the default) none, true or all every tier, else a comma-separated
// list of tier names. A bare -name means true.
func (f *flagSet) tiers(p *[]string, name, envName, usage string) {
	f.register(name, envName, "false", usage, true, func(s string) error {
		s = strings.TrimSpace(strings.ToLower(s))
		if b, err := strconv.ParseBool(s); err == nil || s == "" || s == "none" || s == "all" {
			*p = nil
			if b || s == "all" {
				for _, t := range claims.Tiers() {
					*p = append(*p, t.Name)
				}
			}
			return nil
		}
		var out []string
		for _, t := range splitList(s) {
			if _, ok := claims.TierByName(t); !ok {
				return fmt.Errorf("unknown claim tier %q (true, false, all, or tiers among %s)", t, strings.Join(tierNames(), ", "))
			}
			out = append(out, t)
		}
		*p = out
		return nil
	}, func() string {
		if len(*p) == 0 {
			return "false"
		}
		return strings.Join(*p, ",")
	})
}

func tierNames() []string {
	var out []string
	for _, t := range claims.Tiers() {
		out = append(out, t.Name)
	}
	return out
}

func (f *flagSet) ints(p *[]int, name, envName, def, usage string) {
	f.register(name, envName, def, usage, false, func(s string) error {
		var out []int
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("invalid port %q", part)
			}
			out = append(out, n)
		}
		*p = out
		return nil
	}, func() string {
		var parts []string
		for _, n := range *p {
			parts = append(parts, strconv.Itoa(n))
		}
		return strings.Join(parts, ",")
	})
}

// envOnlyHelp lists the settings read only from the environment: secrets and
// deployment facts that must never appear in a process listing or -help.
const envOnlyHelp = `
Environment only (secrets and deployment facts):
  ASSAY_ADMIN_KEY                key for the /v1/admin/... routes (empty: admin routes disabled)
  OPENAI_API_KEY                 enables OpenAI web search (else the offline demo corpus)
  ANTHROPIC_API_KEY              enables Anthropic web search (-provider anthropic, or auto without OPENAI_API_KEY)
  ASSAY_FACILITATOR_AUTH         header sent to the facilitator, "Name: value"
  ASSAY_MPP_SECRET               MPP challenge-binding secret, at least 32 bytes (required outside dev mode)
  ASSAY_RECEIPT_KEY              receipt signing key "ed25519:<base64url seed>[,ed25519-pub:<old key>...]";
                                 empty: generated once and kept in the database
  ASSAY_BUNDLE_KEY               evidence bundle signing key "ecdsa-p384:<base64url PKCS#8>[,ecdsa-p384-pub:<old key>...]";
                                 empty: generated once and kept in the database
  ASSAY_STRIPE_SECRET_KEY        Stripe key: card payments (MPP stripe) and niche subscriptions
  ASSAY_STRIPE_PROFILE_ID        Stripe business-network profile id (MPP stripe)
  ASSAY_STRIPE_PRICE_ID          monthly USD price of the niche subscription
  ASSAY_STRIPE_WEBHOOK_SECRET    Stripe webhook signing secret (subscriptions)
  ASSAY_COST_INPUT_PER_MTOK, ASSAY_COST_CACHED_INPUT_PER_MTOK, ASSAY_COST_OUTPUT_PER_MTOK,
  ASSAY_COST_PER_SEARCH_CALL     provider prices in micro-USD for per-order cost accounting
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
                                 object store credentials with -snapshot-blobs s3 (unset: the AWS SDK's
                                 default chain: AWS_PROFILE and the shared files, then the platform's role)

Every problem of the configuration is reported at once, before anything starts (exit status 2).
`

// parseConfig reads flags from args, falling back to environment variables
// and then to defaults, and checks the result (validate). It returns
// flag.ErrHelp for -help (after printing the help to out), and a
// *ConfigError listing every problem otherwise.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	c := &config{}
	f := &flagSet{FlagSet: flag.NewFlagSet("server", flag.ContinueOnError), getenv: getenv,
		errs: map[string]error{}, env: map[string]string{}}
	// The flag package's own messages are replaced by the report below.
	f.SetOutput(io.Discard)
	f.Usage = func() {}

	f.str(&c.Addr, "addr", "ASSAY_ADDR", "127.0.0.1:8080", "listen address")
	f.str(&c.DataDir, "data", "ASSAY_DATA", "./assay-data", "directory for the SQLite database and snapshot files")
	f.str(&c.PostgresURL, "postgres", "ASSAY_POSTGRES_URL", "", "PostgreSQL URL; when set, used instead of SQLite (several instances may share it)")
	f.str(&c.PublicBaseURL, "public-base-url", "ASSAY_PUBLIC_BASE_URL", "", "absolute URL clients reach this server at, e.g. https://api.example.com (payment resources, discovery documents, checkout pages); empty: http://<listen address>")
	f.str(&c.MetricsAddr, "metrics-addr", "ASSAY_METRICS_ADDR", "", "serve /metrics only on this separate listen address, e.g. 127.0.0.1:9090 (empty: /metrics on the main address, public)")
	f.str(&c.LogLevel, "log-level", "ASSAY_LOG_LEVEL", "info", "log level: debug, info, warn, error (debug: migrations, each demo evaluation, MCP sessions, details of warnings)")
	f.str(&c.LogFormat, "log-format", "ASSAY_LOG_FORMAT", "text", "log format: text or json (every line on stderr)")
	f.int64(&c.MaxBodyBytes, "max-body", "ASSAY_MAX_BODY_BYTES", 1<<20, "largest request body in bytes (413 above)")
	f.int64(&c.DBReadConns, "db-read-conns", "ASSAY_DB_READ_CONNS", 16, "database connections for reads (SQLite and PostgreSQL); reads never wait behind writes")
	f.int64(&c.DBWriteConns, "db-write-conns", "ASSAY_DB_WRITE_CONNS", 16, "PostgreSQL connections for writes (orders, payments, stored results); SQLite always writes through one")
	f.dur(&c.ReadTimeout, "read-timeout", "ASSAY_READ_TIMEOUT", 30*time.Second, "time to read a request")
	f.dur(&c.WriteTimeout, "write-timeout", "ASSAY_WRITE_TIMEOUT", 150*time.Second, "time to write a response (covers a 120 s verification)")
	f.dur(&c.ShutdownWait, "shutdown-wait", "ASSAY_SHUTDOWN_WAIT", 130*time.Second, "how long shutdown waits for in-flight calls")

	f.str(&c.Provider, "provider", "ASSAY_PROVIDER", "auto", "claim search providers: auto (OpenAI when OPENAI_API_KEY is set, else Anthropic when ANTHROPIC_API_KEY is set, else the offline corpus), corpus, or a comma-separated list of openai and anthropic (several corroborate on the deep and research tiers; the first answers quick and standard)")
	f.str(&c.CorpusDir, "corpus-dir", "ASSAY_CORPUS_DIR", "", "directory of your own corpus documents (Markdown/HTML with front matter); empty: the embedded demo corpus")
	f.str(&c.OpenAIModel, "openai-model", "ASSAY_OPENAI_MODEL", "", "OpenAI model (empty: the provider's default)")
	f.str(&c.OpenAIBaseURL, "openai-base-url", "ASSAY_OPENAI_BASE_URL", "", "OpenAI API base URL (empty: https://api.openai.com/v1)")
	f.str(&c.OpenAIEffort, "openai-reasoning-effort", "ASSAY_OPENAI_REASONING_EFFORT", "", "reasoning effort sent to OpenAI (empty: low)")
	f.str(&c.AnthropicModel, "anthropic-model", "ASSAY_ANTHROPIC_MODEL", "", "Anthropic model (empty: the provider's default)")
	f.str(&c.AnthropicBaseURL, "anthropic-base-url", "ASSAY_ANTHROPIC_BASE_URL", "", "Anthropic API base URL (empty: https://api.anthropic.com)")
	f.boolean(&c.OpenAISendBlocked, "openai-send-blocked-domains", "ASSAY_OPENAI_SEND_BLOCKED_DOMAINS", false, "also send blocked domains to OpenAI's search tool (they are always enforced locally)")
	f.boolean(&c.ClaimsResultCache, "claims-result-cache", "ASSAY_CLAIMS_RESULT_CACHE", false, "answer identical requests within their freshness window from stored results (cacheHit: true)")
	f.dur(&c.ClaimsTimeout, "claims-timeout", "ASSAY_CLAIMS_TIMEOUT", 120*time.Second, "deadline of one verification")
	f.tiers(&c.NoVerdictNoCharge, "claims-no-verdict-no-charge", "ASSAY_CLAIMS_NO_VERDICT_NO_CHARGE",
		"no verdict, no charge: an insufficient_evidence verdict is delivered free (payment voided, order and receipt say so); true or all: every tier, or a comma-separated list of tiers (quick,standard); false: every verdict is charged")
	f.int64(&c.FreeVerdicts, "claims-free-verdicts-per-day", "ASSAY_CLAIMS_FREE_VERDICTS_PER_DAY", sell.DefaultFreeVerdictsPerDay,
		"with -claims-no-verdict-no-charge: free insufficient_evidence verdicts per payer per UTC day; beyond it they are charged")
	f.str(&c.ClaimsPrefix, "claims-prefix", "ASSAY_CLAIMS_PREFIX", "/claim-verification", "service prefix of the claim-verification and snapshot routes (also MCP, A2A and discovery documents)")
	f.str(&c.ClaimsServiceSlug, "claims-service-slug", "ASSAY_CLAIMS_SERVICE_SLUG", "claim-verification", "{service_slug} of the legacy /v1/services/{service_slug}/claims/verify... aliases")

	f.str(&c.SnapshotBlobs, "snapshot-blobs", "ASSAY_SNAPSHOT_BLOBS", "", "where snapshot content is kept: files (under -data), db, or s3 (an S3-compatible object store: -s3-bucket; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or the AWS default chain); empty: db with PostgreSQL, files otherwise")
	f.str(&c.S3Bucket, "s3-bucket", "ASSAY_S3_BUCKET", "", "bucket of snapshot content with -snapshot-blobs s3 (it must exist)")
	f.str(&c.S3Prefix, "s3-prefix", "ASSAY_S3_PREFIX", "snapshots/", "key prefix of snapshot content in -s3-bucket")
	f.str(&c.S3Endpoint, "s3-endpoint", "ASSAY_S3_ENDPOINT", "", "URL of an S3-compatible server (path-style), e.g. http://127.0.0.1:7070; empty: AWS S3 (or AWS_ENDPOINT_URL_S3)")
	f.str(&c.S3Region, "s3-region", "ASSAY_S3_REGION", "", "region of -s3-bucket; empty: AWS_REGION, else us-east-1")
	f.int64(&c.SnapshotMaxBytes, "snapshot-max-bytes", "ASSAY_SNAPSHOT_MAX_BYTES", 5_000_000, "largest captured body (too_large above)")
	f.dur(&c.SnapshotTimeout, "snapshot-timeout", "ASSAY_SNAPSHOT_TIMEOUT", 15*time.Second, "time limit of one capture")
	f.dur(&c.SnapshotRetention, "snapshot-retention", "ASSAY_SNAPSHOT_RETENTION", 30*24*time.Hour, "how long snapshots are kept")
	f.str(&c.TSAURL, "tsa-url", "ASSAY_TSA_URL", "", "RFC 3161 time-stamping authority that timestamps every evidence bundle's signature (empty: none; the signing time is then our word)")
	f.ints(&c.SnapshotPorts, "snapshot-ports", "ASSAY_SNAPSHOT_PORTS", "80,443", "ports snapshots may connect to")

	f.boolean(&c.NicheDemo, "niche-demo", "ASSAY_NICHE_DEMO", true, "load the demo niche catalogue at start")
	f.str(&c.NicheImport, "niche-import", "ASSAY_NICHE_IMPORT", "", "import this JSON Lines catalogue (signals and drafts, niche.Engine.Import) at start, before serving; resumable: what is stored is not imported twice; a bad line stops the start, naming it")
	var free int64
	f.int64(&free, "niche-free-searches", "ASSAY_NICHE_FREE_SEARCHES", 3, "free text searches (/v1/search, /v1/niches?q=) per caller and UTC day; 0: none, -1: unlimited")
	f.int64(&c.NicheSearchPrice, "niche-search-price", "ASSAY_NICHE_SEARCH_PRICE", sell.DefaultNicheSearch, "price of GET /v1/search/pay-per-call in micro-USD")
	f.int64(&c.NicheEvalPrice, "niche-evaluation-price", "ASSAY_NICHE_EVALUATION_PRICE", sell.DefaultNicheEvalPrice, "price of one full niche evaluation (pay-per-call, MCP get_niche full) in micro-USD")
	c.ClaimsPrices = map[string]*int64{}
	for _, d := range sell.DefaultPrices().Tiers() {
		v := new(int64)
		c.ClaimsPrices[d.Tier] = v
		f.int64(v, "claims-"+d.Tier+"-price", "ASSAY_CLAIMS_"+strings.ToUpper(d.Tier)+"_PRICE", d.MicroUSD, "price of one verification of the "+d.Tier+" tier in micro-USD (USDC)")
	}
	f.int64(&c.ClaimsCardPrice, "claims-card-price", "ASSAY_CLAIMS_CARD_PRICE", sell.DefaultClaimsCard, "card (MPP stripe) price of every claim tier in micro-USD; at least 500000 (Stripe's minimum)")
	f.str(&c.NichePrefix, "niche-prefix", "ASSAY_NICHE_PREFIX", "/niche-discovery", "service prefix of the niche routes")
	f.dur(&c.NicheUnlockTTL, "niche-unlock-ttl", "ASSAY_NICHE_UNLOCK_TTL", 15*time.Minute, "validity of an x-niche-paid-call token")
	f.dur(&c.NicheSearchCache, "niche-search-cache", "ASSAY_NICHE_SEARCH_CACHE", 5*time.Second, "how long niche list/search results are reused (0: off); this instance's writes clear them at once, other instances' show within this time")
	f.str(&c.TrustedProxies, "trusted-proxies", "ASSAY_TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed (free-search quotas)")

	f.boolean(&c.Discovery, "discovery", "ASSAY_DISCOVERY", true, "serve the index (GET /), openapi.json and the .well-known discovery documents")
	f.boolean(&c.Pages, "pages", "ASSAY_PAGES", true, "serve the pages for people: landing page, catalogue, sign-in, verification pages")
	f.str(&c.ProviderName, "provider-name", "ASSAY_PROVIDER_NAME", "", "operator name in discovery documents (empty: assay)")
	f.str(&c.ProviderEmail, "provider-email", "ASSAY_PROVIDER_EMAIL", "", "operator contact e-mail in discovery documents")
	f.str(&c.ProviderURL, "provider-url", "ASSAY_PROVIDER_URL", "", "operator web site in discovery documents")
	f.str(&c.HomepageURL, "homepage-url", "ASSAY_HOMEPAGE_URL", "", "service homepage in discovery documents")
	f.str(&c.TermsURL, "terms-url", "ASSAY_TERMS_URL", "", "terms of service URL in discovery documents")
	f.str(&c.PrivacyURL, "privacy-url", "ASSAY_PRIVACY_URL", "", "privacy policy URL in discovery documents")

	f.boolean(&c.MCPNoLocalhostProtection, "mcp-disable-localhost-protection", "ASSAY_MCP_DISABLE_LOCALHOST_PROTECTION", false, "accept MCP requests whose Host is not loopback on a loopback listener (behind a reverse proxy on the same host)")
	f.str(&c.MCPTrustedOrigins, "mcp-trusted-origins", "ASSAY_MCP_TRUSTED_ORIGINS", "", "comma-separated browser origins allowed to call the MCP endpoint")

	f.dur(&c.PurgeInterval, "purge-interval", "ASSAY_PURGE_INTERVAL", time.Hour, "how often expired verifications and snapshots are purged")

	f.str(&c.PayTo, "payee", "ASSAY_PAYEE_ADDRESS", "", "USDC payee address (0x...), x402 payTo and MPP recipient; required outside dev mode")
	f.str(&c.Network, "network", "ASSAY_NETWORK", "eip155:8453", "USDC network: eip155:8453 (Base) or eip155:84532 (Base Sepolia)")
	f.str(&c.FacilitatorURL, "facilitator-url", "ASSAY_FACILITATOR_URL", "", "x402 facilitator base URL (settles x402 and MPP evm payments); empty: dev mode, allowed only without a payee and a non-loopback public base URL, or with -dev-mode")
	f.str(&c.MPPRealm, "mpp-realm", "ASSAY_MPP_REALM", "", "MPP realm (empty: host of the public base URL)")
	f.str(&c.ChainRPCURL, "chain-rpc-url", "ASSAY_CHAIN_RPC_URL", "", "Ethereum JSON-RPC endpoint of the network (optional): settlements whose outcome is unknown are checked on the chain (authorizationState, receipts) instead of resting on the facilitator alone")
	f.dur(&c.FacilitatorTimeout, "facilitator-timeout", "ASSAY_FACILITATOR_TIMEOUT", 10*time.Second, "time limit of one facilitator /verify or /supported attempt")
	f.dur(&c.SettleTimeout, "settle-timeout", "ASSAY_SETTLE_TIMEOUT", 60*time.Second, "time limit of one facilitator /settle call; past it the outcome is unknown and the order stays settling until it is resolved")
	f.dur(&c.ResolveEvery, "resolve-every", "ASSAY_RESOLVE_EVERY", 10*time.Second, "how often every instance resolves settlements whose outcome is unknown; an order's attempts back off from this period, doubling, to at most 6 periods")
	f.optBoolean(&c.DevMode, "dev-mode", "ASSAY_DEV_MODE", "payments in DEV MODE: signatures verified, nothing settled on-chain (unset: dev mode only when nothing of a production set-up is configured)")

	p := &problems{invalid: map[string]bool{}}
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.SetOutput(out)
		fmt.Fprintln(out, "Usage of server (every flag also reads the environment variable named in its help):")
		f.PrintDefaults()
		fmt.Fprint(out, envOnlyHelp)
		return nil, flag.ErrHelp
	}
	if err != nil {
		// An unknown flag or a flag without its value: the flags after it
		// were not read.
		p.errs = append(p.errs, err)
	} else if f.NArg() > 0 {
		p.errs = append(p.errs, fmt.Errorf("unexpected arguments %q: every setting is a -flag", f.Args()))
	}
	for _, name := range f.order {
		if e := f.errs[name]; e != nil {
			p.add(name, f.env[name], "%v", e)
			p.invalid[name] = true
		}
	}
	c.NicheFreeSearches = int(free)
	c.AdminKey = getenv("ASSAY_ADMIN_KEY")
	c.S3AccessKey, c.S3SecretKey, c.S3SessionToken = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
	c.OpenAIKey = getenv("OPENAI_API_KEY")
	c.AnthropicKey = getenv("ANTHROPIC_API_KEY")
	c.FacilitatorAuth = getenv("ASSAY_FACILITATOR_AUTH")
	c.MPPSecret = getenv("ASSAY_MPP_SECRET")
	c.ReceiptKey = getenv("ASSAY_RECEIPT_KEY")
	c.BundleKey = getenv("ASSAY_BUNDLE_KEY")
	c.StripeKey = getenv("ASSAY_STRIPE_SECRET_KEY")
	c.StripeProfile = getenv("ASSAY_STRIPE_PROFILE_ID")
	c.StripePrice = getenv("ASSAY_STRIPE_PRICE_ID")
	c.StripeWebhookSecret = getenv("ASSAY_STRIPE_WEBHOOK_SECRET")
	for _, v := range []struct {
		name string
		dst  *int64
	}{
		{"ASSAY_COST_INPUT_PER_MTOK", &c.Costs.InputPerMillion},
		{"ASSAY_COST_CACHED_INPUT_PER_MTOK", &c.Costs.CachedInputPerMillion},
		{"ASSAY_COST_OUTPUT_PER_MTOK", &c.Costs.OutputPerMillion},
		{"ASSAY_COST_PER_SEARCH_CALL", &c.Costs.PerSearchCall},
	} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				p.add("", v.name, "invalid micro-USD amount %q (a whole number, 0 or more)", s)
			}
			*v.dst = n
		}
	}
	c.validate(p)
	if len(p.errs) > 0 {
		return nil, &ConfigError{Problems: p.errs}
	}
	return c, nil
}

// providers resolves -provider to the live search providers in order:
// "auto" is OpenAI when its key is set, else Anthropic when its key is set,
// else none (the offline corpus); "corpus" is none; otherwise the
// comma-separated list as given.
func (c *config) providers() []string {
	switch strings.TrimSpace(c.Provider) {
	case "auto":
		switch {
		case c.OpenAIKey != "":
			return []string{"openai"}
		case c.AnthropicKey != "":
			return []string{"anthropic"}
		}
		return nil
	case "corpus", "":
		return nil
	}
	var out []string
	for _, name := range strings.Split(c.Provider, ",") {
		out = append(out, strings.TrimSpace(name))
	}
	return out
}
