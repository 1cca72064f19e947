package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store/s3blobs/s3blobstest"
)

// With -snapshot-blobs s3 a paid verification's captures are stored in the
// object store (under -s3-prefix, by SHA-256) and served from it; /readyz
// checks the bucket. Credentials come from the usual AWS variables.
func TestSnapshotContentInObjectStore(t *testing.T) {
	t.Parallel()
	srv := s3blobstest.Lookup(t)
	o := s3blobstest.Options(t) // creates the bucket when missing
	base := startServer(t, map[string]string{
		"ASSAY_SNAPSHOT_BLOBS": "s3", "ASSAY_S3_BUCKET": srv.Bucket, "ASSAY_S3_PREFIX": o.Prefix,
		"ASSAY_S3_ENDPOINT": srv.Endpoint, "ASSAY_S3_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": srv.Access, "AWS_SECRET_ACCESS_KEY": srv.Secret,
	})
	if code, checks := readyz(t, base); code != 200 || checks["snapshots"] != "ok" {
		t.Fatalf("readyz: %d %v", code, checks)
	}
	payer := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{BudgetMicroUSD: 1_000_000})}
	res, err := payer.Post(base+"/v1/claims/verify/deep", "application/json", strings.NewReader(`{"claim":"The Base mainnet chain ID is 8453."}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("paid: %d %s", res.StatusCode, got)
	}
	var result struct {
		Snapshots []struct {
			SnapshotID string `json:"snapshotId"`
			Status     string `json:"status"`
			RawSHA256  string `json:"rawSha256"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(got, &result); err != nil {
		t.Fatal(err)
	}
	captured := 0
	for _, s := range result.Snapshots {
		if s.Status != "captured" {
			continue
		}
		captured++
		key := o.Prefix + s.RawSHA256[:2] + "/" + s.RawSHA256
		if _, err := srv.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &srv.Bucket, Key: &key}); err != nil {
			t.Fatalf("snapshot %s is not in the object store under %s: %v", s.SnapshotID, key, err)
		}
		_, _, content := get(t, http.DefaultClient, base+"/claim-verification/v1/url-snapshots/"+s.SnapshotID+"/content")
		if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != s.RawSHA256 {
			t.Fatalf("snapshot %s served content that does not match its hash", s.SnapshotID)
		}
	}
	if captured == 0 {
		t.Fatalf("no captured snapshot: %s", got)
	}
}
