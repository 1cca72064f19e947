package main

import (
	"io"
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
		{"env syntax", nil, map[string]string{"ASSAY_CLAIMS_TIMEOUT": "soon"}, []string{`ASSAY_CLAIMS_TIMEOUT: invalid duration "soon"`}},
		{"provider", []string{"-provider", "bing"}, nil, []string{"-provider"}},
		{"snapshot blobs", []string{"-snapshot-blobs", "s3"}, nil, []string{"-snapshot-blobs"}},
		{"write timeout below claims timeout", []string{"-write-timeout", "100s"}, nil, []string{"-write-timeout (ASSAY_WRITE_TIMEOUT): 1m40s must be at least -claims-timeout (2m0s) plus 10s"}},
		{"write timeout without margin", []string{"-write-timeout", "125s"}, nil, []string{"-write-timeout"}},
		{"write timeout with margin", []string{"-write-timeout", "30s", "-claims-timeout", "20s"}, nil, nil},
		{"claims prefix empty", []string{"-claims-prefix", ""}, nil, []string{"-claims-prefix (ASSAY_CLAIMS_PREFIX)"}},
		{"claims prefix root", []string{"-claims-prefix", "/"}, nil, []string{"-claims-prefix"}},
		{"claims prefix relative", []string{"-claims-prefix", "cv"}, nil, []string{"-claims-prefix"}},
		{"niche prefix relative", nil, map[string]string{"ASSAY_NICHE_PREFIX": "nd"}, []string{"-niche-prefix (ASSAY_NICHE_PREFIX)"}},
		{"slug with slash", []string{"-claims-service-slug", "a/b"}, nil, []string{"-claims-service-slug"}},
		{"public base URL not http", []string{"-public-base-url", "ftp://x", "-dev-mode"}, nil, []string{"-public-base-url"}},
		{"several at once", []string{"-purge-interval", "0", "-max-body", "-3"}, nil, []string{"-purge-interval", "-max-body"}},
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

// TestPaymentMode: dev mode only on a machine with nothing of a production
// set-up, or when asked for; a production set-up without a facilitator
// refuses to start.
func TestPaymentMode(t *testing.T) {
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
		{"facilitator", nil, map[string]string{"ASSAY_FACILITATOR_URL": "http://127.0.0.1:1"}, false, ""},
		{"facilitator flag", []string{"-facilitator-url", "http://127.0.0.1:1"}, nil, false, ""},
		{"dev mode and facilitator", []string{"-dev-mode", "-facilitator-url", "http://127.0.0.1:1"}, nil, false, "dev mode contradicts -facilitator-url"},
		{"dev mode off without facilitator", nil, map[string]string{"ASSAY_DEV_MODE": "false"}, false, "required when dev mode is off"},
		{"dev mode off with facilitator", []string{"-dev-mode=false", "-facilitator-url", "http://127.0.0.1:1"}, nil, false, ""},
		{"flag wins over variable", []string{"-dev-mode=false"}, map[string]string{"ASSAY_DEV_MODE": "true", "ASSAY_FACILITATOR_URL": "http://127.0.0.1:1"}, false, ""},
		{"bad variable", nil, map[string]string{"ASSAY_DEV_MODE": "maybe"}, false, `ASSAY_DEV_MODE: invalid boolean "maybe"`},
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
	type got struct{ PayTo, Network, Facilitator, Realm string }
	read := func(c *config) got { return got{c.PayTo, c.Network, c.FacilitatorURL, c.MPPRealm} }
	c, err := parse([]string{"-payee", "0xabc", "-network", "eip155:84532", "-facilitator-url", "https://f.example", "-mpp-realm", "api.example.com"},
		map[string]string{"ASSAY_PAYEE_ADDRESS": "0xenv", "ASSAY_FACILITATOR_URL": "https://env.example"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got{"0xabc", "eip155:84532", "https://f.example", "api.example.com"}, read(c)); diff != "" {
		t.Fatalf("flags (-want +got):\n%s", diff)
	}
	c, err = parse(nil, map[string]string{"ASSAY_PAYEE_ADDRESS": "0xenv", "ASSAY_NETWORK": "eip155:84532",
		"ASSAY_FACILITATOR_URL": "https://env.example", "ASSAY_MPP_REALM": "r.example"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got{"0xenv", "eip155:84532", "https://env.example", "r.example"}, read(c)); diff != "" {
		t.Fatalf("variables (-want +got):\n%s", diff)
	}
	if c, _ := parse(nil, nil); c.Network != "eip155:8453" || c.ClaimsPrefix != "/claim-verification" || c.ClaimsServiceSlug != "claim-verification" {
		t.Fatalf("defaults: %+v", c)
	}
}
