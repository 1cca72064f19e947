// Command client buys from a running assay server the way an agent would:
// it verifies a claim and buys one full niche evaluation, answering each
// HTTP 402 with a signed x402 payment (payment.Transport), then checks every
// receipt offline — signature against the server's JWKS, and the SHA-256 of
// the bytes it actually received — and prints a readable summary.
//
//	go run ./examples/server &            # dev-mode payments: signatures checked, nothing settled
//	go run ./examples/client
//	go run ./examples/client -base https://api.example.com -tier deep -claim "USDC on Base has 6 decimals."
//
// The wallet is the key in ASSAY_WALLET_KEY (hex secp256k1 private key,
// from the environment only), or else the public development wallet (the
// well-known Hardhat/Anvil test key #0: never send it real funds). A real
// key pays real USDC to a server that settles through a facilitator:
// -max-spend caps what the client will sign for in one run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr))
}

// exitCode prints err and returns the exit status, as every example does:
// 0 for success and -help, 2 for a wrong command line or setting (nothing
// was bought), 1 for a failure.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "client:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "client:", err)
		return 1
	}
}

// usageError is a wrong command line or setting.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }
