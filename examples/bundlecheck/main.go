// Command bundlecheck checks an assay evidence bundle offline and prints
// a short report:
//
//	go run ./examples/bundlecheck FILE.wacz
//	go run ./examples/bundlecheck -jwks https://api.example.com/.well-known/jwks.json FILE.wacz
//	go run ./examples/bundlecheck -jwks jwks.json -tsa-roots tsa-root.pem FILE.wacz
//
// It follows the chain of evidence.Check in order — the ZIP layout, every
// resource digest, the signature (and the timestamp when present), the
// receipt's signature, the result's hash, every evidence item's snapshot
// hash, every counted quote — and exits 0 when every link holds. On the
// first link that does not it prints "REFUSED: <link>: <why>" and exits 1.
// A wrong command line, or a -jwks that cannot be read, exits 2.
//
// -jwks names the publisher's keys, fetched from its
// /.well-known/jwks.json (a URL) or saved in a file: with them the check
// proves who signed the bundle and its receipt. Without it the keys in
// the bundle are used, which proves only that the bundle is consistent.
// -tsa-roots is a PEM file of the time-stamping authorities you trust.
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/payment"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run checks the bundle named in args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundlecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jwksArg := fs.String("jwks", "", "the publisher's JWKS: a URL (https://…/.well-known/jwks.json) or a file")
	rootsArg := fs.String("tsa-roots", "", "PEM file of trusted time-stamping authority certificates")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bundlecheck [-jwks URL|FILE] [-tsa-roots FILE] FILE.wacz")
		fs.PrintDefaults()
	}
	// Flags may come before or after the file.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return 2
	}
	opts := &evidence.CheckOptions{}
	if *jwksArg != "" {
		jwks, err := loadJWKS(ctx, *jwksArg)
		if err != nil {
			fmt.Fprintln(stderr, "bundlecheck: -jwks:", err)
			return 2
		}
		opts.JWKS = jwks
	}
	if *rootsArg != "" {
		pemData, err := os.ReadFile(*rootsArg)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pemData) {
			fmt.Fprintln(stderr, "bundlecheck: -tsa-roots: no PEM certificates in", *rootsArg)
			return 2
		}
		opts.TSARoots = pool
	}
	f, err := os.Open(files[0])
	if err != nil {
		fmt.Fprintln(stderr, "bundlecheck:", err)
		return 2
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintln(stderr, "bundlecheck:", err)
		return 2
	}
	rep, err := evidence.Check(f, st.Size(), opts)
	if err != nil {
		var be *evidence.BrokenLinkError
		if errors.As(err, &be) {
			fmt.Fprintf(stdout, "REFUSED: %s: %v\n", be.Link, be.Err)
		} else {
			fmt.Fprintln(stdout, "REFUSED:", err)
		}
		printLinks(stdout, rep)
		return 1
	}
	fmt.Fprintf(stdout, "OK: %s %s", kind(rep.Kind), rep.ID)
	if rep.Tier != "" {
		fmt.Fprintf(stdout, " (%s tier)", rep.Tier)
	}
	fmt.Fprintf(stdout, "\nverdict: %s\n", rep.Verdict)
	if rep.Conclusion != "" {
		fmt.Fprintf(stdout, "conclusion: %s\n", rep.Conclusion)
	}
	fmt.Fprintf(stdout, "pages: %d archived, %d WARC records; evidence: %d items, %d matched to their page\n",
		rep.Pages, rep.Records, rep.Evidence, rep.SnapshotsChecked)
	fmt.Fprintf(stdout, "quotes checked: %d counted quotes found on their pages\n", rep.QuotesChecked)
	if rep.Receipt != nil {
		fmt.Fprintf(stdout, "receipt: %s, order %s, %s %d micro-USD by %s (%s)\n", rep.Receipt.ReceiptID, rep.Receipt.OrderID,
			rep.Receipt.Currency, rep.Receipt.AmountMicroUSD, rep.Receipt.Payer, devNote(rep.Receipt.Dev))
	} else {
		fmt.Fprintln(stdout, "receipt: none (the result is bound by the bundle's signature only)")
	}
	fmt.Fprintf(stdout, "signed: by key %s, created %s (the publisher's word)\n", rep.SigningKeyID, rep.Signed.UTC().Format(time.RFC3339))
	if rep.Timestamp != nil {
		trust := "TSA not checked against trusted roots (pass -tsa-roots)"
		if rep.TSATrusted {
			trust = "TSA trusted"
		}
		fmt.Fprintf(stdout, "timestamp: %s by %s (%s)\n", rep.Timestamp.Format(time.RFC3339), rep.TSA, trust)
	} else {
		fmt.Fprintln(stdout, "timestamp: none (no TSA: the signing time is the publisher's word)")
	}
	if rep.KeysFrom == "given" {
		fmt.Fprintln(stdout, "keys: the JWKS given (-jwks)")
	} else {
		fmt.Fprintln(stdout, "keys: the bundle's own: it is consistent, but pass -jwks with the publisher's JWKS to check who signed it")
	}
	return 0
}

func printLinks(w io.Writer, rep *evidence.Report) {
	if rep == nil {
		return
	}
	for _, l := range rep.Links {
		fmt.Fprintln(w, "  held:", l)
	}
}

func kind(k string) string {
	if k == evidence.KindEvaluation {
		return "niche evaluation"
	}
	return "claim verification"
}

func devNote(dev bool) string {
	if dev {
		return "dev mode: nothing was settled"
	}
	return "settled"
}

// loadJWKS reads a JWKS from a URL (http or https) or a file.
func loadJWKS(ctx context.Context, src string) (*payment.JWKS, error) {
	var data []byte
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s answered %s", src, res.Status)
		}
		if data, err = io.ReadAll(io.LimitReader(res.Body, 1<<20)); err != nil {
			return nil, err
		}
	} else {
		var err error
		if data, err = os.ReadFile(src); err != nil {
			return nil, err
		}
	}
	var jwks payment.JWKS
	if err := json.Unmarshal(data, &jwks); err != nil || len(jwks.Keys) == 0 {
		return nil, fmt.Errorf("%s is not a JWKS with keys", src)
	}
	return &jwks, nil
}
