package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// Service ties a Capturer to a record Store and a BlobStore: every capture
// (failed ones included) is stored, content once per distinct rawSha256.
// It is safe for concurrent use.
type Service struct {
	c       *Capturer
	s       *settings
	records Store
	blobs   BlobStore
}

// NewService builds a service. records and blobs are required.
func NewService(records Store, blobs BlobStore, opts *Options) (*Service, error) {
	if records == nil || blobs == nil {
		return nil, errors.New("snapshot: NewService needs a record store and a blob store")
	}
	c, err := NewCapturer(opts)
	if err != nil {
		return nil, err
	}
	return &Service{c: c, s: c.s, records: records, blobs: blobs}, nil
}

// Close releases idle connections.
func (v *Service) Close() { v.c.Close() }

// Retention is the configured retention period.
func (v *Service) Retention() time.Duration { return v.s.Retention }

// Capture captures one URL and stores the record (and content). See
// Capturer.Capture; the error is a storage failure.
func (v *Service) Capture(ctx context.Context, rawURL string) (*Snapshot, error) {
	return v.c.capture(ctx, ctx, rawURL, v.keep)
}

// CaptureAll captures and stores urls concurrently under one deadline and
// returns one record per URL in input order. See Capturer.CaptureAll. A
// storage failure fails the whole call. Each capture's content is stored as
// it arrives; the records are stored together at the end (in one
// transaction when the record store is a BatchStore), so a batch costs one
// commit, and a stored record never lacks its content.
func (v *Service) CaptureAll(ctx context.Context, urls []string) ([]*Snapshot, error) {
	batch, ok := v.records.(BatchStore)
	if !ok {
		return v.c.captureAll(ctx, urls, v.keep)
	}
	out, err := v.c.captureAll(ctx, urls, v.keepContent)
	if err != nil {
		return nil, err
	}
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keepTimeout)
	defer cancel()
	if err := batch.InsertSnapshots(kctx, out); err != nil {
		return nil, fmt.Errorf("snapshot: storing %d records: %w", len(out), err)
	}
	if v.s.OnCapture != nil {
		for _, s := range out {
			v.s.OnCapture(s)
		}
	}
	return out, nil
}

// FetchAll is CaptureAll: the claims engine's quick tier fetches the pages
// whose quotes it checks with it. Quick results list no snapshots (the
// tier's snapshot mode is none), but the pages are kept like any capture so
// that the verification's evidence bundle can carry them.
func (v *Service) FetchAll(ctx context.Context, urls []string) ([]*Snapshot, error) {
	return v.CaptureAll(ctx, urls)
}

// keep stores the content (content first, so a stored record never lacks
// its content), then the record.
func (v *Service) keep(ctx context.Context, s *Snapshot, content *spool) error {
	if err := v.keepContent(ctx, s, content); err != nil {
		return err
	}
	if err := v.records.InsertSnapshot(ctx, s); err != nil {
		return fmt.Errorf("snapshot: storing %s: %w", s.ID, err)
	}
	if v.s.OnCapture != nil {
		v.s.OnCapture(s)
	}
	return nil
}

// keepContent stores a capture's content, if any.
func (v *Service) keepContent(ctx context.Context, s *Snapshot, content *spool) error {
	if s.Captured() {
		r, err := content.Reader()
		if err != nil {
			return fmt.Errorf("snapshot: staged content: %w", err)
		}
		if err := v.blobs.PutBlob(ctx, *s.RawSHA256, content.Size(), r); err != nil {
			return fmt.Errorf("snapshot: storing content of %s: %w", s.ID, err)
		}
	}
	return nil
}

// Get returns the stored record (without Text). Unknown and malformed ids
// are ErrNotFound.
func (v *Service) Get(ctx context.Context, id string) (*Snapshot, error) {
	if !ids.Valid(ids.Snapshot, id) {
		return nil, ErrNotFound
	}
	return v.records.GetSnapshot(ctx, id)
}

// Open returns the record and its content. ErrNotFound for an unknown id,
// ErrNoContent when the snapshot has no content (not captured, or purged).
// The caller closes the blob.
func (v *Service) Open(ctx context.Context, id string) (*Snapshot, Blob, error) {
	s, err := v.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if !s.Captured() {
		return s, nil, ErrNoContent
	}
	b, err := v.blobs.OpenBlob(ctx, *s.RawSHA256)
	if errors.Is(err, ErrNotFound) {
		v.s.Logger.Warn("snapshot: content missing", "id", id, "sha256", *s.RawSHA256)
		return s, nil, ErrNoContent
	}
	if err != nil {
		return nil, nil, err
	}
	return s, b, nil
}

// Recheck loads a record and its content, re-hashes the content and
// re-normalises it, and returns the record with Text restored. ErrIntegrity
// when a hash does not match; records without content come back as stored.
func (v *Service) Recheck(ctx context.Context, id string) (*Snapshot, error) {
	s, b, err := v.Open(ctx, id)
	if errors.Is(err, ErrNoContent) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	defer b.Close()
	body, err := io.ReadAll(io.LimitReader(b, max(v.s.MaxBytes, b.Size())+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: reading content of %s: %w", id, err)
	}
	if RawSHA256(body) != *s.RawSHA256 {
		return nil, fmt.Errorf("%w: raw hash of %s", ErrIntegrity, id)
	}
	ct := ""
	if s.ContentType != nil {
		ct = *s.ContentType
	}
	nz := Normalize(body, ct)
	switch {
	case nz == nil && s.NormalizedSHA256 == nil:
	case nz == nil || s.NormalizedSHA256 == nil || nz.SHA256 != *s.NormalizedSHA256:
		return nil, fmt.Errorf("%w: normalized hash of %s", ErrIntegrity, id)
	default:
		s.Text = nz.Text
	}
	return s, nil
}

// WARC builds the WARC/1.1 export of a captured snapshot. The caller
// writes it (WriteTo) and then closes the returned blob.
func (v *Service) WARC(ctx context.Context, id string) (*WARC, io.Closer, error) {
	s, b, err := v.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	w, err := buildWARC(s, b)
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return w, b, nil
}

// ErrNoHolds: the record store does not implement HoldStore.
var ErrNoHolds = errors.New("snapshot: the record store cannot hold records")

// Hold exempts the records with these ids from the retention purge until
// Release (see HoldStore). ErrNoHolds when the record store cannot.
func (v *Service) Hold(ctx context.Context, ids []string) error {
	h, ok := v.records.(HoldStore)
	if !ok {
		return ErrNoHolds
	}
	if len(ids) == 0 {
		return nil
	}
	return h.HoldSnapshots(ctx, ids)
}

// Release ends the holds on these ids: the records are purged by the
// next purge that reaches their retrieval time. ErrNoHolds when the record
// store cannot hold records.
func (v *Service) Release(ctx context.Context, ids []string) error {
	h, ok := v.records.(HoldStore)
	if !ok {
		return ErrNoHolds
	}
	if len(ids) == 0 {
		return nil
	}
	return h.ReleaseSnapshots(ctx, ids)
}

// Held reports whether the record id is held (exempt from the retention
// purge); false when the record store cannot hold records.
func (v *Service) Held(ctx context.Context, id string) (bool, error) {
	h, ok := v.records.(HoldStore)
	if !ok {
		return false, nil
	}
	return h.SnapshotHeld(ctx, id)
}

// Use records that the records with these ids are used at at (see
// UseStore): the retention purge keeps them until at is older than the
// retention period. Without a UseStore it does nothing.
func (v *Service) Use(ctx context.Context, ids []string, at time.Time) error {
	u, ok := v.records.(UseStore)
	if !ok || len(ids) == 0 {
		return nil
	}
	return u.UseSnapshots(ctx, ids, at)
}

// PurgeStats reports what a purge removed.
type PurgeStats struct {
	Records int64
	Blobs   int64
}

// Purge deletes the records retrieved before t (held records excepted,
// see Hold), then every blob last put
// before t that no record uses. A blob reused by a capture during the
// purge is kept (PutBlob refreshes it before the record is written).
func (v *Service) Purge(ctx context.Context, before time.Time) (PurgeStats, error) {
	var st PurgeStats
	n, err := v.records.DeleteSnapshotsBefore(ctx, before)
	if err != nil {
		return st, fmt.Errorf("snapshot: purge records: %w", err)
	}
	st.Records = n
	sums, err := v.blobs.BlobsBefore(ctx, before)
	if err != nil {
		return st, fmt.Errorf("snapshot: purge blobs: %w", err)
	}
	for _, sum := range sums {
		used, err := v.records.SnapshotBlobInUse(ctx, sum)
		if err != nil {
			return st, fmt.Errorf("snapshot: purge blobs: %w", err)
		}
		if used {
			continue
		}
		deleted, err := v.blobs.DeleteBlob(ctx, sum, before)
		if err != nil {
			return st, fmt.Errorf("snapshot: purge blobs: %w", err)
		}
		if deleted {
			st.Blobs++
		}
	}
	level := slog.LevelDebug
	if st.Records+st.Blobs > 0 {
		level = slog.LevelInfo
	}
	v.s.Logger.Log(ctx, level, "snapshot: purged", "before", before, "records", st.Records, "blobs", st.Blobs)
	return st, nil
}

// PurgeExpired purges everything older than the retention period.
func (v *Service) PurgeExpired(ctx context.Context) (PurgeStats, error) {
	return v.Purge(ctx, v.s.Now().Add(-v.s.Retention))
}

// RunPurger calls PurgeExpired every interval until ctx is done, logging
// failures. A host starts it in a goroutine.
func (v *Service) RunPurger(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Hour
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := v.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			v.s.Logger.Error("snapshot: purge failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
