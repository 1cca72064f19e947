package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/evidence/evidencetest"
)

func bundlecheck(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String() + errOut.String()
}

// The command accepts an intact bundle — with the keys in it, or with the
// publisher's JWKS from a file or a URL — and refuses each tampered copy,
// naming the broken link.
func TestBundlecheck(t *testing.T) {
	ctx := context.Background()
	w, err := evidencetest.NewWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b, err := evidence.New(w.Snapshots, w.Keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	sale, err := w.Sell(ctx, claims.Deep, "USDC on Base has 6 decimals.")
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := w.Bundle(ctx, b, sale)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "bundle.wacz")
	jwksFile := filepath.Join(dir, "jwks.json")
	jb, _ := json.Marshal(w.JWKS())
	if err := os.WriteFile(file, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jwksFile, jb, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.Write(jb) }))
	defer srv.Close()

	code, out := bundlecheck(t, file)
	if code != 0 || !strings.Contains(out, "verdict: confirmed") || !strings.Contains(out, "keys: the bundle's own") ||
		!strings.Contains(out, "timestamp: none (no TSA: the signing time is the publisher's word)") {
		t.Fatalf("intact bundle: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"-jwks", jwksFile, file}, {file, "-jwks", srv.URL + "/.well-known/jwks.json"}} {
		code, out := bundlecheck(t, args...)
		if code != 0 || !strings.Contains(out, "keys: the JWKS given") || !strings.Contains(out, "quotes checked: ") {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	t.Log(out)
	for _, link := range evidencetest.Links {
		bad, err := evidencetest.Tamper(bundle, link, w.Keys, w.Receipts)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, strings.ReplaceAll(link, " ", "-")+".wacz")
		if err := os.WriteFile(f, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := bundlecheck(t, "-jwks", jwksFile, f)
		if code != 1 || !strings.HasPrefix(out, "REFUSED: "+link+": ") {
			t.Errorf("tampered at %q: exit %d\n%s", link, code, out)
		}
	}
	// Bad command lines and unreadable keys exit 2.
	for _, args := range [][]string{{}, {file, file}, {"-jwks", filepath.Join(dir, "missing.json"), file}, {"-nope", file},
		{filepath.Join(dir, "missing.wacz")}} {
		if code, out := bundlecheck(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, out)
		}
	}
	if code, _ := bundlecheck(t, "-help"); code != 0 {
		t.Errorf("-help: exit %d", code)
	}
}
