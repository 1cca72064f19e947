// Package evidencetest makes tampered copies of evidence bundles, each
// broken at exactly one link of the chain evidence.Check follows, for the
// tests of the verifier and of the programs that use it.
//
// A forger without the publisher's keys breaks an early link (layout,
// digests, signature, timestamp): the copies for those change bytes and
// re-sign nothing. The later links (receipt, result, snapshots, quotes)
// can only break alone in a bundle re-signed with the publisher's own keys
// — an inconsistent bundle the publisher would have made — so Tamper takes
// the keys and re-signs, to show that each later link is checked on its
// own.
package evidencetest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/warc"
)

// Links are the links Tamper can break, in the order Check follows them.
var Links = []string{evidence.LinkLayout, evidence.LinkDigests, evidence.LinkSignature, evidence.LinkTimestamp,
	evidence.LinkReceipt, evidence.LinkResult, evidence.LinkSnapshots, evidence.LinkQuotes}

// ReplacedPage is the page body that replaces a captured page when a
// tampered copy needs a page without its quotes.
const ReplacedPage = "<html><body><p>This page was replaced after the verification.</p></body></html>"

// Tamper returns a copy of bundle broken at link and at no earlier one.
// keys are the publisher's bundle keys (to re-sign) and receipts its
// receipt keys (to re-sign the receipt for the quotes link).
func Tamper(bundle []byte, link string, keys *evidence.Keys, receipts *payment.Keyring) ([]byte, error) {
	z, err := unzip(bundle)
	if err != nil {
		return nil, err
	}
	switch link {
	case evidence.LinkLayout:
		z.drop(wacz.IndexPath)
		return z.zip()
	case evidence.LinkDigests:
		a := append([]byte(nil), z.files[wacz.ArchivePath]...)
		a[len(a)/2] ^= 0x20
		z.files[wacz.ArchivePath] = a
		return z.zip()
	case evidence.LinkSignature, evidence.LinkTimestamp:
		var d wacz.Digest
		if err := json.Unmarshal(z.files[wacz.DigestPath], &d); err != nil || d.SignedData == nil {
			return nil, errors.New("evidencetest: the bundle is not signed")
		}
		if link == evidence.LinkSignature {
			dp := bytes.Replace(z.files[wacz.DataPackagePath], []byte(`"title": "`), []byte(`"title": "(edited) `), 1)
			sum := sha256.Sum256(dp)
			d.Hash = "sha256:" + hex.EncodeToString(sum[:])
			d.SignedData.Hash = d.Hash // the old signature does not cover it
			z.files[wacz.DataPackagePath] = dp
		} else {
			d.SignedData.TimeSignature = "MAMCAQA=" // a DER sequence, not a TimeStampToken
		}
		z.files[wacz.DigestPath], _ = json.MarshalIndent(d, "", " ")
		return z.zip()
	}
	p, err := parse(bundle)
	if err != nil {
		return nil, err
	}
	switch link {
	case evidence.LinkReceipt:
		rc := p.files[evidence.ReceiptPath]
		if rc == nil {
			return nil, errors.New("evidencetest: the bundle has no receipt")
		}
		p.files[evidence.ReceiptPath] = bytes.Replace(rc, []byte(`"amountMicrousd":`), []byte(`"amountMicrousd":1`), 1)
	case evidence.LinkResult:
		p.files[evidence.ResultPath] = bytes.Replace(p.files[evidence.ResultPath], []byte(`"conclusion":"`), []byte(`"conclusion":"(edited) `), 1)
	case evidence.LinkSnapshots:
		if _, _, err := p.replacePage(); err != nil {
			return nil, err
		}
	case evidence.LinkQuotes:
		if err := p.replaceQuotedPage(receipts); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("evidencetest: unknown link %q", link)
	}
	return p.write(keys)
}

// archive is a ZIP's entries, in order.
type archive struct {
	names []string
	heads map[string]zip.FileHeader
	files map[string][]byte
}

func unzip(b []byte) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	a := &archive{heads: map[string]zip.FileHeader{}, files: map[string][]byte{}}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		a.names = append(a.names, f.Name)
		a.heads[f.Name] = zip.FileHeader{Name: f.Name, Method: f.Method, Modified: f.Modified}
		a.files[f.Name] = data
	}
	return a, nil
}

func (a *archive) drop(name string) {
	for i, n := range a.names {
		if n == name {
			a.names = append(a.names[:i], a.names[i+1:]...)
			return
		}
	}
}

func (a *archive) zip() ([]byte, error) {
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, n := range a.names {
		h := a.heads[n]
		fw, err := zw.CreateHeader(&h)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(a.files[n]); err != nil {
			return nil, err
		}
	}
	err := zw.Close()
	return out.Bytes(), err
}

// parts is a bundle taken apart, to be written again.
type parts struct {
	records []*wacz.Record
	files   map[string][]byte // the assay files
	order   []string
	pages   []wacz.Page
	pkg     wacz.DataPackage
	created time.Time
}

func parse(b []byte) (*parts, error) {
	r, err := wacz.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	p := &parts{files: map[string][]byte{}, pkg: r.Package}
	if err := r.Records(64<<20, func(rec *wacz.Record) error {
		p.records = append(p.records, rec)
		return nil
	}); err != nil {
		return nil, err
	}
	for _, res := range r.Package.Resources {
		if strings.HasPrefix(res.Path, "assay/") {
			data, err := r.ReadFile(res.Path, 64<<20)
			if err != nil {
				return nil, err
			}
			p.order = append(p.order, res.Path)
			p.files[res.Path] = data
		}
	}
	pl, err := r.ReadFile(wacz.PagesPath, 64<<20)
	if err != nil {
		return nil, err
	}
	for i, line := range strings.Split(strings.TrimSpace(string(pl)), "\n") {
		var pg wacz.Page
		if i == 0 || json.Unmarshal([]byte(line), &pg) != nil {
			continue
		}
		p.pages = append(p.pages, pg)
	}
	if r.Digest.SignedData == nil {
		return nil, errors.New("evidencetest: the bundle is not signed")
	}
	p.created, err = time.Parse(time.RFC3339, r.Digest.SignedData.Created)
	return p, err
}

// write assembles the parts again and signs them with keys (no TSA: the
// manifest is marked untimestamped).
func (p *parts) write(keys *evidence.Keys) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(p.files[evidence.ManifestPath], &m); err != nil {
		return nil, err
	}
	m["timestamped"] = false
	p.files[evidence.ManifestPath], _ = json.MarshalIndent(m, "", " ")
	var out bytes.Buffer
	w := wacz.NewWriter(&out, p.created)
	for _, rec := range p.records {
		var idx *wacz.IndexEntry
		if rec.Header.Get("WARC-Type") == "response" {
			payload, err := wacz.HTTPPayload(rec.Block)
			if err != nil {
				return nil, err
			}
			res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(payload)
			ts, _ := time.Parse("2006-01-02T15:04:05.000000Z", rec.Header.Get("WARC-Date"))
			idx = &wacz.IndexEntry{URL: rec.Header.Get("WARC-Target-URI"), Time: ts, Mime: res.Header.Get("Content-Type"),
				Status: res.StatusCode, PayloadSHA256: hex.EncodeToString(sum[:])}
		}
		var fields warc.Header
		for _, f := range rec.Header {
			if !strings.EqualFold(f.Name, "Content-Length") {
				fields = append(fields, f)
			}
		}
		if err := w.WriteRecord(fields, int64(len(rec.Block)), bytes.NewReader(rec.Block), idx); err != nil {
			return nil, err
		}
	}
	for _, name := range p.order {
		if err := w.AddFile(name, p.files[name]); err != nil {
			return nil, err
		}
	}
	for _, pg := range p.pages {
		w.AddPage(pg)
	}
	signer, err := wacz.NewSigner(keys.Signing())
	if err != nil {
		return nil, err
	}
	signer.Software = p.pkg.Software
	_, err = w.Close(context.Background(), wacz.Meta{Title: p.pkg.Title, Description: p.pkg.Description,
		Software: p.pkg.Software, Home: p.pkg.Home, Extra: p.pkg.Extra}, signer)
	return out.Bytes(), err
}

// replacePage replaces the payload of the first response record with
// ReplacedPage (its digests and Content-Length recomputed) and returns the
// old and new payload SHA-256 (hex).
func (p *parts) replacePage() (old, replaced string, err error) {
	for _, rec := range p.records {
		if rec.Header.Get("WARC-Type") != "response" {
			continue
		}
		payload, err := wacz.HTTPPayload(rec.Block)
		if err != nil {
			return "", "", err
		}
		head := string(rec.Block[:len(rec.Block)-len(payload)])
		var lines []string
		for _, l := range strings.Split(head, "\r\n") {
			if strings.HasPrefix(strings.ToLower(l), "content-length:") {
				l = "Content-Length: " + strconv.Itoa(len(ReplacedPage))
			}
			lines = append(lines, l)
		}
		rec.Block = []byte(strings.Join(lines, "\r\n") + ReplacedPage)
		ps, bs := sha256.Sum256([]byte(ReplacedPage)), sha256.Sum256(rec.Block)
		for i, f := range rec.Header {
			switch f.Name {
			case "WARC-Payload-Digest":
				rec.Header[i].Value = warc.Digest(ps[:])
			case "WARC-Block-Digest":
				rec.Header[i].Value = warc.Digest(bs[:])
			}
		}
		os := sha256.Sum256(payload)
		return hex.EncodeToString(os[:]), hex.EncodeToString(ps[:]), nil
	}
	return "", "", errors.New("evidencetest: the bundle archives no page")
}

// replaceQuotedPage replaces a page and updates every hash that names it —
// the result's snapshot (or the manifest's page, for quick), the result's
// bytes, the receipt's resultSha256, re-signed with receipts — so that
// only the quotes no longer hold.
func (p *parts) replaceQuotedPage(receipts *payment.Keyring) error {
	old, repl, err := p.replacePage()
	if err != nil {
		return err
	}
	nz := snapshot.Normalize([]byte(ReplacedPage), "text/html")
	swap := func(b []byte, oldNorm string) []byte {
		b = bytes.ReplaceAll(b, []byte(old), []byte(repl))
		if oldNorm != "" {
			b = bytes.ReplaceAll(b, []byte(oldNorm), []byte(nz.SHA256))
		}
		return b
	}
	var m evidence.Manifest
	if err := json.Unmarshal(p.files[evidence.ManifestPath], &m); err != nil {
		return err
	}
	oldNorm := ""
	for _, pg := range m.Pages {
		if pg.RawSHA256 != nil && *pg.RawSHA256 == old && pg.NormalizedSHA256 != nil {
			oldNorm = *pg.NormalizedSHA256
		}
	}
	p.files[evidence.ResultPath] = swap(p.files[evidence.ResultPath], oldNorm)
	p.files[evidence.ManifestPath] = swap(p.files[evidence.ManifestPath], oldNorm)
	if rb := p.files[evidence.ReceiptPath]; rb != nil {
		var rc payment.Receipt
		if err := json.Unmarshal(rb, &rc); err != nil {
			return err
		}
		sum := sha256.Sum256(p.files[evidence.ResultPath])
		rc.ResultSHA256 = hex.EncodeToString(sum[:])
		if p.files[evidence.ReceiptPath], err = payment.SignReceipt(receipts, &rc); err != nil {
			return err
		}
	}
	// The manifest's copy of the result's hash.
	sum := sha256.Sum256(p.files[evidence.ResultPath])
	m2 := map[string]any{}
	if err := json.Unmarshal(p.files[evidence.ManifestPath], &m2); err != nil {
		return err
	}
	if r, ok := m2["result"].(map[string]any); ok {
		r["sha256"] = hex.EncodeToString(sum[:])
	}
	p.files[evidence.ManifestPath], _ = json.MarshalIndent(m2, "", " ")
	return nil
}
