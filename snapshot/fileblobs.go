package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileBlobStore keeps blobs as files under a directory: <dir>/ab/<sum>
// where ab are the first two hex digits. Writes are atomic and durable: a
// temporary file in <dir>/tmp is written, fsynced, renamed into place, and
// the directory is fsynced. A blob's modification time is its last-put
// time. It is meant for one process (several instances use the database
// blob store instead).
type FileBlobStore struct {
	dir string
	now func() time.Time
	// mu makes "exists? refresh : write" and "old? delete" atomic with
	// respect to each other, so a purge never removes a blob being reused.
	mu sync.Mutex
}

// NewFileBlobStore opens (creating if needed) a blob directory. A nil now
// means time.Now.
func NewFileBlobStore(dir string, now func() time.Time) (*FileBlobStore, error) {
	if dir == "" {
		return nil, errors.New("snapshot: blob directory is empty")
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o750); err != nil {
		return nil, fmt.Errorf("snapshot: blob directory: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &FileBlobStore{dir: dir, now: now}, nil
}

func (b *FileBlobStore) path(sum string) string {
	return filepath.Join(b.dir, sum[:2], sum)
}

// PutBlob implements BlobStore.
func (b *FileBlobStore) PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error {
	if !validSum(sum) {
		return fmt.Errorf("%w: content address %q", ErrInvalid, sum)
	}
	if b.refresh(sum) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Join(b.dir, "tmp"), "put-*")
	if err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), &ctxReader{ctx: ctx, r: r})
	if err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		return fmt.Errorf("%w: %d bytes hash to %x, want %s (%d bytes)", ErrIntegrity, n, h.Sum(nil), sum, size)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	shard := filepath.Dir(b.path(sum))
	b.mu.Lock()
	defer b.mu.Unlock()
	created := false
	if _, err := os.Stat(shard); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(shard, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("snapshot: blob: %w", err)
		}
		created = true
	}
	if err := os.Rename(tmp.Name(), b.path(sum)); err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	tmp = nil
	now := b.now()
	_ = os.Chtimes(b.path(sum), now, now)
	if err := syncDir(shard); err != nil {
		return err
	}
	if created {
		return syncDir(b.dir)
	}
	return nil
}

// refresh marks an existing blob as just put; false when it is absent.
func (b *FileBlobStore) refresh(sum string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	return os.Chtimes(b.path(sum), now, now) == nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("snapshot: blob: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("snapshot: blob: sync %s: %w", dir, err)
	}
	return nil
}

// OpenBlob implements BlobStore.
func (b *FileBlobStore) OpenBlob(ctx context.Context, sum string) (Blob, error) {
	if !validSum(sum) {
		return nil, ErrNotFound
	}
	f, err := os.Open(b.path(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: blob: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot: blob: %w", err)
	}
	return &fileBlob{File: f, size: st.Size()}, nil
}

type fileBlob struct {
	*os.File
	size int64
}

func (f *fileBlob) Size() int64 { return f.size }

// BlobsBefore implements BlobStore. Stale temporary files are removed on
// the way.
func (b *FileBlobStore) BlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
	var out []string
	shards, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: blob: %w", err)
	}
	for _, sh := range shards {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !sh.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(b.dir, sh.Name()))
		if err != nil {
			return nil, fmt.Errorf("snapshot: blob: %w", err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(t) {
				continue
			}
			if sh.Name() == "tmp" {
				_ = os.Remove(filepath.Join(b.dir, "tmp", e.Name()))
				continue
			}
			if validSum(e.Name()) && e.Name()[:2] == sh.Name() {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}

// DeleteBlob implements BlobStore.
func (b *FileBlobStore) DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error) {
	if !validSum(sum) {
		return false, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	info, err := os.Stat(b.path(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("snapshot: blob: %w", err)
	}
	if !info.ModTime().Before(t) {
		return false, nil
	}
	if err := os.Remove(b.path(sum)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("snapshot: blob: %w", err)
	}
	return true, nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
