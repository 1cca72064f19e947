// Command verify runs one claim verification with the claims engine
// directly — no HTTP server, no payment — and prints the result as JSON.
//
// It is the smallest complete use of the engine: the offline demo corpus as
// search provider (served on loopback so that snapshots are real HTTP
// captures), an in-memory SQLite store for results and snapshot records, and
// the snapshot service pointed at the corpus's loopback server.
//
//	go run ./examples/verify
//	go run ./examples/verify -tier deep -claim "USDC on Base has 6 decimals."
//	go run ./examples/verify -tier quick -request '{"claim":"Base Sepolia uses chain ID 84532.","minimumSources":1}'
//	go run ./examples/verify -corpus-dir ./my-docs -claim "..."
//
// The README's "Demo claims" table lists claims of the demo corpus with the
// verdict each gets (confirmed, contradicted, partially_confirmed,
// insufficient_evidence); TestREADMEDemoClaims runs every row through run.
//
// The corpus is lexical and offline: it is for demos, tests and air-gapped
// evaluation, and every result says so in its limitations. A program that
// verifies against the live web builds claims/openai's provider instead and
// leaves HostMap and AllowAddrs out of the snapshot options.
//
// -help lists the flags (exit status 0); a wrong flag or a stray argument
// exits 2, a refused or failed verification 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/assaykit/assay/snapshot"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil), os.Stderr))
}

// exitCode prints err and returns the exit status, as every example does:
// 0 for success and -help, 2 for a wrong command line (nothing was done),
// 1 for a failure.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "verify:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "verify:", err)
		return 1
	}
}

// usageError is a wrong command line.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// run parses args, verifies one claim and writes the result as indented
// JSON to stdout. snap, when non-nil, is the base of the snapshot options
// (main passes nil; tests pass a table resolver and a dial tripwire).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, snap *snapshot.Options) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	claim := fs.String("claim", "Base mainnet uses chain ID 8453.", "the claim to verify")
	request := fs.String("request", "", "a whole ClaimVerificationRequest as JSON (replaces -claim)")
	tier := fs.String("tier", "standard", "tier: quick, standard, deep or research")
	corpusDir := fs.String("corpus-dir", "", "directory of your own corpus documents (empty: the embedded demo corpus)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q (quote the claim and pass it with -claim)", fs.Args())}
	}
	body := []byte(*request)
	if *request == "" {
		b, err := json.Marshal(map[string]string{"claim": *claim})
		if err != nil {
			return err
		}
		body = b
	}

	v, err := newVerifier(ctx, *corpusDir, snap)
	if err != nil {
		return err
	}
	defer v.Close()
	res, err := v.verify(ctx, *tier, body)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
