package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/stripecard"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
)

// paymentsConfig holds the payment settings, read and checked with the
// rest of the configuration (config.validate): the payee, network,
// facilitator URL and MPP realm come from flags or variables; the secrets
// (facilitator credentials, MPP secret, Stripe keys, receipt key) from the
// environment only.
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
	// Settlement resolution.
	ChainRPCURL        string        // -chain-rpc-url, ASSAY_CHAIN_RPC_URL
	FacilitatorTimeout time.Duration // -facilitator-timeout
	SettleTimeout      time.Duration // -settle-timeout
	ResolveEvery       time.Duration // -resolve-every
}

func paymentsOf(cfg *config) paymentsConfig {
	return paymentsConfig{
		Dev: cfg.Dev, PayTo: cfg.PayTo, Network: cfg.Network,
		FacilitatorURL: cfg.FacilitatorURL, FacilitatorAuth: cfg.FacilitatorAuth,
		MPPSecret: cfg.MPPSecret, Realm: cfg.MPPRealm,
		StripeKey: cfg.StripeKey, StripeProfile: cfg.StripeProfile,
		ReceiptKey: cfg.ReceiptKey, Costs: cfg.Costs, MaxBodyBytes: cfg.MaxBodyBytes,
		ChainRPCURL: cfg.ChainRPCURL, FacilitatorTimeout: cfg.FacilitatorTimeout, SettleTimeout: cfg.SettleTimeout,
		ResolveEvery: cfg.ResolveEvery,
	}
}

// newProcessor builds the x402/MPP protocol layer. In dev mode signatures
// are verified for real, nothing is settled on-chain, and receipts say so;
// otherwise the facilitator settles, and the chain, when an RPC URL is
// set, is asked about settlements whose outcome is unknown. publicBase is
// the base URL in use (the listen address when none is configured). The
// settings were checked with the configuration.
func newProcessor(c paymentsConfig, publicBase string, discoveryServed bool, bz *discovery.Bazaar, log *slog.Logger) (*protocols.Processor, error) {
	dev := c.Dev
	opts := &protocols.Options{PayTo: c.PayTo, Network: c.Network, Dev: dev, Realm: c.Realm, Logger: log, Extensions: bz.Extensions,
		Links: paymentLinks(publicBase, discoveryServed)}
	if opts.Realm == "" {
		if u, err := url.Parse(publicBase); err == nil && u.Hostname() != "" {
			opts.Realm = u.Hostname()
		}
	}
	if c.MPPSecret != "" {
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
		fo := &x402.FacilitatorOptions{URL: c.FacilitatorURL, Logger: log, Timeout: c.FacilitatorTimeout, SettleTimeout: c.SettleTimeout}
		if c.FacilitatorAuth != "" {
			h, err := x402.ParseHeaderLine(c.FacilitatorAuth)
			if err != nil {
				return nil, fmt.Errorf("ASSAY_FACILITATOR_AUTH: %w", err)
			}
			fo.Headers = x402.StaticHeaders(h)
		}
		fac, err := x402.NewFacilitator(fo)
		if err != nil {
			return nil, err
		}
		opts.Facilitator = fac
		if c.ChainRPCURL != "" {
			rpc, err := evm.NewRPC(&evm.RPCOptions{URL: c.ChainRPCURL, Timeout: c.FacilitatorTimeout})
			if err != nil {
				return nil, err
			}
			opts.Chain = rpc
		}
	}
	if c.StripeKey != "" && c.StripeProfile != "" { // cards (MPP stripe); the key alone serves subscriptions
		sc, err := stripecard.New(&stripecard.Options{SecretKey: c.StripeKey, ProfileID: c.StripeProfile})
		if err != nil {
			return nil, fmt.Errorf("stripe: %w", err)
		}
		opts.Stripe = sc
	}
	return protocols.New(opts)
}

// paymentLinks are the links of every 402 body: the index of this server,
// its discovery documents (when served) and the paying client.
func paymentLinks(publicBase string, discoveryServed bool) map[string]string {
	links := map[string]string{"index": publicBase + "/", "client": discovery.DefaultRepository + "/tree/main/examples/client"}
	if discoveryServed {
		links["discovery"] = publicBase + "/.well-known/x402"
		links["openapi"] = publicBase + "/openapi.json"
	}
	return links
}

// newGate builds the 402 gate over the processor and the ledger in db,
// reconciles what a crash left behind, and runs the settlement resolver
// until ctx ends. soleOwner says that no other process uses the database
// (SQLite with the data directory locked): start-up then settles the fate
// of every order left open, at once. resolved is closed when the
// resolver has stopped: shutdown waits for it, so that an attempt under
// way records its outcome (and its lease) instead of leaving the order
// leased to a process that is gone, which no instance would attempt
// again before the lease ran out (the settle timeout plus the commit
// timeout).
func newGate(ctx context.Context, c paymentsConfig, proc payment.Processor, keys *payment.Keyring, publicBase string, db *store.DB, soleOwner bool, m *metrics.Metrics, log *slog.Logger) (gate *httpgate.Gate, resolved <-chan struct{}, err error) {
	gate, err = httpgate.New(proc, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys, Logger: log, Costs: c.Costs, OnEvent: m.PaymentEvent, OnTransition: m.OrderTransition,
			// The facilitator's own bound on /settle ends a call first.
			SettleTimeout: c.SettleTimeout + 5*time.Second, ResolveEvery: c.ResolveEvery},
		PublicBaseURL:   publicBase,
		MaxRequestBytes: c.MaxBodyBytes,
	})
	if err != nil {
		return nil, nil, err
	}
	reconcile := gate.Cashier().Reconcile
	if soleOwner {
		reconcile = gate.Cashier().ReconcileAfterRestart
	}
	rep, err := reconcile(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("payment reconciliation: %w", err)
	}
	// One line per start, also when there was nothing to do (operators and
	// bench/load's crash scenario read it).
	log.Info("payments reconciled at start", "report", rep)
	done := make(chan struct{})
	go func() {
		defer close(done)
		gate.Cashier().RunResolver(ctx)
	}()
	return gate, done, nil
}
