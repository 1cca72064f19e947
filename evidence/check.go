package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/warc"
)

// The links Check follows, in order. A BrokenLinkError names the first
// that does not hold.
const (
	LinkLayout    = "zip layout"
	LinkDigests   = "resource digests"
	LinkSignature = "signature"
	LinkTimestamp = "timestamp"
	LinkReceipt   = "receipt signature"
	LinkResult    = "result hash"
	LinkSnapshots = "snapshot hashes"
	LinkQuotes    = "quotes"
)

// BrokenLinkError is Check's refusal: the first link of the chain that
// does not hold, and why.
type BrokenLinkError struct {
	Link string
	Err  error
}

func (e *BrokenLinkError) Error() string { return e.Link + ": " + e.Err.Error() }
func (e *BrokenLinkError) Unwrap() error { return e.Err }

func broken(link string, format string, args ...any) error {
	return &BrokenLinkError{Link: link, Err: fmt.Errorf(format, args...)}
}

// CheckOptions configure Check. Nil means defaults.
type CheckOptions struct {
	// JWKS are the publisher's keys obtained beside the bundle (its
	// /.well-known/jwks.json): the bundle's signing key and the receipt's
	// key must be among them. Nil: the keys in the bundle are used, which
	// proves the bundle consistent but not who made it (Report.KeysFrom
	// says which).
	JWKS *payment.JWKS
	// TSARoots, when set, are the roots the timestamp's TSA certificate
	// must chain to; otherwise the TSA is named but not trusted.
	TSARoots *x509.CertPool
}

// Report is what Check found in an intact bundle.
type Report struct {
	Kind    string
	ID      string
	Tier    string
	OrderID string
	// Verdict is the verification's status (or the evaluation's score and
	// confidence); Conclusion its conclusion (or title).
	Verdict    string
	Conclusion string
	// Pages are the pages archived (captured); Records the WARC records.
	Pages, Records int
	// Evidence is the number of evidence items; SnapshotsChecked those
	// whose snapshot hash was matched to a WARC record; QuotesChecked the
	// counted quotes found on their page.
	Evidence, SnapshotsChecked, QuotesChecked int
	// Receipt is the verified receipt (nil for a bundle without one).
	Receipt *payment.Receipt
	// Signed is when the bundle says it was signed, by SigningKeyID.
	Signed       time.Time
	SigningKeyID string
	// Timestamp is the TSA's verified time, nil without a timestamp;
	// TSA names its certificate and TSATrusted whether it chained to the
	// given roots.
	Timestamp  *time.Time
	TSA        string
	TSATrusted bool
	// KeysFrom is "given" (CheckOptions.JWKS) or "bundle".
	KeysFrom string
	// Links lists the links that held, in order, each with a short note.
	Links []string
}

// Limits of what Check reads.
const (
	maxSmallFile = 32 << 20
	maxRecord    = 64 << 20
)

// Check verifies a bundle offline, link by link: the ZIP layout; every
// resource digest (and every WARC record's digests); the signature of
// datapackage-digest.json, and its timestamp when present; the receipt's
// Ed25519 signature; the receipt's resultSha256 against the result's
// bytes; every evidence item's snapshot hash against the payload digest of
// a WARC record; every counted quote against that record's text, with the
// engine's matcher. It returns a *BrokenLinkError for the first link that
// does not hold.
func Check(r io.ReaderAt, size int64, opts *CheckOptions) (*Report, error) {
	var o CheckOptions
	if opts != nil {
		o = *opts
	}
	rep := &Report{KeysFrom: "bundle"}
	ok := func(link, note string) { rep.Links = append(rep.Links, link+": "+note) }

	// 1. Layout.
	z, err := wacz.Open(r, size)
	if err != nil {
		return rep, broken(LinkLayout, "%v", strings.TrimPrefix(err.Error(), "wacz: layout: "))
	}
	for _, p := range []string{ManifestPath, ResultPath, JWKSPath} {
		if !z.Has(p) {
			return rep, broken(LinkLayout, "%s is missing", p)
		}
	}
	var m Manifest
	mb, err := z.ReadFile(ManifestPath, maxSmallFile)
	if err == nil {
		err = json.Unmarshal(mb, &m)
	}
	if err != nil || m.Format != Format {
		return rep, broken(LinkLayout, "%s is not an %s manifest", ManifestPath, Format)
	}
	if m.ReceiptPath != "" && (m.ReceiptPath != ReceiptPath || !z.Has(ReceiptPath)) {
		return rep, broken(LinkLayout, "the manifest names receipt %q, which the bundle lacks", m.ReceiptPath)
	}
	created, err := time.Parse(time.RFC3339, z.Package.Created)
	if err != nil {
		return rep, broken(LinkLayout, "datapackage.json's created %q is not an RFC 3339 time", z.Package.Created)
	}
	if err := z.CheckFraming(created.UTC()); err != nil {
		return rep, broken(LinkLayout, "%v", strings.TrimPrefix(err.Error(), "wacz: layout: "))
	}
	rep.Kind, rep.ID, rep.Tier, rep.OrderID = m.Kind, m.ID, m.Tier, m.OrderID
	ok(LinkLayout, "WACZ with "+fmt.Sprint(len(z.Package.Resources))+" resources")

	// 2. Digests, of the files and of every WARC record.
	if err := z.Verify(); err != nil {
		return rep, broken(LinkDigests, "%v", strings.TrimPrefix(err.Error(), "wacz: digest: "))
	}
	pages := map[string]*archived{} // by payload sha256 (hex)
	err = z.Records(maxRecord, func(rec *wacz.Record) error {
		rep.Records++
		if rec.Header.Get("WARC-Type") != "response" {
			return nil
		}
		a, err := readResponse(rec)
		if err != nil {
			return fmt.Errorf("%w: %v", wacz.ErrDigest, err)
		}
		pages[a.sha] = a
		return nil
	})
	if err != nil {
		return rep, broken(LinkDigests, "%s: %v", wacz.ArchivePath, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "wacz: digest: "), "wacz: layout: "))
	}
	rep.Pages = len(pages)
	ok(LinkDigests, fmt.Sprintf("%d files and %d WARC records match", len(z.Package.Resources), rep.Records))

	// 3. Signature and timestamp, with the keys given or in the bundle.
	var keys payment.JWKS
	if o.JWKS != nil {
		keys, rep.KeysFrom = *o.JWKS, "given"
	} else {
		jb, err := z.ReadFile(JWKSPath, maxSmallFile)
		if err == nil {
			err = json.Unmarshal(jb, &keys)
		}
		if err != nil {
			return rep, broken(LinkSignature, "%s is not a JWKS", JWKSPath)
		}
	}
	signed, err := wacz.VerifySignature(z.Digest.SignedData, z.Digest.Hash, o.TSARoots)
	if errors.Is(err, wacz.ErrTimestamp) {
		return rep, broken(LinkTimestamp, "%v", strings.TrimPrefix(err.Error(), "wacz: timestamp does not verify: "))
	}
	if err != nil {
		return rep, broken(LinkSignature, "%v", strings.TrimPrefix(err.Error(), "wacz: signature does not verify: "))
	}
	rep.SigningKeyID, rep.Signed = Thumbprint(signed.PublicKey), signed.Created
	// The members the signature does not cover must be what the signed
	// datapackage.json says, in the form Writer writes them.
	sd := z.Digest.SignedData
	if sd.Created != z.Package.Created || sd.Software != z.Package.Software || sd.Version != "" {
		return rep, broken(LinkSignature, "signedData's created and software (%s, %q) are not datapackage.json's (%s, %q)",
			sd.Created, sd.Software, z.Package.Created, z.Package.Software)
	}
	if canon, err := json.MarshalIndent(z.Digest, "", " "); err != nil || !bytes.Equal(canon, z.DigestBytes) {
		return rep, broken(LinkSignature, "%s is not in its canonical form", wacz.DigestPath)
	}
	if !Published(keys, signed.PublicKey) {
		return rep, broken(LinkSignature, "the signing key %s is not among the %s keys", rep.SigningKeyID, keysName(rep.KeysFrom))
	}
	ok(LinkSignature, "datapackage.json signed by "+rep.SigningKeyID+" at "+signed.Created.UTC().Format(time.RFC3339)+" (the bundle's word)")
	if m.Timestamped && signed.Timestamp == nil {
		return rep, broken(LinkTimestamp, "the manifest promises a timestamp and the signature has none")
	}
	if ts := signed.Timestamp; ts != nil {
		t := ts.Time.UTC()
		rep.Timestamp, rep.TSA, rep.TSATrusted = &t, ts.TSA.Subject.String(), ts.Trusted
		trust := "its certificate not checked against trusted roots"
		if ts.Trusted {
			trust = "its certificate chains to the given roots"
		}
		ok(LinkTimestamp, "RFC 3161 time "+t.Format(time.RFC3339)+" from "+rep.TSA+" ("+trust+")")
	}

	// 4 and 5. Receipt and result hash.
	result, err := z.ReadFile(ResultPath, maxSmallFile)
	if err != nil {
		return rep, broken(LinkDigests, "%v", err)
	}
	if m.ReceiptPath != "" {
		rb, err := z.ReadFile(ReceiptPath, maxSmallFile)
		if err != nil {
			return rep, broken(LinkReceipt, "%v", err)
		}
		rc, err := payment.VerifyReceipt(rb, keys)
		if err != nil {
			return rep, broken(LinkReceipt, "%v (keys: %s)", strings.TrimPrefix(err.Error(), "payment: "), keysName(rep.KeysFrom))
		}
		if rc.OrderID != m.OrderID || rc.ResultID != m.ID {
			return rep, broken(LinkReceipt, "the receipt is for order %s and result %s, the bundle for order %s and %s", rc.OrderID, rc.ResultID, m.OrderID, m.ID)
		}
		rep.Receipt = rc
		ok(LinkReceipt, "receipt "+rc.ReceiptID+" of order "+rc.OrderID+" signed by "+rc.KeyID)
		sum := sha256.Sum256(result)
		if got := hex.EncodeToString(sum[:]); got != rc.ResultSHA256 {
			return rep, broken(LinkResult, "the result's bytes hash to %s, the receipt's resultSha256 is %s", got, rc.ResultSHA256)
		}
		ok(LinkResult, "the result is the bytes the receipt covers ("+rc.ResultSHA256+")")
	} else {
		ok(LinkReceipt, "none in the bundle (not sold through an order, e.g. a subscriber's read): the result is bound by the bundle signature only")
	}

	// 6 and 7. Snapshots and quotes. Every page the manifest says is
	// archived is; then each kind's evidence.
	for _, pg := range m.Pages {
		if pg.WARCRecordID == "" || pg.RawSHA256 == nil {
			continue
		}
		if a := pages[*pg.RawSHA256]; a == nil {
			return rep, broken(LinkSnapshots, "page %s has rawSha256 %s, and no WARC record has that payload", pg.SnapshotID, *pg.RawSHA256)
		}
	}
	switch m.Kind {
	case KindVerification:
		err = checkVerification(rep, &m, result, pages)
	case KindEvaluation:
		err = checkEvaluation(rep, &m, result, pages)
	default:
		err = broken(LinkLayout, "unknown bundle kind %q", m.Kind)
	}
	if err != nil {
		return rep, err
	}
	ok(LinkSnapshots, fmt.Sprintf("%d evidence items' pages match a WARC record's payload", rep.SnapshotsChecked))
	ok(LinkQuotes, fmt.Sprintf("%d counted quotes found on their pages", rep.QuotesChecked))
	return rep, nil
}

func keysName(from string) string {
	if from == "given" {
		return "given"
	}
	return "bundle's own (pass the publisher's JWKS to check who signed)"
}

// archived is a response record's page.
type archived struct {
	sha, uri, contentType string
	payload               []byte
	matcher               *snapshot.Matcher // lazily
	normSHA               string
}

func readResponse(rec *wacz.Record) (*archived, error) {
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
	if err != nil {
		return nil, fmt.Errorf("record %s: the HTTP response cannot be read: %v", rec.Header.Get("WARC-Record-ID"), err)
	}
	res.Body.Close()
	payload, err := wacz.HTTPPayload(rec.Block)
	if err != nil {
		return nil, err
	}
	d := rec.Header.Get("WARC-Payload-Digest")
	if d == "" {
		return nil, fmt.Errorf("record %s has no WARC-Payload-Digest", rec.Header.Get("WARC-Record-ID"))
	}
	_, raw, err := warc.ParseDigest(d)
	if err != nil {
		return nil, err
	}
	return &archived{sha: hex.EncodeToString(raw), uri: rec.Header.Get("WARC-Target-URI"),
		contentType: res.Header.Get("Content-Type"), payload: payload}, nil
}

// text normalises the page as the capture did and returns its matcher.
func (a *archived) text() *snapshot.Matcher {
	if a.matcher == nil {
		s := &snapshot.Snapshot{ContentType: &a.contentType}
		if nz := snapshot.Normalize(a.payload, a.contentType); nz != nil {
			s.Text, a.normSHA = nz.Text, nz.SHA256
		}
		a.matcher = s.Matcher()
	}
	return a.matcher
}

// resultOf extracts the verification result from the delivered bytes.
func resultOf(m *Manifest, delivered []byte) (*claims.Result, error) {
	switch m.Result.Form {
	case FormResult:
		return claims.DecodeResult(delivered)
	case FormA2A:
		var env struct {
			Result struct {
				Task *struct {
					Artifacts []struct {
						ArtifactID string `json:"artifactId"`
						Parts      []struct {
							Data json.RawMessage `json:"data"`
						} `json:"parts"`
					} `json:"artifacts"`
				} `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal(delivered, &env); err != nil || env.Result.Task == nil {
			return nil, errors.New("not an A2A SendMessage response with a task")
		}
		for _, a := range env.Result.Task.Artifacts {
			if a.ArtifactID != m.ID {
				continue
			}
			for _, p := range a.Parts {
				if len(p.Data) > 0 {
					return claims.DecodeResult(p.Data)
				}
			}
		}
		return nil, errors.New("the A2A task has no artifact with the result " + m.ID)
	}
	return nil, fmt.Errorf("unknown result form %q", m.Result.Form)
}

func checkVerification(rep *Report, m *Manifest, delivered []byte, pages map[string]*archived) error {
	res, err := resultOf(m, delivered)
	if err != nil {
		return broken(LinkResult, "the result cannot be read: %v", err)
	}
	if res.VerificationID != m.ID {
		return broken(LinkResult, "the result is verification %s, the bundle is for %s", res.VerificationID, m.ID)
	}
	rep.Verdict, rep.Conclusion, rep.Evidence = string(res.Status), res.Conclusion, len(res.Evidence)
	// Snapshots listed by the result (standard and up) name their hashes;
	// quick lists none, and its pages are matched by URL as the engine
	// matched them, from the manifest.
	listed := map[string]*snapshot.Snapshot{}
	for i := range res.Snapshots {
		s := &res.Snapshots[i]
		listed[s.ID] = s
		if s.RawSHA256 != nil && pages[*s.RawSHA256] == nil {
			return broken(LinkSnapshots, "the result's snapshot %s has rawSha256 %s, and no WARC record has that payload", s.ID, *s.RawSHA256)
		}
	}
	byKey := map[string]*Page{}
	for i := range m.Pages {
		p := &m.Pages[i]
		for _, u := range []string{p.RequestedURL, deref(p.FinalURL)} {
			if k, err := urlnorm.Key(u); err == nil {
				if prev := byKey[k]; prev == nil || (prev.RawSHA256 == nil && p.RawSHA256 != nil) {
					byKey[k] = p
				}
			}
		}
	}
	for _, e := range res.Evidence {
		var sum, norm, where string
		switch {
		case e.SnapshotID != nil:
			s := listed[*e.SnapshotID]
			if s == nil {
				return broken(LinkSnapshots, "evidence %s names snapshot %s, which the result does not list", e.ID, *e.SnapshotID)
			}
			if s.RawSHA256 == nil {
				if e.Counted {
					return broken(LinkSnapshots, "evidence %s counted on snapshot %s, which has no content", e.ID, s.ID)
				}
				continue
			}
			sum, norm, where = *s.RawSHA256, deref(s.NormalizedSHA256), "snapshot "+s.ID
		default:
			if !e.Counted {
				continue // quick evidence that counted nothing names no page
			}
			k, err := urlnorm.Key(e.URL)
			p := byKey[k]
			if err != nil || p == nil || p.RawSHA256 == nil {
				return broken(LinkSnapshots, "counted evidence %s (%s) has no captured page in the bundle", e.ID, e.URL)
			}
			sum, norm, where = *p.RawSHA256, deref(p.NormalizedSHA256), "page "+p.SnapshotID
		}
		a := pages[sum]
		if a == nil {
			return broken(LinkSnapshots, "evidence %s: %s has rawSha256 %s, and no WARC record has that payload", e.ID, where, sum)
		}
		rep.SnapshotsChecked++
		if !e.Counted {
			continue
		}
		mt := a.text()
		if norm != "" && a.normSHA != norm {
			return broken(LinkQuotes, "evidence %s: the text of %s normalises to %s, not its normalizedSha256 %s", e.ID, where, a.normSHA, norm)
		}
		if !mt.Contains(e.Excerpt) {
			return broken(LinkQuotes, "evidence %s counted toward the verdict, but its quote %q is not on %s", e.ID, e.Excerpt, where)
		}
		rep.QuotesChecked++
	}
	return nil
}

func checkEvaluation(rep *Report, m *Manifest, delivered []byte, pages map[string]*archived) error {
	// The answer is the evaluation's members and "access".
	ev := &niche.Evaluation{}
	if err := json.Unmarshal(delivered, ev); err != nil || ev.ID == "" {
		return broken(LinkResult, "the result is not a full niche evaluation")
	}
	if ev.ID != m.ID {
		return broken(LinkResult, "the result is evaluation %s, the bundle is for %s", ev.ID, m.ID)
	}
	rep.Verdict = fmt.Sprintf("score %d (%s confidence)", ev.Score, ev.Confidence)
	rep.Conclusion, rep.Evidence = ev.Title, len(ev.Evidence)
	for _, e := range ev.Evidence {
		if e.Snapshot == nil || !e.Snapshot.Captured() {
			continue
		}
		if pages[*e.Snapshot.RawSHA256] == nil {
			return broken(LinkSnapshots, "signal %s: snapshot %s has rawSha256 %s, and no WARC record has that payload", e.ID, e.Snapshot.ID, *e.Snapshot.RawSHA256)
		}
		rep.SnapshotsChecked++
	}
	// Niche excerpts are not checked by the catalogue engine (a curator
	// reviews them): none counts as a checked quote.
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
