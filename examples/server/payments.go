package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
)

// paymentsConfig is read from the environment only (payee, facilitator
// credentials, MPP secret, Stripe keys, receipt key): they are secrets or
// deployment facts, never command-line flags.
type paymentsConfig struct {
	PayTo           string // ASSAY_PAYEE_ADDRESS
	Network         string // ASSAY_NETWORK (eip155:8453 or eip155:84532)
	FacilitatorURL  string // ASSAY_FACILITATOR_URL; empty: dev mode
	FacilitatorAuth string // ASSAY_FACILITATOR_AUTH, "Name: value"
	MPPSecret       string // ASSAY_MPP_SECRET, at least 32 bytes
	Realm           string // ASSAY_MPP_REALM; empty: host of the public base URL
	StripeKey       string // ASSAY_STRIPE_SECRET_KEY (MPP stripe cards)
	StripeProfile   string // ASSAY_STRIPE_PROFILE_ID
	ReceiptKey      string // ASSAY_RECEIPT_KEY
	Costs           payment.CostPrices
}

func readPaymentsConfig(getenv func(string) string) (paymentsConfig, error) {
	c := paymentsConfig{
		PayTo: getenv("ASSAY_PAYEE_ADDRESS"), Network: getenv("ASSAY_NETWORK"),
		FacilitatorURL: getenv("ASSAY_FACILITATOR_URL"), FacilitatorAuth: getenv("ASSAY_FACILITATOR_AUTH"),
		MPPSecret: getenv("ASSAY_MPP_SECRET"), Realm: getenv("ASSAY_MPP_REALM"),
		StripeKey: getenv("ASSAY_STRIPE_SECRET_KEY"), StripeProfile: getenv("ASSAY_STRIPE_PROFILE_ID"),
		ReceiptKey: getenv("ASSAY_RECEIPT_KEY"),
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

// newProcessor builds the x402/MPP protocol layer. Without a facilitator it
// runs in dev mode: signatures are verified for real, nothing is settled
// on-chain, and receipts say so.
// dev reports whether payments run in dev mode (no facilitator).
func (c paymentsConfig) dev() bool { return c.FacilitatorURL == "" }

// newProcessor builds the protocol layer. configuredBase is
// ASSAY_PUBLIC_BASE_URL as given (production needs it, or an explicit
// realm); publicBase is the base actually used (the listen address when
// none is configured).
func newProcessor(c paymentsConfig, configuredBase, publicBase string, bz *server.Bazaar, log *slog.Logger) (*payment.Protocols, error) {
	dev := c.dev()
	opts := &payment.ProcessorOptions{PayTo: c.PayTo, Network: c.Network, Dev: dev, Realm: c.Realm, Logger: log, Extensions: bz.Extensions}
	if opts.Realm == "" {
		if u, err := url.Parse(publicBase); err == nil && u.Hostname() != "" {
			opts.Realm = u.Hostname()
		}
	}
	if c.MPPSecret != "" {
		if len(c.MPPSecret) < 32 {
			return nil, errors.New("ASSAY_MPP_SECRET must be at least 32 bytes")
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
			return nil, errors.New("production payments need ASSAY_PAYEE_ADDRESS, ASSAY_MPP_SECRET and ASSAY_PUBLIC_BASE_URL (or ASSAY_MPP_REALM)")
		}
		fo := &payment.FacilitatorOptions{URL: c.FacilitatorURL, Logger: log}
		if c.FacilitatorAuth != "" {
			h, err := payment.ParseHeaderLine(c.FacilitatorAuth)
			if err != nil {
				return nil, fmt.Errorf("ASSAY_FACILITATOR_AUTH: %w", err)
			}
			fo.Headers = payment.StaticHeaders(h)
		}
		fac, err := payment.NewFacilitator(fo)
		if err != nil {
			return nil, err
		}
		opts.Facilitator = fac
	}
	if c.StripeProfile != "" && c.StripeKey == "" {
		return nil, errors.New("ASSAY_STRIPE_PROFILE_ID is set without ASSAY_STRIPE_SECRET_KEY")
	}
	if c.StripeKey != "" && c.StripeProfile != "" { // cards (MPP stripe); the key alone serves subscriptions
		sc, err := payment.NewStripeCharger(&payment.StripeOptions{SecretKey: c.StripeKey, ProfileID: c.StripeProfile})
		if err != nil {
			return nil, fmt.Errorf("stripe: %w", err)
		}
		opts.Stripe = sc
	}
	return payment.NewProcessor(opts)
}

// newGate builds the 402 gate over the processor and the ledger in db,
// reconciles orders a crash left behind, and keeps reconciling pending ones.
// soleOwner says that no other process uses the database (SQLite with the
// data directory locked): start-up then settles the fate of every order
// left open, at once.
func newGate(ctx context.Context, c paymentsConfig, proc payment.Processor, publicBase string, db *store.DB, soleOwner bool, m *metrics.Metrics, log *slog.Logger) (*payment.Gate, error) {
	keys, err := payment.LoadKeyring(ctx, db, c.ReceiptKey)
	if err != nil {
		return nil, err
	}
	gate, err := payment.NewGate(proc, db, &payment.GateOptions{
		CashierOptions: payment.CashierOptions{Keys: keys, Logger: log, Costs: c.Costs, OnEvent: m.PaymentEvent},
		PublicBaseURL:  publicBase,
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
