// Package s3blobstest gives tests an S3-compatible object store: the
// server named by ASSAY_TEST_S3 (.ci/run starts versitygw and sets it),
// a bucket on it created if missing, and a key prefix of their own, so
// that every test sees an empty store.
package s3blobstest

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/store/s3blobs"
)

// Env names the environment variable holding the test server, as
// http://ACCESS_KEY:SECRET_KEY@HOST:PORT/BUCKET.
const Env = "ASSAY_TEST_S3"

// Server is the S3-compatible server of the tests.
type Server struct {
	Endpoint string
	Bucket   string
	Access   string
	Secret   string
}

// Lookup returns the server ASSAY_TEST_S3 names, or stops the test through
// testenv.Missing (skipped with a message saying how to provide one, or
// failed under ASSAY_TEST_STRICT=1).
func Lookup(t testing.TB) Server {
	t.Helper()
	raw := os.Getenv(Env)
	if raw == "" {
		testenv.Missing(t, "an S3-compatible server: set %s=http://ACCESS:SECRET@127.0.0.1:7070/BUCKET (for example versitygw: "+
			"go install github.com/versity/versitygw/cmd/versitygw@v1.8.0; versitygw --access assaytest --secret assaytestsecret "+
			"--port 127.0.0.1:7070 posix DIR; .ci/run does this)", Env)
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.Host == "" {
		t.Fatalf("%s=%q: want http://ACCESS:SECRET@HOST:PORT/BUCKET", Env, raw)
	}
	secret, _ := u.User.Password()
	bucket := strings.Trim(u.Path, "/")
	if bucket == "" || secret == "" {
		t.Fatalf("%s=%q: want http://ACCESS:SECRET@HOST:PORT/BUCKET", Env, raw)
	}
	return Server{Endpoint: u.Scheme + "://" + u.Host, Bucket: bucket, Access: u.User.Username(), Secret: secret}
}

// Options returns the options of a store on the test server's bucket
// (created if missing) under a key prefix of this test's own.
func Options(t testing.TB) *s3blobs.Options {
	t.Helper()
	s := Lookup(t)
	if err := s.ensureBucket(context.Background()); err != nil {
		t.Fatalf("%s: bucket %s: %v", Env, s.Bucket, err)
	}
	return s.Options("t-" + ids.New("")[:16] + "/")
}

// Options returns store options on the server's bucket under prefix.
func (s Server) Options(prefix string) *s3blobs.Options {
	return &s3blobs.Options{
		Bucket: s.Bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(s.Access, s.Secret, ""),
	}
}

// Client returns a plain S3 client of the server (to look behind a store's
// back).
func (s Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.Access, s.Secret, ""),
	})
}

func (s Server) ensureBucket(ctx context.Context) error {
	c := s.Client()
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.Bucket}); err == nil {
		return nil
	}
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &s.Bucket})
	var owned *types.BucketAlreadyOwnedByYou
	var exists *types.BucketAlreadyExists
	if errors.As(err, &owned) || errors.As(err, &exists) {
		return nil
	}
	return err
}
