package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/assaykit/assay/snapshot/warc"
)

// WARC is a snapshot's WARC/1.1 export: three records (warcinfo, request,
// response) whose response payload is the stored content.
type WARC struct {
	records []warcPart
	size    int64
}

type warcPart struct {
	fields warc.Header
	head   []byte    // block bytes before the payload
	body   io.Reader // payload (response only)
	n      int64     // payload length
}

// Size is the export's length in bytes.
func (w *WARC) Size() int64 { return w.size }

// WriteTo writes the export.
func (w *WARC) WriteTo(out io.Writer) (int64, error) {
	var total int64
	for _, r := range w.records {
		block := io.Reader(bytes.NewReader(r.head))
		if r.body != nil {
			block = io.MultiReader(block, r.body)
		}
		n, err := warc.WriteRecord(out, r.fields, int64(len(r.head))+r.n, block)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// droppedResponseHeaders describe the bytes on the wire, not the decoded
// entity the export carries; their original values are kept under
// X-Assay-Original-<name>.
var droppedResponseHeaders = []string{"Content-Encoding", "Transfer-Encoding", "Content-Length"}

// buildWARC assembles the export of a captured snapshot whose content is
// blob. It reads the blob once to compute the response block digest and
// to check the payload against rawSha256, then seeks back to the start.
func buildWARC(s *Snapshot, blob Blob) (*WARC, error) {
	if !s.Captured() {
		return nil, ErrNoContent
	}
	date := s.RetrievedAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	infoID, reqID, respID := recordID(s.ID, "warcinfo"), recordID(s.ID, "request"), recordID(s.ID, "response")
	ex := s.Exchange
	target := ""
	if s.FinalURL != nil {
		target = *s.FinalURL
	}
	if ex == nil {
		ex = &Exchange{Method: http.MethodGet, URL: target, StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1",
			RequestHeader: http.Header{}, ResponseHeader: http.Header{}}
		if s.ContentType != nil {
			ex.ResponseHeader.Set("Content-Type", *s.ContentType)
		}
	}
	if ex.URL != "" {
		target = ex.URL
	}

	// warcinfo
	var info bytes.Buffer
	infoFields := [][2]string{
		{"software", "assay snapshot export"},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"assay-snapshot-id", s.ID},
		{"assay-raw-sha256", *s.RawSHA256},
	}
	if s.NormalizedSHA256 != nil {
		infoFields = append(infoFields, [2]string{"assay-normalized-sha256", *s.NormalizedSHA256},
			[2]string{"assay-normalization", s.Normalization})
	}
	if s.Charset != "" {
		infoFields = append(infoFields, [2]string{"assay-charset", s.Charset})
	}
	for _, f := range infoFields {
		fmt.Fprintf(&info, "%s: %s\r\n", f[0], f[1])
	}

	// request
	var req bytes.Buffer
	reqURI := "/"
	if u, err := url.Parse(target); err == nil {
		reqURI = u.RequestURI()
	}
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\n", ex.Method, reqURI)
	writeHeader(&req, ex.RequestHeader, "Host")
	req.WriteString("\r\n")

	// response
	var resp bytes.Buffer
	reason := strings.TrimSpace(strings.TrimPrefix(ex.Status, strconv.Itoa(ex.StatusCode)))
	fmt.Fprintf(&resp, "HTTP/1.1 %d %s\r\n", ex.StatusCode, reason)
	rh := ex.ResponseHeader.Clone()
	if rh == nil {
		rh = http.Header{}
	}
	for _, name := range droppedResponseHeaders {
		if vs := rh.Values(name); len(vs) > 0 {
			rh.Del(name)
			for _, v := range vs {
				rh.Add("X-Assay-Original-"+name, v)
			}
		}
	}
	size := blob.Size()
	rh.Set("Content-Length", strconv.FormatInt(size, 10))
	writeHeader(&resp, rh, "")
	resp.WriteString("\r\n")

	// Digests: read the payload once.
	payload, block := sha256.New(), sha256.New()
	block.Write(resp.Bytes())
	n, err := io.Copy(io.MultiWriter(payload, block), blob)
	if err != nil {
		return nil, fmt.Errorf("snapshot: reading content: %w", err)
	}
	if n != size || hex.EncodeToString(payload.Sum(nil)) != *s.RawSHA256 {
		return nil, fmt.Errorf("%w: %s", ErrIntegrity, s.ID)
	}
	if _, err := blob.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("snapshot: reading content: %w", err)
	}
	sha := func(b []byte) string { s := sha256.Sum256(b); return warc.Digest(s[:]) }

	w := &WARC{}
	w.records = []warcPart{
		{fields: warc.Header{
			{Name: "WARC-Type", Value: "warcinfo"},
			{Name: "WARC-Record-ID", Value: infoID},
			{Name: "WARC-Date", Value: date},
			{Name: "WARC-Filename", Value: s.ID + ".warc"},
			{Name: "WARC-Block-Digest", Value: sha(info.Bytes())},
			{Name: "Content-Type", Value: "application/warc-fields"},
		}, head: info.Bytes()},
		{fields: warc.Header{
			{Name: "WARC-Type", Value: "request"},
			{Name: "WARC-Record-ID", Value: reqID},
			{Name: "WARC-Date", Value: date},
			{Name: "WARC-Target-URI", Value: target},
			{Name: "WARC-Warcinfo-ID", Value: infoID},
			{Name: "WARC-Concurrent-To", Value: respID},
			{Name: "WARC-Block-Digest", Value: sha(req.Bytes())},
			{Name: "Content-Type", Value: "application/http;msgtype=request"},
		}, head: req.Bytes()},
	}
	respFields := warc.Header{
		{Name: "WARC-Type", Value: "response"},
		{Name: "WARC-Record-ID", Value: respID},
		{Name: "WARC-Date", Value: date},
		{Name: "WARC-Target-URI", Value: target},
		{Name: "WARC-Warcinfo-ID", Value: infoID},
	}
	if ip, _, err := net.SplitHostPort(ex.RemoteAddr); err == nil {
		respFields = append(respFields, warc.Field{Name: "WARC-IP-Address", Value: ip})
	}
	if proto := warcProtocol(ex.Proto); proto != "" {
		respFields = append(respFields, warc.Field{Name: "WARC-Protocol", Value: proto})
	}
	respFields = append(respFields,
		warc.Field{Name: "WARC-Payload-Digest", Value: warc.Digest(payload.Sum(nil))},
		warc.Field{Name: "WARC-Block-Digest", Value: warc.Digest(block.Sum(nil))},
		warc.Field{Name: "Content-Type", Value: "application/http;msgtype=response"},
	)
	w.records = append(w.records, warcPart{fields: respFields, head: resp.Bytes(), body: blob, n: size})
	for _, r := range w.records {
		w.size += warc.RecordSize(r.fields, int64(len(r.head))+r.n)
	}
	return w, nil
}

// EachRecord calls fn with each record of the export in order (warcinfo,
// request, response): its fields (without Content-Length), its block's
// size and the block, as WriteTo would write them. It is for writers that
// frame records themselves (a WACZ gzips each record on its own).
func (w *WARC) EachRecord(fn func(fields warc.Header, size int64, block io.Reader) error) error {
	for _, r := range w.records {
		block := io.Reader(bytes.NewReader(r.head))
		if r.body != nil {
			block = io.MultiReader(block, r.body)
		}
		if err := fn(r.fields, int64(len(r.head))+r.n, block); err != nil {
			return err
		}
	}
	return nil
}

// warcProtocol names the HTTP version the way WARC-Protocol does.
func warcProtocol(proto string) string {
	switch proto {
	case "HTTP/1.0":
		return "http/1.0"
	case "HTTP/1.1":
		return "http/1.1"
	case "HTTP/2.0", "HTTP/2":
		return "h2"
	}
	return ""
}

// writeHeader writes h sorted by name (first, when set, goes first), one
// line per value, with CR and LF in values replaced by spaces.
func writeHeader(b *bytes.Buffer, h http.Header, first string) {
	names := make([]string, 0, len(h))
	for k := range h {
		if k != first {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if first != "" && len(h.Values(first)) > 0 {
		names = append([]string{first}, names...)
	}
	clean := strings.NewReplacer("\r", " ", "\n", " ")
	for _, k := range names {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s: %s\r\n", k, clean.Replace(v))
		}
	}
}

// recordID derives a stable record id (a UUIDv8 URN) from the snapshot id
// and the record type, so that exporting a snapshot twice gives the same
// bytes.
func recordID(snapID, typ string) string {
	sum := sha256.Sum256([]byte("assay-warc/" + snapID + "/" + typ))
	u := sum[:16]
	u[6] = (u[6] & 0x0F) | 0x80 // version 8
	u[8] = (u[8] & 0x3F) | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(u)
	return "<urn:uuid:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32] + ">"
}
