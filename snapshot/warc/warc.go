// Package warc writes and reads WARC/1.1 records (ISO 28500:2017, "WARC
// File Format 1.1"), enough to export URL snapshots and to check exports
// independently of the writer.
//
// A record is a version line, named fields, an empty line, a block of
// exactly Content-Length bytes, and two CRLFs:
//
//	WARC/1.1\r\n
//	WARC-Type: response\r\n
//	...
//	Content-Length: 1234\r\n
//	\r\n
//	<block>\r\n
//	\r\n
//
// Digests are written as "sha256:" followed by the RFC 4648 base32 form
// (uppercase, padded) of the SHA-256 — the encoding the WARC 1.1
// specification's examples use for its labelled digests and what common
// tools (warcio, wget) write. ParseDigest also reads base16 and base64.
package warc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Version is the version line written.
const Version = "WARC/1.1"

// Field is one named field of a record header. Order is kept as written.
type Field struct {
	Name, Value string
}

// Header is a record header: the fields in order.
type Header []Field

// Get returns the value of the first field named name (case-insensitive).
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Digest formats a SHA-256 as a WARC labelled digest: "sha256:" + base32.
func Digest(sum []byte) string {
	return "sha256:" + base32.StdEncoding.EncodeToString(sum)
}

// ParseDigest splits a labelled digest into its algorithm (lowercased) and
// raw bytes. The value may be base32, base16 (hex) or base64.
func ParseDigest(v string) (string, []byte, error) {
	alg, val, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok || alg == "" || val == "" {
		return "", nil, fmt.Errorf("warc: malformed digest %q", v)
	}
	alg = strings.ToLower(alg)
	want := 0
	switch alg {
	case "sha256", "sha-256":
		alg, want = "sha256", sha256.Size
	case "sha1", "sha-1":
		alg, want = "sha1", 20
	}
	for _, dec := range []func(string) ([]byte, error){
		func(s string) ([]byte, error) { return base32.StdEncoding.DecodeString(strings.ToUpper(s)) },
		func(s string) ([]byte, error) {
			return base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(s))
		},
		hex.DecodeString,
		base64.StdEncoding.DecodeString,
		base64.RawStdEncoding.DecodeString,
	} {
		if b, err := dec(val); err == nil && (want == 0 || len(b) == want) {
			return alg, b, nil
		}
	}
	return "", nil, fmt.Errorf("warc: cannot decode digest %q", v)
}

// validFieldName reports whether name is an RFC 9110 token.
func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// WriteRecord writes one record. fields must not contain Content-Length
// (it is written last, from size); block must yield exactly size bytes.
// It returns the number of bytes written.
func WriteRecord(w io.Writer, fields Header, size int64, block io.Reader) (int64, error) {
	var head bytes.Buffer
	head.WriteString(Version + "\r\n")
	for _, f := range fields {
		if !validFieldName(f.Name) || strings.ContainsAny(f.Value, "\r\n") {
			return 0, fmt.Errorf("warc: invalid field %q", f.Name)
		}
		if strings.EqualFold(f.Name, "Content-Length") {
			return 0, errors.New("warc: Content-Length is written from size")
		}
		head.WriteString(f.Name + ": " + f.Value + "\r\n")
	}
	head.WriteString("Content-Length: " + strconv.FormatInt(size, 10) + "\r\n\r\n")
	n, err := w.Write(head.Bytes())
	total := int64(n)
	if err != nil {
		return total, err
	}
	m, err := io.CopyN(w, block, size)
	total += m
	if err != nil {
		return total, fmt.Errorf("warc: block: %w", err)
	}
	n, err = io.WriteString(w, "\r\n\r\n")
	return total + int64(n), err
}

// RecordSize is the number of bytes WriteRecord writes for fields and a
// block of size bytes.
func RecordSize(fields Header, size int64) int64 {
	n := int64(len(Version) + 2)
	for _, f := range fields {
		n += int64(len(f.Name) + 2 + len(f.Value) + 2)
	}
	n += int64(len("Content-Length: ")+len(strconv.FormatInt(size, 10))) + 4
	return n + size + 4
}

// Record is a record read by Reader. Block reads the record's block and is
// valid until the next call of Reader.Next.
type Record struct {
	Version string
	Header  Header
	Size    int64
	Block   io.Reader
}

// Reader reads records from a WARC stream (uncompressed).
type Reader struct {
	br   *bufio.Reader
	cur  *io.LimitedReader
	rec  int
	done bool
}

// NewReader returns a reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r)}
}

// maxHeaderBytes bounds one record header.
const maxHeaderBytes = 1 << 20

// Next returns the next record, or io.EOF after the last one. The format
// is checked strictly: version line, field syntax, Content-Length, and the
// CRLF CRLF after each block.
func (r *Reader) Next() (*Record, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.cur != nil {
		if _, err := io.Copy(io.Discard, r.cur); err != nil {
			return nil, err
		}
		var end [4]byte
		if _, err := io.ReadFull(r.br, end[:]); err != nil || string(end[:]) != "\r\n\r\n" {
			return nil, fmt.Errorf("warc: record %d: block not followed by CRLF CRLF", r.rec)
		}
		r.cur = nil
	}
	if _, err := r.br.Peek(1); err == io.EOF {
		r.done = true
		return nil, io.EOF
	}
	r.rec++
	read := 0
	line := func() (string, error) {
		s, err := r.br.ReadString('\n')
		read += len(s)
		if err != nil {
			return "", fmt.Errorf("warc: record %d: truncated header", r.rec)
		}
		if read > maxHeaderBytes {
			return "", fmt.Errorf("warc: record %d: header too long", r.rec)
		}
		if !strings.HasSuffix(s, "\r\n") {
			return "", fmt.Errorf("warc: record %d: header line not ended by CRLF", r.rec)
		}
		return strings.TrimSuffix(s, "\r\n"), nil
	}
	v, err := line()
	if err != nil {
		return nil, err
	}
	if v != "WARC/1.1" && v != "WARC/1.0" {
		return nil, fmt.Errorf("warc: record %d: bad version line %q", r.rec, v)
	}
	rec := &Record{Version: v, Size: -1}
	for {
		l, err := line()
		if err != nil {
			return nil, err
		}
		if l == "" {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(rec.Header) > 0 {
			// Continuation line (allowed by the grammar, never written here).
			rec.Header[len(rec.Header)-1].Value += " " + strings.TrimSpace(l)
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || !validFieldName(name) {
			return nil, fmt.Errorf("warc: record %d: malformed field %q", r.rec, l)
		}
		rec.Header = append(rec.Header, Field{Name: name, Value: strings.TrimSpace(value)})
	}
	cl := rec.Header.Get("Content-Length")
	size, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("warc: record %d: bad Content-Length %q", r.rec, cl)
	}
	for _, req := range []string{"WARC-Record-ID", "WARC-Type", "WARC-Date"} {
		if rec.Header.Get(req) == "" {
			return nil, fmt.Errorf("warc: record %d: missing %s", r.rec, req)
		}
	}
	rec.Size = size
	r.cur = &io.LimitedReader{R: r.br, N: size}
	rec.Block = r.cur
	return rec, nil
}
