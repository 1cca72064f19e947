package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/warc"
)

// Format names the bundle manifest format (assay/bundle.json).
const Format = "assay-evidence/1"

// Paths of the assay files in a bundle.
const (
	ManifestPath = "assay/bundle.json"
	ResultPath   = "assay/result.json"
	ReceiptPath  = "assay/receipt.json"
	JWKSPath     = "assay/jwks.json"
)

// Kinds of bundle.
const (
	KindVerification = "claim_verification"
	KindEvaluation   = "niche_evaluation"
)

// Forms of the delivered bytes in assay/result.json.
const (
	// FormResult: the ClaimVerificationResult itself (HTTP, MCP).
	FormResult = "result"
	// FormA2A: an A2A SendMessage JSON-RPC response whose task carries the
	// result as the data part of the artifact named by the verification id.
	FormA2A = "a2a-jsonrpc"
	// FormEvaluation: the full niche evaluation answer (the evaluation's
	// members and "access").
	FormEvaluation = "niche-evaluation"
)

// MediaType is the media type of a bundle (the WACZ specification's).
const MediaType = "application/wacz"

// Errors of Prepare.
var (
	// ErrEvidenceGone: a page the bundle needs is no longer stored (its
	// snapshot record or content was purged).
	ErrEvidenceGone = errors.New("evidence: a page of this bundle is no longer stored")
	// ErrNotBundlable: the source cannot make a bundle (no delivered
	// bytes, an unknown form).
	ErrNotBundlable = errors.New("evidence: nothing to bundle")
)

// Snapshots is what a Builder reads pages from; *snapshot.Service
// implements it.
type Snapshots interface {
	Get(ctx context.Context, id string) (*snapshot.Snapshot, error)
	WARC(ctx context.Context, id string) (*snapshot.WARC, io.Closer, error)
}

// Options configure a Builder. Nil means defaults.
type Options struct {
	// TSA, when set, timestamps every bundle signature (RFC 3161); a TSA
	// that fails fails the bundle.
	TSA wacz.Timestamper
	// Software names the producer in datapackage.json and the signature
	// ("assay" when empty).
	Software string
	// Now is the clock of the bundle's created time (time.Now when nil).
	Now func() time.Time
}

// Builder makes evidence bundles from stored snapshots. It is safe for
// concurrent use.
type Builder struct {
	snaps Snapshots
	keys  *Keys
	opts  Options
}

// New returns a builder reading pages from snaps and signing with keys.
func New(snaps Snapshots, keys *Keys, opts *Options) (*Builder, error) {
	if snaps == nil || keys == nil {
		return nil, errors.New("evidence: New needs the snapshots and the keys")
	}
	b := &Builder{snaps: snaps, keys: keys}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Software == "" {
		b.opts.Software = "assay"
	}
	if b.opts.Now == nil {
		b.opts.Now = time.Now
	}
	return b, nil
}

// Keys returns the builder's signing keys (their JWKs belong in the JWKS).
func (b *Builder) Keys() *Keys { return b.keys }

// Timestamped reports whether bundles are timestamped by a TSA.
func (b *Builder) Timestamped() bool { return b.opts.TSA != nil }

// Source is what a bundle binds: the result as delivered, its receipt, the
// publisher's keys, and the pages behind it.
type Source struct {
	Kind string // KindVerification or KindEvaluation
	// ID is the verification (cv_…) or evaluation (niche_…) id.
	ID    string
	Tier  string // verification tier; "" for evaluations
	Title string
	// OrderID names the order that delivered Result ("" for a
	// subscriber's read).
	OrderID string
	// Result is the exact bytes delivered (what the receipt's
	// resultSha256 covers), in the given Form.
	Result []byte
	Form   string
	// Receipt is the order's signed receipt JSON (nil when there is none,
	// e.g. a subscriber's read).
	Receipt []byte
	// JWKS is the publisher's key set (receipt and bundle keys), copied
	// into the bundle; JWKSURL where it is published.
	JWKS    payment.JWKS
	JWKSURL string
	// PageIDs are the snapshot ids of the pages, in order.
	PageIDs []string
	// Titles optionally names pages by snapshot id (pages.jsonl titles).
	Titles map[string]string
}

// VerificationSource is the source of a stored verification delivered by
// an order: delivered are the bytes the order delivered (in form),
// receipt its signed receipt.
func VerificationSource(rec *claims.Record, orderID string, delivered []byte, form string, receipt []byte) *Source {
	titles := map[string]string{}
	for _, e := range rec.Result.Evidence {
		if e.SnapshotID != nil && e.Title != "" {
			titles[*e.SnapshotID] = e.Title
		}
	}
	return &Source{Kind: KindVerification, ID: rec.Result.VerificationID, Tier: rec.Tier, OrderID: orderID,
		Title:  "Evidence of verification " + rec.Result.VerificationID + ": " + rec.Result.Claim,
		Result: delivered, Form: form, Receipt: receipt, PageIDs: rec.Pages(), Titles: titles}
}

// EvaluationSource is the source of a niche evaluation: the captures of
// its evidence signals. delivered are the bytes of the full evaluation
// answer as delivered (a pay-per-call order's stored response, or the
// answer rendered for a subscriber), receipt the order's receipt (nil for
// a subscriber).
func EvaluationSource(ev *niche.Evaluation, orderID string, delivered, receipt []byte) *Source {
	src := &Source{Kind: KindEvaluation, ID: ev.ID, OrderID: orderID, Title: "Evidence of niche evaluation " + ev.ID + ": " + ev.Title,
		Result: delivered, Form: FormEvaluation, Receipt: receipt, Titles: map[string]string{}}
	for _, e := range ev.Evidence {
		if e.Snapshot != nil && e.Snapshot.Captured() {
			src.PageIDs = append(src.PageIDs, e.Snapshot.ID)
			src.Titles[e.Snapshot.ID] = e.Title
		}
	}
	return src
}

// Manifest is assay/bundle.json: what the bundle binds and where.
type Manifest struct {
	Format  string `json:"format"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Tier    string `json:"tier,omitempty"`
	OrderID string `json:"orderId,omitempty"`
	Created string `json:"created"`
	Result  struct {
		Path   string `json:"path"`
		Form   string `json:"form"`
		SHA256 string `json:"sha256"`
	} `json:"result"`
	// ReceiptPath is "" when the bundle has no receipt.
	ReceiptPath string `json:"receiptPath,omitempty"`
	JWKS        struct {
		Path string `json:"path"`
		URL  string `json:"url,omitempty"`
	} `json:"jwks"`
	// SigningKeyID is the JWK thumbprint of the key that signed
	// datapackage-digest.json.
	SigningKeyID string `json:"signingKeyId"`
	Timestamped  bool   `json:"timestamped"`
	Pages        []Page `json:"pages"`
}

// Page is one page of a bundle, as the manifest lists it.
type Page struct {
	SnapshotID       string    `json:"snapshotId"`
	RequestedURL     string    `json:"requestedUrl"`
	FinalURL         *string   `json:"finalUrl"`
	RetrievedAt      time.Time `json:"retrievedAt"`
	Status           string    `json:"status"`
	ContentType      *string   `json:"contentType"`
	RawSHA256        *string   `json:"rawSha256"`
	NormalizedSHA256 *string   `json:"normalizedSha256"`
	// WARCRecordID is the response record of the page; "" when the page
	// was not captured (no content: nothing archived).
	WARCRecordID string `json:"warcRecordId,omitempty"`
}

// Bundle is a prepared bundle: every page was found; WriteTo streams it.
type Bundle struct {
	b      *Builder
	src    *Source
	pages  []*snapshot.Snapshot
	target string // the last page written's URL
}

// Prepare checks that every page of src is stored, before anything is
// written, so that a bundle that cannot be made fails before its first
// byte. ErrEvidenceGone names a purged page.
func (b *Builder) Prepare(ctx context.Context, src *Source) (*Bundle, error) {
	if src == nil || len(src.Result) == 0 {
		return nil, fmt.Errorf("%w: the delivered bytes are not kept", ErrNotBundlable)
	}
	switch src.Form {
	case FormResult, FormA2A, FormEvaluation:
	default:
		return nil, fmt.Errorf("%w: unknown form %q", ErrNotBundlable, src.Form)
	}
	bd := &Bundle{b: b, src: src}
	seen := map[string]bool{}
	for _, id := range src.PageIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		s, err := b.snaps.Get(ctx, id)
		if errors.Is(err, snapshot.ErrNotFound) {
			return nil, fmt.Errorf("%w: snapshot %s", ErrEvidenceGone, id)
		}
		if err != nil {
			return nil, err
		}
		bd.pages = append(bd.pages, s)
	}
	return bd, nil
}

// WriteTo streams the bundle into w: the pages' WARC records, the result,
// the receipt, the JWKS, the manifest, then the WACZ index, pages and
// signed datapackage. Memory does not grow with the pages: each page is
// read from the blob store as it is written.
func (bd *Bundle) WriteTo(ctx context.Context, w io.Writer) error {
	b, src := bd.b, bd.src
	created := b.opts.Now().UTC().Truncate(time.Second)
	zw := wacz.NewWriter(w, created)
	m := Manifest{Format: Format, Kind: src.Kind, ID: src.ID, Tier: src.Tier, OrderID: src.OrderID,
		Created: created.Format(time.RFC3339), SigningKeyID: b.keys.KeyID(), Timestamped: b.opts.TSA != nil, Pages: []Page{}}
	var home *wacz.Home
	for _, s := range bd.pages {
		p := Page{SnapshotID: s.ID, RequestedURL: s.RequestedURL, FinalURL: s.FinalURL, RetrievedAt: s.RetrievedAt.UTC(),
			Status: string(s.Status), ContentType: s.ContentType, RawSHA256: s.RawSHA256, NormalizedSHA256: s.NormalizedSHA256}
		if s.Captured() {
			id, err := bd.writePage(ctx, zw, s)
			if err != nil {
				return err
			}
			p.WARCRecordID = id
			if home == nil {
				home = &wacz.Home{URL: bd.target, TS: s.RetrievedAt}
			}
		}
		m.Pages = append(m.Pages, p)
	}
	sum := sha256.Sum256(src.Result)
	m.Result.Path, m.Result.Form, m.Result.SHA256 = ResultPath, src.Form, hex.EncodeToString(sum[:])
	m.JWKS.Path, m.JWKS.URL = JWKSPath, src.JWKSURL
	if err := zw.AddFile(ResultPath, src.Result); err != nil {
		return err
	}
	if len(src.Receipt) > 0 {
		m.ReceiptPath = ReceiptPath
		if err := zw.AddFile(ReceiptPath, src.Receipt); err != nil {
			return err
		}
	}
	jwks, err := httpjson.Marshal(src.JWKS)
	if err != nil {
		return err
	}
	if err := zw.AddFile(JWKSPath, jwks); err != nil {
		return err
	}
	mb, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := zw.AddFile(ManifestPath, mb); err != nil {
		return err
	}
	signer, err := wacz.NewSigner(b.keys.signing)
	if err != nil {
		return err
	}
	signer.Software, signer.TSA = b.opts.Software, b.opts.TSA
	extra := map[string]json.RawMessage{}
	extra["assay"], _ = json.Marshal(map[string]string{"manifest": ManifestPath, "kind": src.Kind, "id": src.ID, "signingKeyId": m.SigningKeyID})
	_, err = zw.Close(ctx, wacz.Meta{Title: src.Title, Software: b.opts.Software, Home: home, Extra: extra,
		Description: "The pages behind an assay " + kindText(src.Kind) + ", as captured, with the result as delivered, its signed receipt and the publisher's keys. Check it offline with examples/bundlecheck."},
		signer)
	return err
}

func kindText(kind string) string {
	if kind == KindEvaluation {
		return "niche evaluation"
	}
	return "claim verification"
}

// writePage writes the WARC records of a captured page and adds it to the
// pages; it returns the response record's id.
func (bd *Bundle) writePage(ctx context.Context, zw *wacz.Writer, s *snapshot.Snapshot) (string, error) {
	exp, closer, err := bd.b.snaps.WARC(ctx, s.ID)
	if errors.Is(err, snapshot.ErrNoContent) || errors.Is(err, snapshot.ErrNotFound) {
		return "", fmt.Errorf("%w: the content of snapshot %s", ErrEvidenceGone, s.ID)
	}
	if err != nil {
		return "", err
	}
	defer closer.Close()
	var respID, target string
	err = exp.EachRecord(func(fields warc.Header, size int64, block io.Reader) error {
		var idx *wacz.IndexEntry
		if fields.Get("WARC-Type") == "response" {
			respID, target = fields.Get("WARC-Record-ID"), fields.Get("WARC-Target-URI")
			ct := ""
			if s.ContentType != nil {
				ct = *s.ContentType
			}
			idx = &wacz.IndexEntry{URL: fields.Get("WARC-Target-URI"), Time: s.RetrievedAt, Mime: mimeOf(ct),
				Status: derefInt(s.HTTPStatus), PayloadSHA256: *s.RawSHA256}
		}
		return zw.WriteRecord(fields, size, block, idx)
	})
	if err != nil {
		return "", err
	}
	title := bd.src.Titles[s.ID]
	if title == "" {
		title = target
	}
	zw.AddPage(wacz.Page{ID: s.ID, URL: target, TS: s.RetrievedAt, Title: title})
	bd.target = target
	return respID, nil
}

func mimeOf(ct string) string {
	for i := 0; i < len(ct); i++ {
		if ct[i] == ';' {
			ct = ct[:i]
			break
		}
	}
	for len(ct) > 0 && ct[len(ct)-1] == ' ' {
		ct = ct[:len(ct)-1]
	}
	return ct
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
