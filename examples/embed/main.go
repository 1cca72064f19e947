// Command embed is a host application that mounts assay — claim
// verification, URL snapshot retrieval and the niche catalogue — into its
// own http.ServeMux, under a path prefix and behind its own authentication.
//
//	ASSAY_EMBED_TOKEN=s3cret go run ./examples/embed                  # free: the host bills by other means
//	ASSAY_EMBED_TOKEN=s3cret go run ./examples/embed -payments gate   # every verification and full evaluation is paid (x402, dev mode)
//
//	curl -H 'Authorization: Bearer s3cret' -H 'Content-Type: application/json' -d '{"claim":"Base mainnet uses chain ID 8453.","minimumSources":1}' \
//	     http://127.0.0.1:8081/api/v1/claims/verify
//	curl -H 'Authorization: Bearer s3cret' http://127.0.0.1:8081/api/v1/url-snapshots/<snapshotId>
//	curl -H 'Authorization: Bearer s3cret' http://127.0.0.1:8081/api/v1/niches?limit=3
//	curl -H 'Authorization: Bearer s3cret' http://127.0.0.1:8081/api       # what is mounted
//
// The host keeps its own routes (/, /healthz, and /metrics with assay's
// Prometheus metrics) and its own error bodies; everything under /api/
// reaches assay only after the host's bearer check. The claims, snapshot
// and niche services are mounted (the niche catalogue with its demo
// evaluations, sold per call: no subscriptions); MCP, A2A and the
// discovery documents are not configured, so their paths are 404. With
// -payments gate the commerce routes (orders, receipts, JWKS) are mounted
// under /api too, because a paid call hands the buyer an order id and token
// that must be looked up somewhere.
//
// The search provider is the offline demo corpus (a real program uses
// claims/openai), and the data lives in SQLite under -data (./embed-data by
// default, which .gitignore covers). -help lists the flags (exit status
// 0); a wrong flag or value exits 2 before anything starts, a failure 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil, nil)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}
