package wacz

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/assaykit/assay/snapshot/warc"
)

// Paths of the files every WACZ written here holds.
const (
	DataPackagePath = "datapackage.json"
	DigestPath      = "datapackage-digest.json"
	ArchivePath     = "archive/data.warc.gz"
	IndexPath       = "indexes/index.cdxj"
	PagesPath       = "pages/pages.jsonl"
)

// Profile is datapackage.json's "profile" (see the package documentation).
const Profile = "data-package"

// Resource is one file listed in datapackage.json.
type Resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"` // "sha256:" + lowercase hex
	Bytes int64  `json:"bytes"`
}

// Page is one entry point of pages/pages.jsonl.
type Page struct {
	ID    string    `json:"id,omitempty"`
	URL   string    `json:"url"`
	TS    time.Time `json:"ts"`
	Title string    `json:"title,omitempty"`
}

// Home is datapackage.json's "home": the page a replay tool opens first.
type Home struct {
	URL string    `json:"url"`
	TS  time.Time `json:"ts"`
}

// DataPackage is the datapackage.json written and read here. Extra holds
// further top-level members (custom properties the WACZ allows).
type DataPackage struct {
	Profile     string     `json:"profile"`
	Resources   []Resource `json:"resources"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Created     string     `json:"created,omitempty"`
	Modified    string     `json:"modified,omitempty"`
	Software    string     `json:"software,omitempty"`
	Home        *Home      `json:"home,omitempty"`
	// Extra members, written after the standard ones.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON writes the standard members, then Extra's (sorted by name).
func (d DataPackage) MarshalJSON() ([]byte, error) {
	type plain DataPackage
	b, err := json.Marshal(plain(d))
	if err != nil || len(d.Extra) == 0 {
		return b, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range slices.Sorted(mapKeys(d.Extra)) {
		if _, std := standardMembers[k]; std {
			return nil, fmt.Errorf("wacz: extra member %q shadows a standard one", k)
		}
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(d.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the standard members and keeps the others in Extra.
func (d *DataPackage) UnmarshalJSON(b []byte) error {
	type plain DataPackage
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*d = DataPackage(p)
	for k, v := range all {
		if _, std := standardMembers[k]; !std {
			if d.Extra == nil {
				d.Extra = map[string]json.RawMessage{}
			}
			d.Extra[k] = v
		}
	}
	return nil
}

var standardMembers = map[string]struct{}{"profile": {}, "resources": {}, "title": {}, "description": {},
	"created": {}, "modified": {}, "software": {}, "home": {}}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Digest is datapackage-digest.json.
type Digest struct {
	Path       string      `json:"path"`
	Hash       string      `json:"hash"`
	SignedData *SignedData `json:"signedData,omitempty"`
}

// IndexEntry describes a response record for the CDXJ index.
type IndexEntry struct {
	URL    string
	Time   time.Time
	Mime   string
	Status int
	// PayloadSHA256 is the lowercase hex SHA-256 of the HTTP payload.
	PayloadSHA256 string
}

// Meta is what Close writes into datapackage.json besides the resources.
type Meta struct {
	Title       string
	Description string
	Software    string
	Home        *Home
	Extra       map[string]json.RawMessage
}

// ErrClosed: the Writer was closed or failed earlier.
var ErrClosed = errors.New("wacz: writer closed")

// Writer streams a WACZ. Use it from one goroutine: WriteRecord for every
// WARC record (first), AddFile for further files, AddPage for entry
// points, then Close.
type Writer struct {
	zw      *zip.Writer
	created time.Time
	res     []Resource
	names   map[string]bool
	pages   []Page
	index   []string
	err     error

	// the archive entry while it is open
	arch    *countingHash
	gz      *gzip.Writer
	archive bool // archive entry opened at least once
}

// countingHash counts and hashes what is written through it.
type countingHash struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// NewWriter returns a Writer writing to w; created is the time written as
// every entry's modification time and as datapackage.json's created.
func NewWriter(w io.Writer, created time.Time) *Writer {
	return &Writer{zw: zip.NewWriter(w), created: created.UTC(), names: map[string]bool{}}
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// WriteRecord appends one WARC record (see warc.WriteRecord) to
// archive/data.warc.gz as its own gzip member. When idx is non-nil the
// record is listed in the CDXJ index. Records must all be written before
// the first AddFile.
func (w *Writer) WriteRecord(fields warc.Header, size int64, block io.Reader, idx *IndexEntry) error {
	if w.err != nil {
		return w.err
	}
	if w.arch == nil {
		if w.archive {
			return w.fail(errors.New("wacz: WARC records must be written before other files"))
		}
		f, err := w.zw.CreateHeader(&zip.FileHeader{Name: ArchivePath, Method: zip.Store, Modified: w.created})
		if err != nil {
			return w.fail(err)
		}
		w.archive, w.names[ArchivePath] = true, true
		w.arch = &countingHash{w: f, h: sha256.New()}
		w.gz, _ = gzip.NewWriterLevel(w.arch, gzip.BestSpeed)
	} else {
		w.gz.Reset(w.arch)
	}
	offset := w.arch.n
	if _, err := warc.WriteRecord(w.gz, fields, size, block); err != nil {
		return w.fail(fmt.Errorf("wacz: WARC record %s: %w", fields.Get("WARC-Record-ID"), err))
	}
	if err := w.gz.Close(); err != nil {
		return w.fail(err)
	}
	if idx != nil {
		line, err := cdxjLine(idx, fields, offset, w.arch.n-offset)
		if err != nil {
			return w.fail(err)
		}
		w.index = append(w.index, line)
	}
	return nil
}

// closeArchive ends the archive entry (written empty when no record was).
func (w *Writer) closeArchive() error {
	if w.arch == nil && !w.archive {
		f, err := w.zw.CreateHeader(&zip.FileHeader{Name: ArchivePath, Method: zip.Store, Modified: w.created})
		if err != nil {
			return w.fail(err)
		}
		w.archive, w.names[ArchivePath] = true, true
		w.arch = &countingHash{w: f, h: sha256.New()}
	}
	if w.arch != nil {
		w.res = append(w.res, resource(ArchivePath, w.arch.h, w.arch.n))
		w.arch, w.gz = nil, nil
	}
	return nil
}

func resource(p string, h hash.Hash, n int64) Resource {
	return Resource{Name: path.Base(p), Path: p, Hash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Bytes: n}
}

// AddFile adds a file at p (a relative slash-separated path outside
// archive/, indexes/ and pages/, which the WACZ reserves) and lists it in
// datapackage.json. Every entry is stored uncompressed (the WACZ allows
// it for every file), so that each byte of an entry is covered by its
// hash; bundles are compressed where it matters, in the WARC.
func (w *Writer) AddFile(p string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if !validPath(p) || reserved(p) || w.names[p] {
		return fmt.Errorf("wacz: %q is not a path for an added file (reserved, unclean or added before)", p)
	}
	if err := w.closeArchive(); err != nil {
		return err
	}
	return w.add(p, data, true)
}

func (w *Writer) add(p string, data []byte, list bool) error {
	if w.names[p] {
		return w.fail(fmt.Errorf("wacz: %s added twice", p))
	}
	w.names[p] = true
	f, err := w.zw.CreateHeader(&zip.FileHeader{Name: p, Method: zip.Store, Modified: w.created})
	if err != nil {
		return w.fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return w.fail(err)
	}
	if list {
		h := sha256.New()
		h.Write(data)
		w.res = append(w.res, resource(p, h, int64(len(data))))
	}
	return nil
}

// AddPage adds an entry point to pages/pages.jsonl.
func (w *Writer) AddPage(p Page) { w.pages = append(w.pages, p) }

// reserved reports whether p lies in a directory the WACZ specification
// reserves, or is one of its root files.
func reserved(p string) bool {
	return strings.HasPrefix(p, "archive/") || strings.HasPrefix(p, "indexes/") || strings.HasPrefix(p, "pages/") ||
		p == DataPackagePath || p == DigestPath
}

// validPath reports whether p is a clean relative slash-separated path.
func validPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains(p, "\\") && path.Clean(p) == p &&
		p != "." && !strings.HasPrefix(p, "../") && p != ".."
}

// Close writes the index, the pages, datapackage.json (with meta) and
// datapackage-digest.json, signed by sign when it is non-nil, and ends the
// ZIP. It returns the digest written.
func (w *Writer) Close(ctx context.Context, meta Meta, sign *Signer) (*Digest, error) {
	if w.err != nil {
		return nil, w.err
	}
	defer func() { w.err = ErrClosed }()
	if err := w.closeArchive(); err != nil {
		return nil, err
	}
	slices.Sort(w.index)
	var idx bytes.Buffer
	for _, l := range w.index {
		idx.WriteString(l)
		idx.WriteByte('\n')
	}
	if err := w.add(IndexPath, idx.Bytes(), true); err != nil {
		return nil, err
	}
	var pages bytes.Buffer
	pages.WriteString(`{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n")
	for _, p := range w.pages {
		p.TS = p.TS.UTC()
		b, err := json.Marshal(p)
		if err != nil {
			return nil, w.fail(err)
		}
		pages.Write(b)
		pages.WriteByte('\n')
	}
	if err := w.add(PagesPath, pages.Bytes(), true); err != nil {
		return nil, err
	}
	dp := DataPackage{Profile: Profile, Resources: w.res, Title: meta.Title, Description: meta.Description,
		Created: w.created.Format(time.RFC3339), Modified: w.created.Format(time.RFC3339), Software: meta.Software,
		Home: meta.Home, Extra: meta.Extra}
	if dp.Home != nil {
		h := *dp.Home
		h.TS = h.TS.UTC()
		dp.Home = &h
	}
	dpb, err := json.MarshalIndent(dp, "", " ")
	if err != nil {
		return nil, w.fail(err)
	}
	if err := w.add(DataPackagePath, dpb, false); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(dpb)
	dg := &Digest{Path: DataPackagePath, Hash: "sha256:" + hex.EncodeToString(sum[:])}
	if sign != nil {
		sd, err := sign.Sign(ctx, dg.Hash, w.created)
		if err != nil {
			return nil, w.fail(err)
		}
		dg.SignedData = sd
	}
	dgb, err := json.MarshalIndent(dg, "", " ")
	if err != nil {
		return nil, w.fail(err)
	}
	if err := w.add(DigestPath, dgb, false); err != nil {
		return nil, err
	}
	if err := w.zw.Close(); err != nil {
		return nil, w.fail(err)
	}
	return dg, nil
}

// cdxjLine is the CDXJ line of a response record written at offset
// (length bytes of gzip member) in archive/data.warc.gz.
func cdxjLine(e *IndexEntry, fields warc.Header, offset, length int64) (string, error) {
	key, err := SURT(e.URL)
	if err != nil {
		return "", err
	}
	block := struct {
		URL          string `json:"url"`
		Digest       string `json:"digest,omitempty"`
		Mime         string `json:"mime,omitempty"`
		Status       int    `json:"status,omitempty"`
		Offset       int64  `json:"offset"`
		Length       int64  `json:"length"`
		RecordDigest string `json:"recordDigest,omitempty"`
		Filename     string `json:"filename"`
	}{URL: e.URL, Mime: e.Mime, Offset: offset, Length: length, Filename: path.Base(ArchivePath)}
	if e.PayloadSHA256 != "" {
		block.Digest = "sha256:" + e.PayloadSHA256
	}
	block.Status = e.Status
	if d := fields.Get("WARC-Block-Digest"); d != "" {
		if _, raw, err := warc.ParseDigest(d); err == nil {
			block.RecordDigest = "sha256:" + hex.EncodeToString(raw)
		}
	}
	b, err := json.Marshal(block)
	if err != nil {
		return "", err
	}
	return key + " " + e.Time.UTC().Format("20060102150405") + " " + string(b), nil
}

// SURT returns the searchable form of rawURL that CDXJ lines are sorted
// by (see the package documentation).
func SURT(rawURL string) (string, error) {
	u, err := url.Parse(strings.ToLower(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("wacz: %q is not an http(s) URL", rawURL)
	}
	host := u.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 && strings.HasPrefix(host, "www") &&
		strings.Trim(host[3:i], "0123456789") == "" {
		host = host[i+1:]
	}
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	s := strings.Join(labels, ",")
	if p := u.Port(); p != "" {
		s += ":" + p
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	s += ")" + p
	if u.RawQuery != "" {
		args := strings.Split(u.RawQuery, "&")
		slices.Sort(args)
		s += "?" + strings.Join(args, "&")
	}
	return s, nil
}
