package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	LogLevel      string
	LogFormat     string
	MaxBodyBytes  int64
	ReadTimeout   time.Duration
	WriteTimeout  time.Duration
	ShutdownWait  time.Duration

	// Secrets, from the environment only.
	AdminKey  string
	OpenAIKey string

	// Claims.
	Provider          string
	CorpusDir         string
	OpenAIModel       string
	OpenAIBaseURL     string
	OpenAIEffort      string
	OpenAISendBlocked bool
	ClaimsResultCache bool
	ClaimsTimeout     time.Duration

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
		if err != nil || parsed < 0 {
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
		if err != nil || parsed < 0 {
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
  ASSAY_PAYEE_ADDRESS            USDC payee (0x...); required outside dev mode
  ASSAY_NETWORK                  eip155:8453 (Base, default) or eip155:84532 (Base Sepolia)
  ASSAY_FACILITATOR_URL          x402 facilitator; empty: DEV MODE (signatures verified, nothing settled)
  ASSAY_FACILITATOR_AUTH         header sent to the facilitator, "Name: value"
  ASSAY_MPP_SECRET               MPP challenge-binding secret, at least 32 bytes (required outside dev mode)
  ASSAY_MPP_REALM                MPP realm (default: host of the public base URL)
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
	f.str(&c.LogLevel, "log-level", "ASSAY_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	f.str(&c.LogFormat, "log-format", "ASSAY_LOG_FORMAT", "text", "log format: text or json")
	f.int64(&c.MaxBodyBytes, "max-body", "ASSAY_MAX_BODY_BYTES", 1<<20, "largest request body in bytes (413 above)")
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
	f.int64(&free, "niche-free-searches", "ASSAY_NICHE_FREE_SEARCHES", 3, "free GET /v1/search lookups per caller and UTC day")
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

	if err := f.Parse(args); err != nil {
		return nil, err
	}
	if len(f.errs) > 0 {
		return nil, f.errs[0]
	}
	c.NicheFreeSearches = int(free)
	if c.NicheSearchPrice <= 0 {
		return nil, fmt.Errorf("niche search price must be positive")
	}
	c.AdminKey = getenv("ASSAY_ADMIN_KEY")
	c.OpenAIKey = getenv("OPENAI_API_KEY")
	if c.MaxBodyBytes <= 0 {
		return nil, fmt.Errorf("max body bytes must be positive")
	}
	switch c.Provider {
	case "auto", "openai", "corpus":
	default:
		return nil, fmt.Errorf("provider: %q is not auto, openai or corpus", c.Provider)
	}
	switch c.SnapshotBlobs {
	case "", "files", "db":
	default:
		return nil, fmt.Errorf("snapshot blobs: %q is neither files nor db", c.SnapshotBlobs)
	}
	return c, nil
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
