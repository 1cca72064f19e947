// Package s3blobs keeps snapshot content in an S3-compatible object
// store — AWS S3 or any server speaking its API (versitygw, SeaweedFS,
// Ceph, Cloudflare R2, …) — so that instances sharing a PostgreSQL
// database keep captured pages out of it: the database holds the records
// and a small index, the object store the bytes. It is a
// snapshot.BlobStore and passes snapshottest.TestBlobStore.
//
// The client is the official AWS SDK for Go v2 (service/s3); credentials
// come from its default chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_PROFILE and the shared files, then the
// platform's roles) unless Options.Credentials is set, and the region
// from Options.Region or AWS_REGION.
//
// Choices:
//   - Content-addressed keys: Prefix + the first two hex digits + "/" +
//     the SHA-256, so the same page is stored once, whoever captured it.
//   - Uploads are streamed: the body is read once, as the request is
//     sent, never buffered whole. The request is signed with the content's
//     SHA-256 as its payload hash (x-amz-content-sha256), which S3 checks;
//     and the reader that feeds the request checks the hash and length
//     itself before it hands over the last byte, so content that does not
//     match its address is cut short and never stored (snapshot.ErrIntegrity),
//     whatever the server checks.
//   - Reads stream from the object store; a seek (a range request) opens a
//     ranged read at the next Read.
//   - Deleting safely needs an atomic "delete unless reused since", which
//     S3 has no operation for. The last-put times therefore live in an
//     Index kept in the database (store/snapshotstore: snapshot_blob_index), where
//     a put refreshes the blob's row before it looks for the object and
//     a purge deletes the object while it holds the row: a blob a record
//     uses, or a capture is reusing, is never deleted.
//   - Every failure of the object store (network, 5xx, refused
//     credentials, a missing bucket) is snapshot.ErrUnavailable: nothing
//     was stored, and servers answer 503 with Retry-After.
package s3blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/assaykit/assay/snapshot"
)

// Index records when each blob was last put and decides deletions under a
// lock (see the package documentation). store/snapshotstore implements
// it on SQLite and PostgreSQL.
type Index interface {
	// ExternalBlobPut creates or refreshes blob sum's entry (last put:
	// now), waiting for a deletion of it under way to finish.
	ExternalBlobPut(ctx context.Context, sum string, size int64) error
	// ExternalBlobsBefore lists the blobs last put before t.
	ExternalBlobsBefore(ctx context.Context, t time.Time) ([]string, error)
	// DeleteExternalBlob removes sum's entry if it was last put before t
	// and no record uses it, calling del before the removal commits (an
	// error from del keeps the entry), and reports whether it did.
	DeleteExternalBlob(ctx context.Context, sum string, t time.Time, del func(context.Context) error) (bool, error)
}

// Options configure New.
type Options struct {
	// Bucket holds the content (required; it must exist).
	Bucket string
	// Prefix is put before every key, e.g. "assay/snapshots/".
	Prefix string
	// Endpoint is the URL of an S3-compatible server
	// (http://127.0.0.1:7070); empty means AWS itself (or
	// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL when set).
	Endpoint string
	// Region; empty means AWS_REGION (or the shared config), else
	// us-east-1.
	Region string
	// VirtualHosted addresses the bucket as a host name
	// (bucket.s3.amazonaws.com) instead of a path (endpoint/bucket). Path
	// style, the default with an Endpoint, is what most S3-compatible
	// servers expect; without an Endpoint (AWS) virtual-hosted style is
	// always used.
	VirtualHosted bool
	// Credentials; nil means the SDK's default chain (see the package
	// documentation).
	Credentials aws.CredentialsProvider
	// HTTPClient sends the requests; nil means the SDK's default.
	HTTPClient *http.Client
}

// Store is a snapshot.BlobStore on an S3-compatible object store.
type Store struct {
	c      *s3.Client
	idx    Index
	bucket string
	prefix string
}

var _ snapshot.BlobStore = (*Store)(nil)

// New returns a Store over bucket o.Bucket with its index idx. It makes no
// request: Check tells whether the bucket answers.
func New(ctx context.Context, idx Index, o *Options) (*Store, error) {
	if idx == nil || o == nil || o.Bucket == "" {
		return nil, errors.New("s3blobs: New needs an index and Options.Bucket")
	}
	var loads []func(*config.LoadOptions) error
	if o.Region != "" {
		loads = append(loads, config.WithRegion(o.Region))
	}
	if o.Credentials != nil {
		loads = append(loads, config.WithCredentialsProvider(o.Credentials))
	}
	if o.HTTPClient != nil {
		loads = append(loads, config.WithHTTPClient(o.HTTPClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("s3blobs: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	c := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
			so.UsePathStyle = !o.VirtualHosted
		}
		// Checksums only where the API requires them: the payload hash
		// (the content's address) already covers the body, and not every
		// S3-compatible server reads the SDK's trailing checksums.
		so.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &Store{c: c, idx: idx, bucket: o.Bucket, prefix: o.Prefix}, nil
}

// Check reports whether the bucket answers (HeadBucket): nil, or an error
// matching snapshot.ErrUnavailable. Readiness probes call it.
func (s *Store) Check(ctx context.Context) error {
	if _, err := s.c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		return unavailable("bucket "+s.bucket, err)
	}
	return nil
}

// key is the object key of content address sum.
func (s *Store) key(sum string) string { return s.prefix + sum[:2] + "/" + sum }

// PutBlob implements snapshot.BlobStore: the index entry is refreshed
// first, then the object is uploaded unless it exists, streamed from r
// and checked against sum and size as it goes.
func (s *Store) PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error {
	if !snapshot.ValidSum(sum) || size < 0 {
		return fmt.Errorf("%w: content address %q", snapshot.ErrInvalid, sum)
	}
	if err := s.idx.ExternalBlobPut(ctx, sum, size); err != nil {
		return err
	}
	key := s.key(sum)
	_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	switch {
	case err == nil:
		return nil // stored already: the index entry's refresh is the put
	case !notFound(err):
		return s.failed(ctx, "look up "+key, err)
	}
	body := &verifier{r: r, sum: sum, size: size, h: sha256.New()}
	if size == 0 {
		body.finish()
	}
	_, err = s.c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(size),
		ContentType: aws.String("application/octet-stream"),
	}, withPayloadHash(sum))
	if body.err != nil {
		return body.err // cut short: nothing was stored
	}
	if err != nil {
		return s.failed(ctx, "upload "+key, err)
	}
	return nil
}

// withPayloadHash signs a request with hash as the SHA-256 of its body,
// so that the SDK does not read the (unseekable) body to compute it and
// the server checks the body against it.
func withPayloadHash(hash string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("assayPayloadHash",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, hash), in)
				}), middleware.Before)
		})
	}
}

// verifier streams an upload's body, checking its length and hash before
// it hands over the last byte: content that does not match is cut short
// (the request fails and the server stores nothing).
type verifier struct {
	r    io.Reader
	sum  string
	size int64
	n    int64
	h    hash.Hash
	done bool  // the whole body was checked
	err  error // why the body was cut short
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if v.n == v.size {
		return 0, io.EOF
	}
	if rest := v.size - v.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	k, err := v.r.Read(p)
	v.h.Write(p[:k])
	v.n += int64(k)
	switch {
	case v.n == v.size:
		if v.finish(); v.err != nil {
			return 0, v.err
		}
		return k, nil
	case errors.Is(err, io.EOF):
		v.err = fmt.Errorf("%w: the content ended after %d bytes, want %d", snapshot.ErrIntegrity, v.n, v.size)
		return 0, v.err
	case err != nil:
		v.err = fmt.Errorf("s3blobs: reading the content: %w", err)
		return 0, v.err
	}
	return k, nil
}

// finish checks, once size bytes were read, that no more follow and that
// they hash to sum.
func (v *verifier) finish() {
	var one [1]byte
	if m, _ := io.ReadFull(v.r, one[:]); m > 0 {
		v.err = fmt.Errorf("%w: the content is longer than %d bytes", snapshot.ErrIntegrity, v.size)
		return
	}
	if got := hex.EncodeToString(v.h.Sum(nil)); got != v.sum {
		v.err = fmt.Errorf("%w: %d bytes hash to %s, want %s", snapshot.ErrIntegrity, v.size, got, v.sum)
		return
	}
	v.done = true
}

// OpenBlob implements snapshot.BlobStore: the object is read as a stream.
func (s *Store) OpenBlob(ctx context.Context, sum string) (snapshot.Blob, error) {
	if !snapshot.ValidSum(sum) {
		return nil, snapshot.ErrNotFound
	}
	key := s.key(sum)
	out, err := s.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if notFound(err) {
		return nil, snapshot.ErrNotFound
	}
	if err != nil {
		return nil, s.failed(ctx, "read "+key, err)
	}
	return &blob{s: s, ctx: ctx, key: key, body: out.Body, size: aws.ToInt64(out.ContentLength)}, nil
}

// blob is an object opened for reading. Seeking only moves the offset; the
// next Read opens a ranged read there when the open stream is elsewhere.
type blob struct {
	s      *Store
	ctx    context.Context
	key    string
	body   io.ReadCloser // nil: none open
	bodyAt int64         // the offset body reads next
	pos    int64
	size   int64
}

func (b *blob) Size() int64 { return b.size }

func (b *blob) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.body == nil || b.bodyAt != b.pos {
		if b.body != nil {
			b.body.Close()
			b.body = nil
		}
		rng := fmt.Sprintf("bytes=%d-", b.pos)
		out, err := b.s.c.GetObject(b.ctx, &s3.GetObjectInput{Bucket: &b.s.bucket, Key: &b.key, Range: &rng})
		if err != nil {
			return 0, b.s.failed(b.ctx, "read "+b.key, err)
		}
		b.body, b.bodyAt = out.Body, b.pos
	}
	n, err := b.body.Read(p)
	b.pos += int64(n)
	b.bodyAt = b.pos
	if err != nil && !errors.Is(err, io.EOF) {
		return n, b.s.failed(b.ctx, "read "+b.key, err)
	}
	if errors.Is(err, io.EOF) && b.pos < b.size {
		return n, fmt.Errorf("%w: read %s: the object ended after %d of %d bytes", snapshot.ErrUnavailable, b.key, b.pos, b.size)
	}
	return n, err
}

func (b *blob) Seek(offset int64, whence int) (int64, error) {
	var to int64
	switch whence {
	case io.SeekStart:
		to = offset
	case io.SeekCurrent:
		to = b.pos + offset
	case io.SeekEnd:
		to = b.size + offset
	default:
		return b.pos, errors.New("s3blobs: seek: bad whence")
	}
	if to < 0 {
		return b.pos, errors.New("s3blobs: seek before the start")
	}
	b.pos = to
	return to, nil
}

func (b *blob) Close() error {
	if b.body == nil {
		return nil
	}
	err := b.body.Close()
	b.body = nil
	return err
}

// BlobsBefore implements snapshot.BlobStore, from the index.
func (s *Store) BlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
	return s.idx.ExternalBlobsBefore(ctx, t)
}

// DeleteBlob implements snapshot.BlobStore: the index decides (last put
// before t, no record using it) and the object is deleted while it holds
// the blob's entry.
func (s *Store) DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error) {
	if !snapshot.ValidSum(sum) {
		return false, nil
	}
	key := s.key(sum)
	return s.idx.DeleteExternalBlob(ctx, sum, t, func(ctx context.Context) error {
		_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
		if err != nil && !notFound(err) {
			return s.failed(ctx, "delete "+key, err)
		}
		return nil
	})
}

// failed wraps an object store error: the caller's cancellation as it
// is, anything else as snapshot.ErrUnavailable.
func (s *Store) failed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return unavailable(what, err)
}

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", snapshot.ErrUnavailable, what, err)
}

// notFound reports whether err says the object does not exist (a missing
// bucket is not that: it is a configuration error).
func notFound(err error) bool {
	if err == nil {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket" {
		return false
	}
	var nk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nk) || errors.As(err, &nf) {
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}
