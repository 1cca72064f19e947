package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
)

// paymentsConfig holds the payment settings: the payee, network,
// facilitator URL and MPP realm come from flags or variables (config); the
// secrets (facilitator credentials, MPP secret, Stripe keys, receipt key)
// from the environment only.
type paymentsConfig struct {
	Dev             bool   // resolved by config.validate
	PayTo           string // -payee, ASSAY_PAYEE_ADDRESS
	Network         string // -network, ASSAY_NETWORK (eip155:8453 or eip155:84532)
	FacilitatorURL  string // -facilitator-url, ASSAY_FACILITATOR_URL
	FacilitatorAuth string // ASSAY_FACILITATOR_AUTH, "Name: value"
	MPPSecret       string // ASSAY_MPP_SECRET, at least 32 bytes
	Realm           string // -mpp-realm, ASSAY_MPP_REALM; empty: host of the public base URL
	StripeKey       string // ASSAY_STRIPE_SECRET_KEY (MPP stripe cards)
	StripeProfile   string // ASSAY_STRIPE_PROFILE_ID
	ReceiptKey      string // ASSAY_RECEIPT_KEY
	Costs           payment.CostPrices
	MaxBodyBytes    int64 // -max-body: the gate reads paid request bodies up to the server's limit
}

func readPaymentsConfig(cfg *config, getenv func(string) string) (paymentsConfig, error) {
	c := paymentsConfig{
		Dev: cfg.Dev, PayTo: cfg.PayTo, Network: cfg.Network,
		FacilitatorURL: cfg.FacilitatorURL, FacilitatorAuth: getenv("ASSAY_FACILITATOR_AUTH"),
		MPPSecret: getenv("ASSAY_MPP_SECRET"), Realm: cfg.MPPRealm,
		StripeKey: getenv("ASSAY_STRIPE_SECRET_KEY"), StripeProfile: getenv("ASSAY_STRIPE_PROFILE_ID"),
		ReceiptKey: getenv("ASSAY_RECEIPT_KEY"), MaxBodyBytes: cfg.MaxBodyBytes,
	}
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
			if _, err := fmt.Sscan(s, v.dst); err != nil || *v.dst < 0 {
				return c, fmt.Errorf("%s: invalid micro-USD amount %q", v.name, s)
			}
		}
	}
	return c, nil
}

// newProcessor builds the x402/MPP protocol layer. In dev mode signatures
// are verified for real, nothing is settled on-chain, and receipts say so;
// otherwise the facilitator settles. configuredBase is
// ASSAY_PUBLIC_BASE_URL as given (production needs it, or an explicit
// realm); publicBase is the base actually used (the listen address when
// none is configured).
//
// In production it also returns the facilitator probe of /readyz.
func newProcessor(c paymentsConfig, configuredBase, publicBase string, bz *server.Bazaar, log *slog.Logger) (*payment.Protocols, *facilitatorProbe, error) {
	dev := c.Dev
	opts := &payment.ProcessorOptions{PayTo: c.PayTo, Network: c.Network, Dev: dev, Realm: c.Realm, Logger: log, Extensions: bz.Extensions}
	if opts.Realm == "" {
		if u, err := url.Parse(publicBase); err == nil && u.Hostname() != "" {
			opts.Realm = u.Hostname()
		}
	}
	var facHeaders func(context.Context, string, string) (http.Header, error)
	if c.MPPSecret != "" {
		if len(c.MPPSecret) < 32 {
			return nil, nil, errors.New("ASSAY_MPP_SECRET must be at least 32 bytes")
		}
		opts.MPPSecret = []byte(c.MPPSecret)
	}
	if dev {
		if opts.PayTo == "" {
			opts.PayTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
		}
		if opts.MPPSecret == nil {
			// A per-process secret: challenges issued before a restart
			// become invalid, which dev mode can afford.
			s := make([]byte, 32)
			_, _ = rand.Read(s)
			opts.MPPSecret = s
		}
	} else {
		if c.PayTo == "" || opts.MPPSecret == nil || (configuredBase == "" && c.Realm == "") {
			return nil, nil, errors.New("production payments need -payee (ASSAY_PAYEE_ADDRESS), ASSAY_MPP_SECRET and -public-base-url (ASSAY_PUBLIC_BASE_URL) or -mpp-realm (ASSAY_MPP_REALM)")
		}
		fo := &payment.FacilitatorOptions{URL: c.FacilitatorURL, Logger: log}
		if c.FacilitatorAuth != "" {
			h, err := payment.ParseHeaderLine(c.FacilitatorAuth)
			if err != nil {
				return nil, nil, fmt.Errorf("ASSAY_FACILITATOR_AUTH: %w", err)
			}
			fo.Headers = payment.StaticHeaders(h)
			facHeaders = fo.Headers
		}
		fac, err := payment.NewFacilitator(fo)
		if err != nil {
			return nil, nil, err
		}
		opts.Facilitator = fac
	}
	if c.StripeProfile != "" && c.StripeKey == "" {
		return nil, nil, errors.New("ASSAY_STRIPE_PROFILE_ID is set without ASSAY_STRIPE_SECRET_KEY")
	}
	if c.StripeKey != "" && c.StripeProfile != "" { // cards (MPP stripe); the key alone serves subscriptions
		sc, err := payment.NewStripeCharger(&payment.StripeOptions{SecretKey: c.StripeKey, ProfileID: c.StripeProfile})
		if err != nil {
			return nil, nil, fmt.Errorf("stripe: %w", err)
		}
		opts.Stripe = sc
	}
	proc, err := payment.NewProcessor(opts)
	if err != nil || dev {
		return proc, nil, err
	}
	probe, err := newFacilitatorProbe(c.FacilitatorURL, facHeaders, proc.Network(), log)
	if err != nil {
		return nil, nil, err
	}
	return proc, probe, nil
}

// newGate builds the 402 gate over the processor and the ledger in db,
// reconciles orders a crash left behind, and keeps reconciling pending ones.
// soleOwner says that no other process uses the database (SQLite with the
// data directory locked): start-up then settles the fate of every order
// left open, at once.
func newGate(ctx context.Context, c paymentsConfig, proc payment.Processor, keys *payment.Keyring, publicBase string, db *store.DB, soleOwner bool, m *metrics.Metrics, log *slog.Logger) (*payment.Gate, error) {
	gate, err := payment.NewGate(proc, db, &payment.GateOptions{
		CashierOptions:  payment.CashierOptions{Keys: keys, Logger: log, Costs: c.Costs, OnEvent: m.PaymentEvent},
		PublicBaseURL:   publicBase,
		MaxRequestBytes: c.MaxBodyBytes,
	})
	if err != nil {
		return nil, err
	}
	reconcile := gate.Cashier().Reconcile
	if soleOwner {
		reconcile = gate.Cashier().ReconcileAfterRestart
	}
	rep, err := reconcile(ctx)
	if err != nil {
		return nil, fmt.Errorf("payment reconciliation: %w", err)
	}
	log.Info("payments reconciled at start", "report", rep)
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := gate.Cashier().Reconcile(ctx); err != nil && ctx.Err() == nil {
					log.Warn("payment reconciliation", "err", err)
				}
			}
		}
	}()
	return gate, nil
}
