package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parse runs parseConfig with args and env.
func parse(args []string, env map[string]string) (*config, error) {
	return parseConfig(args, func(k string) string { return env[k] }, io.Discard)
}

// TestConfigValidation: every value is checked after parsing, whether it
// came from a flag, a variable or a default, with an error naming both.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // substrings of the error; nil: accepted
	}{
		{"defaults", nil, nil, nil},
		{"purge interval 0 (flag)", []string{"-purge-interval", "0"}, nil, []string{"-purge-interval (ASSAY_PURGE_INTERVAL): must be positive, got 0s"}},
		{"purge interval negative (flag)", []string{"-purge-interval", "-1s"}, nil, []string{"-purge-interval", "must be positive, got -1s"}},
		{"purge interval 0 (env)", nil, map[string]string{"ASSAY_PURGE_INTERVAL": "0s"}, []string{"-purge-interval (ASSAY_PURGE_INTERVAL): must be positive"}},
		{"purge interval negative (env)", nil, map[string]string{"ASSAY_PURGE_INTERVAL": "-5m"}, []string{"must be positive, got -5m0s"}},
		{"niche free searches -2", []string{"-niche-free-searches", "-2"}, nil, []string{"-niche-free-searches (ASSAY_NICHE_FREE_SEARCHES): must be at least -1, got -2"}},
		{"niche free searches -1 (unlimited)", []string{"-niche-free-searches", "-1"}, nil, nil},
		{"niche free searches 0 (none)", []string{"-niche-free-searches", "0"}, nil, nil},
		{"niche free searches 5", []string{"-niche-free-searches", "5"}, nil, nil},
		{"snapshot max bytes -1", []string{"-snapshot-max-bytes", "-1"}, nil, []string{"-snapshot-max-bytes (ASSAY_SNAPSHOT_MAX_BYTES): must be at least 1, got -1"}},
		{"snapshot max bytes env -1", nil, map[string]string{"ASSAY_SNAPSHOT_MAX_BYTES": "-1"}, []string{"-snapshot-max-bytes"}},
		{"claims timeout -1s", []string{"-claims-timeout", "-1s"}, nil, []string{"-claims-timeout (ASSAY_CLAIMS_TIMEOUT): must be positive, got -1s"}},
		{"max body 0", []string{"-max-body", "0"}, nil, []string{"-max-body (ASSAY_MAX_BODY_BYTES): must be at least 1"}},
		{"niche price 0", []string{"-niche-search-price", "0"}, nil, []string{"-niche-search-price"}},
		{"read timeout 0", []string{"-read-timeout", "0"}, nil, []string{"-read-timeout"}},
		{"shutdown wait 0", []string{"-shutdown-wait", "0"}, nil, []string{"-shutdown-wait"}},
		{"snapshot timeout -1s", []string{"-snapshot-timeout", "-1s"}, nil, []string{"-snapshot-timeout"}},
		{"snapshot retention 0", []string{"-snapshot-retention", "0"}, nil, []string{"-snapshot-retention"}},
		{"unlock ttl 0", []string{"-niche-unlock-ttl", "0"}, nil, []string{"-niche-unlock-ttl"}},
		{"search cache 0 is off", []string{"-niche-search-cache", "0"}, nil, nil},
		{"search cache negative", []string{"-niche-search-cache", "-1s"}, nil, []string{"-niche-search-cache (ASSAY_NICHE_SEARCH_CACHE): must not be negative"}},
		{"env syntax", nil, map[string]string{"ASSAY_CLAIMS_TIMEOUT": "soon"}, []string{`-claims-timeout (ASSAY_CLAIMS_TIMEOUT): invalid duration "soon"`}},
		{"flag syntax", []string{"-claims-timeout", "soon"}, nil, []string{`-claims-timeout (ASSAY_CLAIMS_TIMEOUT): invalid duration "soon"`}},
		{"flag fixes a bad variable", []string{"-claims-timeout", "60s", "-write-timeout", "90s"}, map[string]string{"ASSAY_CLAIMS_TIMEOUT": "soon"}, nil},
		{"bad flag, good variable", []string{"-max-body", "lots"}, map[string]string{"ASSAY_MAX_BODY_BYTES": "1000"}, []string{`-max-body (ASSAY_MAX_BODY_BYTES): invalid number "lots"`}},
		{"log level", []string{"-log-level", "loud"}, nil, []string{`-log-level (ASSAY_LOG_LEVEL): "loud" is not debug, info, warn or error`}},
		{"log format", nil, map[string]string{"ASSAY_LOG_FORMAT": "xml"}, []string{`-log-format (ASSAY_LOG_FORMAT): "xml" is neither text nor json`}},
		{"network", []string{"-network", "foo"}, nil, []string{`-network (ASSAY_NETWORK): "foo" is not eip155:8453`}},
		{"network by chain id", []string{"-network", "84532"}, nil, nil},
		{"payee", []string{"-payee", "0xabc", "-dev-mode"}, nil, []string{`-payee (ASSAY_PAYEE_ADDRESS): "0xabc" is not an address`}},
		{"addr", []string{"-addr", "8080"}, nil, []string{`-addr (ASSAY_ADDR): "8080" is not a listen address`}},
		{"addr any port", []string{"-addr", "127.0.0.1:"}, nil, nil},
		{"tsa url", []string{"-tsa-url", "tsa.example"}, nil, []string{`-tsa-url (ASSAY_TSA_URL): "tsa.example" is not an absolute http(s) URL`}},
		{"tsa url accepted", nil, map[string]string{"ASSAY_TSA_URL": "https://tsa.example/tsr"}, nil},
		{"bundle key", nil, map[string]string{"ASSAY_BUNDLE_KEY": "ed25519:abc"}, []string{"ASSAY_BUNDLE_KEY", "unknown key type"}},
		{"metrics addr is addr", []string{"-addr", "127.0.0.1:8080", "-metrics-addr", "127.0.0.1:8080"}, nil, []string{"-metrics-addr (ASSAY_METRICS_ADDR)"}},
		{"postgres", []string{"-postgres", "db.internal:5432"}, nil, []string{"-postgres (ASSAY_POSTGRES_URL)"}},
		{"boolean variable", nil, map[string]string{"ASSAY_NICHE_DEMO": "yes please"}, []string{`-niche-demo (ASSAY_NICHE_DEMO): invalid boolean "yes please"`}},
		{"ports", []string{"-snapshot-ports", "80,99999"}, nil, []string{`-snapshot-ports (ASSAY_SNAPSHOT_PORTS): invalid port "99999"`}},
		{"trusted proxies", nil, map[string]string{"ASSAY_TRUSTED_PROXIES": "10.0.0.0/8, 10.1.2.3"}, []string{`-trusted-proxies (ASSAY_TRUSTED_PROXIES): "10.1.2.3" is not a CIDR`}},
		{"openai without key", []string{"-provider", "openai"}, nil, []string{"-provider (ASSAY_PROVIDER): openai needs OPENAI_API_KEY"}},
		{"openai with key", []string{"-provider", "openai"}, map[string]string{"OPENAI_API_KEY": "sk-test"}, nil},
		{"anthropic without key", []string{"-provider", "anthropic"}, nil, []string{"-provider (ASSAY_PROVIDER): anthropic needs ANTHROPIC_API_KEY"}},
		{"anthropic with key", []string{"-provider", "anthropic", "-anthropic-model", "claude-haiku-5-5"}, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}, nil},
		{"both with keys", []string{"-provider", "openai, anthropic"}, map[string]string{"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}, nil},
		{"both, one key", []string{"-provider", "openai,anthropic"}, map[string]string{"OPENAI_API_KEY": "sk-test"}, []string{"anthropic needs ANTHROPIC_API_KEY"}},
		{"provider twice", []string{"-provider", "openai,openai"}, map[string]string{"OPENAI_API_KEY": "sk-test"}, []string{`"openai" is listed twice`}},
		{"unknown provider", []string{"-provider", "openai,bing"}, map[string]string{"OPENAI_API_KEY": "sk-test"}, []string{"is not auto, corpus, or a comma-separated list"}},
		{"anthropic base URL", nil, map[string]string{"ASSAY_ANTHROPIC_BASE_URL": "api.anthropic.com"}, []string{"-anthropic-base-url (ASSAY_ANTHROPIC_BASE_URL)"}},
		{"openai effort", []string{"-openai-reasoning-effort", "extreme"}, nil, []string{"-openai-reasoning-effort (ASSAY_OPENAI_REASONING_EFFORT)"}},
		{"openai base URL", nil, map[string]string{"ASSAY_OPENAI_BASE_URL": "api.openai.com"}, []string{"-openai-base-url (ASSAY_OPENAI_BASE_URL)"}},
		{"corpus dir", []string{"-corpus-dir", "/nonexistent/assay-corpus"}, nil, []string{"-corpus-dir (ASSAY_CORPUS_DIR)"}},
		{"MPP secret short", nil, map[string]string{"ASSAY_MPP_SECRET": "short"}, []string{"ASSAY_MPP_SECRET: must be at least 32 bytes, has 5"}},
		{"facilitator auth", nil, map[string]string{"ASSAY_FACILITATOR_AUTH": "Bearer xyz"}, []string{`ASSAY_FACILITATOR_AUTH: not one header line "Name: value"`}},
		{"receipt key", nil, map[string]string{"ASSAY_RECEIPT_KEY": "ed25519:short"}, []string{"ASSAY_RECEIPT_KEY: "}},
		{"cost", nil, map[string]string{"ASSAY_COST_PER_SEARCH_CALL": "-3"}, []string{`ASSAY_COST_PER_SEARCH_CALL: invalid micro-USD amount "-3"`}},
		{"stripe profile without key", nil, map[string]string{"ASSAY_STRIPE_PROFILE_ID": "profile_1"}, []string{"ASSAY_STRIPE_PROFILE_ID: set without ASSAY_STRIPE_SECRET_KEY"}},
		{"partial subscriptions", nil, map[string]string{"ASSAY_STRIPE_PRICE_ID": "price_1"}, []string{"missing: ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_WEBHOOK_SECRET"}},
		{"unknown flag", []string{"-prot", "1"}, nil, []string{"flag provided but not defined: -prot"}},
		{"positional argument", []string{"serve"}, nil, []string{`unexpected arguments ["serve"]`}},
		{"provider", []string{"-provider", "bing"}, nil, []string{"-provider"}},
		{"snapshot blobs", []string{"-snapshot-blobs", "s4"}, nil, []string{"-snapshot-blobs (ASSAY_SNAPSHOT_BLOBS): \"s4\" is not files, db or s3"}},
		{"s3 without bucket", []string{"-snapshot-blobs", "s3"}, nil, []string{"-s3-bucket (ASSAY_S3_BUCKET): required with -snapshot-blobs s3"}},
		{"s3 endpoint", []string{"-snapshot-blobs", "s3", "-s3-bucket", "b", "-s3-endpoint", "127.0.0.1:7070"}, nil, []string{"-s3-endpoint (ASSAY_S3_ENDPOINT)"}},
		{"s3", []string{"-snapshot-blobs", "s3", "-s3-bucket", "b", "-s3-endpoint", "http://127.0.0.1:7070"}, nil, nil},
		{"write timeout below claims timeout", []string{"-write-timeout", "100s"}, nil, []string{"-write-timeout (ASSAY_WRITE_TIMEOUT): 1m40s must be at least -claims-timeout (2m0s) plus 15s for the checks"}},
		{"write timeout without margin", []string{"-write-timeout", "125s"}, nil, []string{"-write-timeout"}},
		{"write timeout with margin", []string{"-write-timeout", "45s", "-claims-timeout", "20s"}, nil, nil},
		{"write timeout without the check grace", []string{"-write-timeout", "44s", "-claims-timeout", "20s"}, nil, []string{"-write-timeout"}},
		{"claims prefix empty", []string{"-claims-prefix", ""}, nil, []string{"-claims-prefix (ASSAY_CLAIMS_PREFIX)"}},
		{"claims prefix root", []string{"-claims-prefix", "/"}, nil, []string{"-claims-prefix"}},
		{"claims prefix relative", []string{"-claims-prefix", "cv"}, nil, []string{"-claims-prefix"}},
		{"niche prefix relative", nil, map[string]string{"ASSAY_NICHE_PREFIX": "nd"}, []string{"-niche-prefix (ASSAY_NICHE_PREFIX)"}},
		{"slug with slash", []string{"-claims-service-slug", "a/b"}, nil, []string{"-claims-service-slug"}},
		{"public base URL not http", []string{"-public-base-url", "ftp://x", "-dev-mode"}, nil, []string{"-public-base-url"}},
		{"several at once", []string{"-purge-interval", "0", "-max-body", "-3"}, nil, []string{"-purge-interval", "-max-body"}},
		{"no verdict no charge: unknown tier", []string{"-claims-no-verdict-no-charge=quick,fast"}, nil, []string{`-claims-no-verdict-no-charge (ASSAY_CLAIMS_NO_VERDICT_NO_CHARGE): unknown claim tier "fast"`}},
		{"free verdicts 0", []string{"-claims-free-verdicts-per-day", "0"}, nil, []string{"-claims-free-verdicts-per-day (ASSAY_CLAIMS_FREE_VERDICTS_PER_DAY): must be at least 1, got 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.args, tc.env)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestShutdownShorterThanVerificationWarns(t *testing.T) {
	t.Parallel()
	c, err := parse([]string{"-shutdown-wait", "60s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "-shutdown-wait (1m0s) is shorter than -claims-timeout (2m0s)") {
		t.Fatalf("warnings: %q", c.warnings)
	}
	if c, _ := parse(nil, nil); len(c.warnings) != 0 {
		t.Fatalf("defaults warn: %q", c.warnings)
	}
}

// prodEnv is a complete production payment configuration, with extra
// variables set and the named ones removed.
func prodEnv(extra map[string]string, drop ...string) map[string]string {
	env := map[string]string{
		"ASSAY_FACILITATOR_URL": "http://127.0.0.1:1", "ASSAY_PAYEE_ADDRESS": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		"ASSAY_MPP_SECRET": strings.Repeat("s", 32), "ASSAY_PUBLIC_BASE_URL": "https://api.example.com",
	}
	for _, k := range drop {
		delete(env, k)
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// TestPaymentMode: dev mode only on a machine with nothing of a production
// set-up, or when asked for; a production set-up without a facilitator
// refuses to start.
func TestPaymentMode(t *testing.T) {
	t.Parallel()
	const payee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		dev     bool
		wantErr string
	}{
		{"fresh machine", nil, nil, true, ""},
		{"loopback public base", nil, map[string]string{"ASSAY_PUBLIC_BASE_URL": "http://127.0.0.1:8080"}, true, ""},
		{"localhost public base", []string{"-public-base-url", "http://localhost:8080"}, nil, true, ""},
		{"payee without facilitator", nil, map[string]string{"ASSAY_PAYEE_ADDRESS": payee}, false, "-facilitator-url (ASSAY_FACILITATOR_URL): not set, but a payee or a non-loopback public base URL is"},
		{"payee flag without facilitator", []string{"-payee", payee}, nil, false, "ASSAY_DEV_MODE=true"},
		{"public base without facilitator", nil, map[string]string{"ASSAY_PUBLIC_BASE_URL": "https://api.example.com"}, false, "-facilitator-url"},
		{"payee in explicit dev mode (env)", nil, map[string]string{"ASSAY_PAYEE_ADDRESS": payee, "ASSAY_DEV_MODE": "true"}, true, ""},
		{"public base in explicit dev mode (flag)", []string{"-dev-mode", "-public-base-url", "https://staging.example.com"}, nil, true, ""},
		{"facilitator", nil, prodEnv(nil), false, ""},
		{"facilitator flag", []string{"-facilitator-url", "http://127.0.0.1:1"}, prodEnv(nil, "ASSAY_FACILITATOR_URL"), false, ""},
		{"facilitator without payee", nil, prodEnv(nil, "ASSAY_PAYEE_ADDRESS"), false, "-payee (ASSAY_PAYEE_ADDRESS): required in production"},
		{"facilitator without MPP secret", nil, prodEnv(nil, "ASSAY_MPP_SECRET"), false, "ASSAY_MPP_SECRET: required in production"},
		{"facilitator without public base", nil, prodEnv(nil, "ASSAY_PUBLIC_BASE_URL"), false, "-public-base-url (ASSAY_PUBLIC_BASE_URL): required in production"},
		{"facilitator with a realm", nil, prodEnv(map[string]string{"ASSAY_MPP_REALM": "api.example.com"}, "ASSAY_PUBLIC_BASE_URL"), false, ""},
		{"dev mode and facilitator", []string{"-dev-mode", "-facilitator-url", "http://127.0.0.1:1"}, nil, false, "dev mode contradicts -facilitator-url"},
		{"dev mode off without facilitator", nil, map[string]string{"ASSAY_DEV_MODE": "false"}, false, "required when dev mode is off"},
		{"dev mode off with facilitator", []string{"-dev-mode=false", "-facilitator-url", "http://127.0.0.1:1"}, prodEnv(nil, "ASSAY_FACILITATOR_URL"), false, ""},
		{"flag wins over variable", []string{"-dev-mode=false"}, prodEnv(map[string]string{"ASSAY_DEV_MODE": "true"}), false, ""},
		{"bad variable", nil, map[string]string{"ASSAY_DEV_MODE": "maybe"}, false, `-dev-mode (ASSAY_DEV_MODE): invalid boolean "maybe"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(tc.args, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Dev != tc.dev {
				t.Fatalf("dev mode %t, want %t", c.Dev, tc.dev)
			}
		})
	}
}

// TestPaymentSettingsByFlag: payee, network, facilitator URL and realm are
// not secrets: flags set them, and win over the variables.
func TestPaymentSettingsByFlag(t *testing.T) {
	t.Parallel()
	type got struct{ PayTo, Network, Facilitator, Realm string }
	read := func(c *config) got { return got{c.PayTo, c.Network, c.FacilitatorURL, c.MPPRealm} }
	const flagPayee, envPayee = "0x00000000000000000000000000000000000000aa", "0x00000000000000000000000000000000000000bb"
	secret := map[string]string{"ASSAY_MPP_SECRET": strings.Repeat("s", 32)}
	c, err := parse([]string{"-payee", flagPayee, "-network", "eip155:84532", "-facilitator-url", "https://f.example", "-mpp-realm", "api.example.com"},
		map[string]string{"ASSAY_PAYEE_ADDRESS": envPayee, "ASSAY_FACILITATOR_URL": "https://env.example", "ASSAY_MPP_SECRET": secret["ASSAY_MPP_SECRET"]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got{flagPayee, "eip155:84532", "https://f.example", "api.example.com"}, read(c)); diff != "" {
		t.Fatalf("flags (-want +got):\n%s", diff)
	}
	c, err = parse(nil, map[string]string{"ASSAY_PAYEE_ADDRESS": envPayee, "ASSAY_NETWORK": "eip155:84532",
		"ASSAY_FACILITATOR_URL": "https://env.example", "ASSAY_MPP_REALM": "r.example", "ASSAY_MPP_SECRET": secret["ASSAY_MPP_SECRET"]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got{envPayee, "eip155:84532", "https://env.example", "r.example"}, read(c)); diff != "" {
		t.Fatalf("variables (-want +got):\n%s", diff)
	}
	if c, _ := parse(nil, nil); c.Network != "eip155:8453" || c.ClaimsPrefix != "/claim-verification" || c.ClaimsServiceSlug != "claim-verification" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestProvidersResolution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider, openai, anthropic string
		want                        []string
	}{
		{"auto", "", "", nil},
		{"auto", "sk", "", []string{"openai"}},
		{"auto", "", "sk-ant", []string{"anthropic"}},
		{"auto", "sk", "sk-ant", []string{"openai"}}, // corroboration is asked for, never implied
		{"corpus", "sk", "sk-ant", nil},
		{"anthropic", "", "sk-ant", []string{"anthropic"}},
		{" anthropic , openai", "sk", "sk-ant", []string{"anthropic", "openai"}},
	}
	for _, tc := range tests {
		c := &config{Provider: tc.provider, OpenAIKey: tc.openai, AnthropicKey: tc.anthropic}
		if got := c.providers(); !slices.Equal(got, tc.want) {
			t.Errorf("providers(%q) = %q, want %q", tc.provider, got, tc.want)
		}
	}
}

// -claims-no-verdict-no-charge: off by default; bare or true means every
// tier; a list names tiers; the variable sets it too.
func TestNoVerdictNoChargeSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, ""},
		{[]string{"-claims-no-verdict-no-charge"}, nil, "quick,standard,deep,research"},
		{[]string{"-claims-no-verdict-no-charge=false"}, map[string]string{"ASSAY_CLAIMS_NO_VERDICT_NO_CHARGE": "all"}, ""},
		{nil, map[string]string{"ASSAY_CLAIMS_NO_VERDICT_NO_CHARGE": "true"}, "quick,standard,deep,research"},
		{[]string{"-claims-no-verdict-no-charge=quick, deep"}, nil, "quick,deep"},
	} {
		c, err := parse(tc.args, tc.env)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		if got := strings.Join(c.NoVerdictNoCharge, ","); got != tc.want || c.FreeVerdicts != 5 {
			t.Errorf("%v %v: tiers %q, free %d; want %q, 5", tc.args, tc.env, got, c.FreeVerdicts, tc.want)
		}
	}
}
