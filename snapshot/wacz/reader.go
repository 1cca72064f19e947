package wacz

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/assaykit/assay/snapshot/warc"
)

// Reading errors. Every error of Open, Verify and Records wraps one.
var (
	// ErrLayout: not a ZIP, or not the WACZ layout (a required file
	// missing, an unsafe or repeated name, an archive not stored).
	ErrLayout = errors.New("wacz: layout")
	// ErrDigest: a file's bytes do not match datapackage.json, or a file
	// is not listed there, or a WARC record's digest does not match.
	ErrDigest = errors.New("wacz: digest")
)

// Limits of what Open reads into memory.
const (
	maxEntries  = 10000
	maxJSONFile = 64 << 20
)

// Reader is an opened WACZ.
type Reader struct {
	Z       *zip.Reader
	Package DataPackage
	// PackageBytes are datapackage.json's bytes (Digest.Hash covers them).
	PackageBytes []byte
	Digest       Digest
	// DigestBytes are datapackage-digest.json's bytes.
	DigestBytes []byte
	files       map[string]*zip.File
	ra          io.ReaderAt
	size        int64
}

// Open reads a WACZ's layout: a ZIP with unique, clean, relative names;
// datapackage.json and datapackage-digest.json (both parsed),
// archive/data.warc.gz stored uncompressed, the index and the pages
// present. It does not check digests (Verify does).
func Open(r io.ReaderAt, size int64) (*Reader, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrLayout}, args...)...)
	}
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, bad("not a ZIP file: %v", err)
	}
	if len(z.File) > maxEntries {
		return nil, bad("%d entries (at most %d)", len(z.File), maxEntries)
	}
	w := &Reader{Z: z, files: map[string]*zip.File{}, ra: r, size: size}
	for _, f := range z.File {
		if !validPath(f.Name) {
			if strings.HasSuffix(f.Name, "/") && validPath(strings.TrimSuffix(f.Name, "/")) {
				continue // a directory entry
			}
			return nil, bad("unsafe entry name %q", f.Name)
		}
		if w.files[f.Name] != nil {
			return nil, bad("entry %q appears twice", f.Name)
		}
		w.files[f.Name] = f
	}
	for _, p := range []string{DataPackagePath, DigestPath, ArchivePath, IndexPath, PagesPath} {
		if w.files[p] == nil {
			return nil, bad("%s is missing", p)
		}
	}
	if m := w.files[ArchivePath].Method; m != zip.Store {
		return nil, bad("%s is compressed in the ZIP (method %d); WACZ stores archives", ArchivePath, m)
	}
	if w.PackageBytes, err = w.ReadFile(DataPackagePath, maxJSONFile); err != nil {
		return nil, bad("%v", err)
	}
	if err := json.Unmarshal(w.PackageBytes, &w.Package); err != nil {
		return nil, bad("%s is not valid JSON: %v", DataPackagePath, err)
	}
	if w.Package.Profile != Profile && w.Package.Profile != "wacz" {
		return nil, bad("%s profile %q is not a WACZ profile", DataPackagePath, w.Package.Profile)
	}
	db, err := w.ReadFile(DigestPath, maxJSONFile)
	if err != nil {
		return nil, bad("%v", err)
	}
	w.DigestBytes = db
	if err := json.Unmarshal(db, &w.Digest); err != nil {
		return nil, bad("%s is not valid JSON: %v", DigestPath, err)
	}
	if w.Digest.Path != DataPackagePath {
		return nil, bad("%s names %q, not %s", DigestPath, w.Digest.Path, DataPackagePath)
	}
	return w, nil
}

// Has reports whether the WACZ holds the file p.
func (w *Reader) Has(p string) bool { return w.files[p] != nil }

// OpenFile opens the entry p.
func (w *Reader) OpenFile(p string) (io.ReadCloser, error) {
	f := w.files[p]
	if f == nil {
		return nil, fmt.Errorf("%s is missing", p)
	}
	return f.Open()
}

// ReadFile reads the entry p, refusing one larger than limit bytes.
func (w *Reader) ReadFile(p string, limit int64) ([]byte, error) {
	rc, err := w.OpenFile(p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", p, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return b, nil
}

// Verify checks every resource of datapackage.json against its file
// (size and sha256), that every file but the two manifests is listed, and
// that datapackage-digest.json's hash is datapackage.json's.
func (w *Reader) Verify() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrDigest}, args...)...)
	}
	listed := map[string]bool{}
	for _, r := range w.Package.Resources {
		if listed[r.Path] {
			return bad("%s is listed twice in %s", r.Path, DataPackagePath)
		}
		listed[r.Path] = true
		f := w.files[r.Path]
		if f == nil {
			return bad("%s is listed in %s but not in the WACZ", r.Path, DataPackagePath)
		}
		rc, err := f.Open()
		if err != nil {
			return bad("%s: %v", r.Path, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, io.LimitReader(rc, r.Bytes+1))
		rc.Close()
		if err != nil {
			return bad("%s: %v", r.Path, err)
		}
		if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); n != r.Bytes || got != r.Hash {
			return bad("%s does not match %s (%d bytes with %s; listed: %d bytes with %s)", r.Path, DataPackagePath, n, got, r.Bytes, r.Hash)
		}
	}
	for name := range w.files {
		if !listed[name] && name != DataPackagePath && name != DigestPath {
			return bad("%s is not listed in %s", name, DataPackagePath)
		}
	}
	sum := sha256.Sum256(w.PackageBytes)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != w.Digest.Hash {
		return bad("%s is %s, %s says %s", DataPackagePath, got, DigestPath, w.Digest.Hash)
	}
	return nil
}

// Record is a WARC record read from the archive with its digests checked.
type Record struct {
	Header warc.Header
	// Offset and Length locate the record's gzip member in
	// archive/data.warc.gz.
	Offset, Length int64
	// Block is the record's block (the HTTP message for request and
	// response records), read into memory (bounded by Records' limit).
	Block []byte
}

// Records reads every record of archive/data.warc.gz, one gzip member
// each, checking each record's WARC-Block-Digest and, for responses,
// WARC-Payload-Digest (the payload after the HTTP header). It calls fn
// for each; records whose block exceeds limit bytes fail.
func (w *Reader) Records(limit int64, fn func(*Record) error) error {
	rc, err := w.OpenFile(ArchivePath)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLayout, err)
	}
	defer rc.Close()
	cr := &counter{r: bufio.NewReaderSize(rc, 64<<10)}
	for i := 1; ; i++ {
		if _, err := cr.r.Peek(1); err == io.EOF {
			return nil
		}
		start := cr.n
		zr, err := gzip.NewReader(cr)
		if err != nil {
			return fmt.Errorf("%w: record %d is not a gzip member: %v", ErrLayout, i, err)
		}
		zr.Multistream(false)
		rd := warc.NewReader(zr)
		rec, err := rd.Next()
		if err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrLayout, i, err)
		}
		if rec.Size > limit {
			return fmt.Errorf("%w: record %d is larger than %d bytes", ErrLayout, i, limit)
		}
		block, err := io.ReadAll(rec.Block)
		if err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrLayout, i, err)
		}
		if _, err := rd.Next(); err != io.EOF {
			return fmt.Errorf("%w: record %d: the gzip member holds more than one record (or a damaged one)", ErrLayout, i)
		}
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrLayout, i, err)
		}
		out := &Record{Header: rec.Header, Offset: start, Length: cr.n - start, Block: block}
		if err := checkDigests(out); err != nil {
			return fmt.Errorf("%w: record %d (%s): %v", ErrDigest, i, rec.Header.Get("WARC-Record-ID"), err)
		}
		if err := fn(out); err != nil {
			return err
		}
	}
}

func checkDigests(r *Record) error {
	if d := r.Header.Get("WARC-Block-Digest"); d != "" {
		if err := matchDigest(d, r.Block); err != nil {
			return fmt.Errorf("WARC-Block-Digest: %v", err)
		}
	}
	if d := r.Header.Get("WARC-Payload-Digest"); d != "" {
		payload, err := HTTPPayload(r.Block)
		if err != nil {
			return err
		}
		if err := matchDigest(d, payload); err != nil {
			return fmt.Errorf("WARC-Payload-Digest: %v", err)
		}
	}
	return nil
}

func matchDigest(d string, data []byte) error {
	alg, want, err := warc.ParseDigest(d)
	if err != nil {
		return err
	}
	if alg != "sha256" {
		return fmt.Errorf("algorithm %s (only sha256 is checked)", alg)
	}
	got := sha256.Sum256(data)
	if string(got[:]) != string(want) {
		return fmt.Errorf("%s does not match the bytes (sha256 %s)", d, hex.EncodeToString(got[:]))
	}
	return nil
}

// HTTPPayload returns the payload of an HTTP message block: what follows
// the first empty line (CRLF CRLF).
func HTTPPayload(block []byte) ([]byte, error) {
	i := strings.Index(string(block), "\r\n\r\n")
	if i < 0 {
		return nil, errors.New("the HTTP message has no end of header")
	}
	return block[i+4:], nil
}

// counter counts the bytes read through it; it is an io.ByteReader so
// that gzip reads exactly one member and no further.
type counter struct {
	r *bufio.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *counter) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
