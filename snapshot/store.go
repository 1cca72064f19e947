package snapshot

import (
	"context"
	"io"
	"time"
)

// Store keeps snapshot records. Records are immutable: there is no update.
// Implementations: store/snapshotstore (SQLite, PostgreSQL) and
// snapshotmem.Store; all pass the conformance suite snapshottest.TestStore.
type Store interface {
	// InsertSnapshot stores a new record (Text is not stored; Exchange,
	// Charset and Normalization are). ErrConflict when the id exists,
	// ErrInvalid when the record is malformed (bad id or status).
	InsertSnapshot(ctx context.Context, s *Snapshot) error
	// GetSnapshot returns the record with that id, without Text.
	// ErrNotFound when there is none.
	GetSnapshot(ctx context.Context, id string) (*Snapshot, error)
	// DeleteSnapshotsBefore deletes the records retrieved before t and
	// returns how many it deleted. A store that is a HoldStore keeps held
	// records; one that is a UseStore keeps records used at or after t.
	DeleteSnapshotsBefore(ctx context.Context, t time.Time) (int64, error)
	// SnapshotBlobInUse reports whether any record has rawSha256 sum.
	SnapshotBlobInUse(ctx context.Context, sum string) (bool, error)
}

// BatchStore is implemented by record stores that can insert several
// records in one transaction; Service.CaptureAll then stores a batch with
// one commit instead of one per capture.
type BatchStore interface {
	// InsertSnapshots stores new records, all or none (errors as
	// InsertSnapshot's).
	InsertSnapshots(ctx context.Context, snaps []*Snapshot) error
}

// HoldStore is implemented by record stores that can exempt records from
// the retention purge: a held record (and so its content) is kept by
// DeleteSnapshotsBefore however old it is, until it is released. The niche
// catalogue holds the captures of its evidence for as long as an
// evaluation uses them (Service.Hold, Service.Release); claims never hold.
type HoldStore interface {
	// HoldSnapshots holds the records with these ids (unknown ids are
	// held too, and holding twice is holding once).
	HoldSnapshots(ctx context.Context, ids []string) error
	// ReleaseSnapshots releases the holds on these ids; the records then
	// fall under the retention purge again, by their retrieval time.
	ReleaseSnapshots(ctx context.Context, ids []string) error
	// SnapshotHeld reports whether id is held.
	SnapshotHeld(ctx context.Context, id string) (bool, error)
}

// UseStore is implemented by record stores that keep records in use: a
// record used at or after the purge's cutoff is kept by
// DeleteSnapshotsBefore however old its capture (and so its content). The
// claims engine marks the pages of every verification it stores
// (Service.Use), so that a page lives as long as the newest verification
// whose evidence bundle needs it.
type UseStore interface {
	// UseSnapshots records that the records with these ids are used at
	// at (a later use wins; an earlier one changes nothing; unknown ids
	// are recorded too).
	UseSnapshots(ctx context.Context, ids []string, at time.Time) error
}

// Blob is stored content opened for reading.
type Blob interface {
	io.ReadSeekCloser
	// Size is the content's length in bytes.
	Size() int64
}

// BlobStore keeps captured content, addressed by the lowercase hex SHA-256
// of its bytes (a snapshot's rawSha256), so identical pages are stored
// once. Implementations: FileBlobStore (the default), store/snapshotstore
// (for several instances sharing a database), store/s3blobs and
// snapshotmem.Blobs; all pass snapshottest.TestBlobStore.
type BlobStore interface {
	// PutBlob stores size bytes read from r under sum, verifying that they
	// hash to sum (ErrIntegrity otherwise; nothing is stored). When the
	// blob exists its content is kept and its last-put time is refreshed,
	// so that a purge running concurrently does not remove it.
	PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error
	// OpenBlob opens a blob for reading. ErrNotFound when absent.
	OpenBlob(ctx context.Context, sum string) (Blob, error)
	// BlobsBefore lists the blobs last put before t.
	BlobsBefore(ctx context.Context, t time.Time) ([]string, error)
	// DeleteBlob removes the blob if it was last put before t (the caller
	// has checked that no record uses it) and reports whether it did.
	// Absent blobs are not an error.
	DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error)
}

// validSum reports whether s is 64 lowercase hex digits.
func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidSum reports whether s is a well-formed content address: 64
// lowercase hexadecimal digits.
func ValidSum(s string) bool { return validSum(s) }
