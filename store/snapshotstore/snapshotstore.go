package snapshotstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
)

// Store implements snapshot.Store (records) and snapshot.BlobStore (content,
// for deployments of several instances sharing one database).
var (
	_ snapshot.Store     = (*Store)(nil)
	_ snapshot.BlobStore = (*Store)(nil)
	_ snapshot.UseStore  = (*Store)(nil)
)

const snapshotColumns = `id, requested_url, final_url, retrieved_at, status, http_status, content_type,
	content_length, raw_sha256, normalized_sha256, failure_reason, normalization, charset, exchange`

// InsertSnapshot implements snapshot.Store.
func (ss *Store) InsertSnapshot(ctx context.Context, s *snapshot.Snapshot) error {
	args, err := ss.snapshotArgs(s)
	if err != nil {
		return err
	}
	return ss.insertSnapshotErr(ss.execInsertSnapshot(ctx, ss.db.Exec, args))
}

// InsertSnapshots implements snapshot.BatchStore: every record in one
// transaction (one commit, one fsync), all or none.
func (ss *Store) InsertSnapshots(ctx context.Context, snaps []*snapshot.Snapshot) error {
	all := make([][]any, len(snaps))
	for i, s := range snaps {
		args, err := ss.snapshotArgs(s)
		if err != nil {
			return err
		}
		all[i] = args
	}
	return ss.insertSnapshotErr(ss.db.InTx(ctx, func(tx *store.Tx) error {
		for _, args := range all {
			if err := ss.execInsertSnapshot(ctx, tx.Exec, args); err != nil {
				return err
			}
		}
		return nil
	}))
}

// snapshotArgs validates a record and returns the values of one row.
func (ss *Store) snapshotArgs(s *snapshot.Snapshot) ([]any, error) {
	if s == nil || !ids.Valid(ids.Snapshot, s.ID) || !s.Status.Valid() || s.RetrievedAt.IsZero() || s.RequestedURL == "" {
		return nil, fmt.Errorf("%w: id, requested URL, retrieval time and a valid status are required", snapshot.ErrInvalid)
	}
	if s.RawSHA256 != nil && !snapshot.ValidSum(*s.RawSHA256) {
		return nil, fmt.Errorf("%w: rawSha256 %q", snapshot.ErrInvalid, *s.RawSHA256)
	}
	var exch *string
	if s.Exchange != nil {
		b, err := json.Marshal(s.Exchange)
		if err != nil {
			return nil, fmt.Errorf("store: snapshot exchange: %w", err)
		}
		exch = store.Ptr(string(b))
	}
	return []any{s.ID, s.RequestedURL, s.FinalURL, store.ToMicros(s.RetrievedAt), string(s.Status), s.HTTPStatus, s.ContentType,
		s.ContentLength, s.RawSHA256, s.NormalizedSHA256, s.FailureReason, s.Normalization, s.Charset, exch,
		ss.db.NowMicros()}, nil
}

func (ss *Store) execInsertSnapshot(ctx context.Context, exec func(context.Context, string, ...any) (sql.Result, error), args []any) error {
	_, err := exec(ctx, `INSERT INTO snapshots (`+snapshotColumns+`, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return err
}

func (ss *Store) insertSnapshotErr(err error) error {
	switch {
	case err == nil:
		return nil
	case ss.db.IsUniqueViolation(err):
		return snapshot.ErrConflict
	case errors.Is(err, snapshot.ErrInvalid):
		return err
	}
	return fmt.Errorf("store: insert snapshot: %w", err)
}

// GetSnapshot implements snapshot.Store.
func (ss *Store) GetSnapshot(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	if !ids.Valid(ids.Snapshot, id) {
		return nil, snapshot.ErrNotFound
	}
	var (
		s         snapshot.Snapshot
		status    string
		retrieved int64
		httpSt    sql.NullInt64
		length    sql.NullInt64
		finalURL  sql.NullString
		ctype     sql.NullString
		raw       sql.NullString
		norm      sql.NullString
		reason    sql.NullString
		exch      sql.NullString
	)
	err := ss.db.QueryRow(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE id = ?`, id).Scan(
		&s.ID, &s.RequestedURL, &finalURL, &retrieved, &status, &httpSt, &ctype, &length, &raw, &norm, &reason,
		&s.Normalization, &s.Charset, &exch)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, snapshot.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: get snapshot: %w", err)
	}
	s.RetrievedAt = store.FromMicros(retrieved)
	s.Status = snapshot.Status(status)
	s.FinalURL = store.StringPtr(finalURL)
	s.ContentType = store.StringPtr(ctype)
	s.RawSHA256 = store.StringPtr(raw)
	s.NormalizedSHA256 = store.StringPtr(norm)
	s.FailureReason = store.StringPtr(reason)
	if httpSt.Valid {
		s.HTTPStatus = store.Ptr(int(httpSt.Int64))
	}
	if length.Valid {
		s.ContentLength = store.Ptr(length.Int64)
	}
	if exch.Valid {
		var e snapshot.Exchange
		if err := json.Unmarshal([]byte(exch.String), &e); err != nil {
			return nil, fmt.Errorf("store: snapshot %s exchange: %w", id, err)
		}
		s.Exchange = &e
	}
	return &s, nil
}

// DeleteSnapshotsBefore implements snapshot.Store: held records and
// records used at or after t are kept (snapshot_holds, snapshot_uses), and
// uses older than t are forgotten.
func (ss *Store) DeleteSnapshotsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := ss.db.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM snapshots WHERE retrieved_at < ?
		AND NOT EXISTS (SELECT 1 FROM snapshot_holds h WHERE h.snapshot_id = snapshots.id)
		AND NOT EXISTS (SELECT 1 FROM snapshot_uses u WHERE u.snapshot_id = snapshots.id AND u.used_at >= ?)`, store.ToMicros(t), store.ToMicros(t))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM snapshot_uses WHERE used_at < ?`, store.ToMicros(t))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: purge snapshots: %w", err)
	}
	return n, nil
}

// UseSnapshots implements snapshot.UseStore.
func (ss *Store) UseSnapshots(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := ss.db.InTx(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			if _, err := tx.Exec(ctx, `INSERT INTO snapshot_uses (snapshot_id, used_at) VALUES (?, ?)
				ON CONFLICT (snapshot_id) DO UPDATE SET used_at = excluded.used_at
				WHERE snapshot_uses.used_at < excluded.used_at`, id, store.ToMicros(at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: use snapshots: %w", err)
	}
	return nil
}

// SnapshotBlobInUse implements snapshot.Store.
func (ss *Store) SnapshotBlobInUse(ctx context.Context, sum string) (bool, error) {
	var one int
	err := ss.db.QueryRow(ctx, `SELECT 1 FROM snapshots WHERE raw_sha256 = ? LIMIT 1`, sum).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: snapshot blob in use: %w", err)
	}
	return true, nil
}

// PutBlob implements snapshot.BlobStore. The content is held in memory
// while it is written (it is bounded by the capture size limit).
func (ss *Store) PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error {
	if !snapshot.ValidSum(sum) || size < 0 {
		return fmt.Errorf("%w: content address %q", snapshot.ErrInvalid, sum)
	}
	now := ss.db.NowMicros()
	res, err := ss.db.Exec(ctx, `UPDATE snapshot_blobs SET put_at = ? WHERE sha256 = ?`, now, sum)
	if err != nil {
		return fmt.Errorf("store: put blob: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return fmt.Errorf("store: put blob: %w", err)
	}
	if int64(len(data)) != size || snapshot.RawSHA256(data) != sum {
		return fmt.Errorf("%w: content does not hash to %s", snapshot.ErrIntegrity, sum)
	}
	_, err = ss.db.Exec(ctx, `INSERT INTO snapshot_blobs (sha256, size, data, put_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET put_at = excluded.put_at`, sum, size, data, now)
	if err != nil {
		return fmt.Errorf("store: put blob: %w", err)
	}
	return nil
}

// OpenBlob implements snapshot.BlobStore.
func (ss *Store) OpenBlob(ctx context.Context, sum string) (snapshot.Blob, error) {
	if !snapshot.ValidSum(sum) {
		return nil, snapshot.ErrNotFound
	}
	var data []byte
	err := ss.db.QueryRow(ctx, `SELECT data FROM snapshot_blobs WHERE sha256 = ?`, sum).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, snapshot.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: open blob: %w", err)
	}
	return &memoryBlob{Reader: bytes.NewReader(data)}, nil
}

type memoryBlob struct{ *bytes.Reader }

func (*memoryBlob) Close() error { return nil }

// BlobsBefore implements snapshot.BlobStore.
func (ss *Store) BlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
	out, err := ss.db.TextRows(ctx, `SELECT sha256 FROM snapshot_blobs WHERE put_at < ? ORDER BY sha256`, store.ToMicros(t))
	if err != nil {
		return nil, fmt.Errorf("store: list blobs: %w", err)
	}
	return out, nil
}

// DeleteBlob implements snapshot.BlobStore. It also refuses to delete a
// blob that a record in this database still uses.
func (ss *Store) DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error) {
	res, err := ss.db.Exec(ctx, `DELETE FROM snapshot_blobs WHERE sha256 = ? AND put_at < ?
		AND NOT EXISTS (SELECT 1 FROM snapshots WHERE raw_sha256 = ?)`, sum, store.ToMicros(t), sum)
	if err != nil {
		return false, fmt.Errorf("store: delete blob: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
