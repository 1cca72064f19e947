// Command embed is a host application that mounts assay's claim
// verification and URL snapshot retrieval into its own http.ServeMux, under
// a path prefix and behind its own authentication.
//
//	ASSAY_EMBED_TOKEN=s3cret go run ./examples/embed                  # free: the host bills by other means
//	ASSAY_EMBED_TOKEN=s3cret go run ./examples/embed -payments gate   # every verification is paid (x402, dev mode)
//
//	curl -H 'Authorization: Bearer s3cret' -H 'Content-Type: application/json' -d '{"claim":"Base mainnet uses chain ID 8453.","minimumSources":1}' \
//	     http://127.0.0.1:8081/api/v1/claims/verify
//	curl -H 'Authorization: Bearer s3cret' http://127.0.0.1:8081/api/v1/url-snapshots/<snapshotId>
//
// The host keeps its own routes (/, /healthz, and /metrics with assay's
// Prometheus metrics) and its own error bodies; everything under /api/ reaches assay only after the host's bearer
// check. Only the claims and snapshot services are mounted: the niche
// catalogue, subscriptions, MCP, A2A and discovery documents are not
// configured, so their paths are 404. With -payments gate the commerce
// routes (orders, receipts, JWKS) are mounted under /api too, because a
// paid call hands the buyer an order id and token that must be looked up
// somewhere.
//
// The search provider is the offline demo corpus (a real program uses
// claims/openai), and the data lives in SQLite under -data.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil, nil); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}
