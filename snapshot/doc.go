// Package snapshot captures URLs safely, hashes what it captured in a
// reproducible way, and stores the records and bytes so that anyone can
// re-check a piece of evidence later.
//
// # Pieces
//
//   - Capturer fetches URLs (Capture, and CaptureAll for many at once under
//     one deadline) and returns one Snapshot record per URL — the interface
//     document's EvidenceSnapshot. Failures are records too.
//   - Service ties a Capturer to a Store (records) and a BlobStore
//     (content, addressed by rawSha256): Capture, CaptureAll, Get, Open,
//     Recheck, WARC, Purge. The claims engine calls CaptureAll.
//   - FileBlobStore is the default BlobStore; store/snapshotstore
//     implements both Store and BlobStore (the database blob store is for
//     several instances sharing one database); package snapshotmem has
//     in-memory ones, and package snapshottest a table resolver, a dial
//     tripwire and the conformance suites for tests.
//   - Normalize computes the normalised text and its hash (algorithm
//     below); Snapshot.Contains and Matcher check quoted excerpts against
//     it.
//   - Package snapshot/warc writes and reads WARC/1.1; Service.WARC
//     exports a snapshot as warcinfo, request and response records.
//
// # Safety
//
// A capture may only reach the public web:
//
//   - Only http and https URLs, with a host and without user information.
//     Ports 80 and 443 only, unless Options.AllowedPorts says otherwise.
//   - Hosts are read the way browsers read them: 127.1, 2130706433,
//     0x7f.1 and 0177.0.0.1 are 127.0.0.1 (the WHATWG URL standard's IPv4
//     parser), IPv6 literals may not carry zones, and "localhost" and
//     "*.localhost" are refused without a lookup.
//   - Every address is checked when it is dialled, in the net.Dialer's
//     Control hook, after name resolution and right before connect(2), so
//     DNS rebinding cannot slip past an earlier check. Refused: every
//     block of the IANA IPv4 and IPv6 special-purpose address registries
//     (loopback, private, shared/CGNAT, link-local, "this network",
//     documentation, benchmarking, IETF protocol assignments, 6to4 relay,
//     AS112, AMT, discard-only, ORCHID/Teredo, SRv6), multicast, reserved
//     240/4 and broadcast, the unspecified addresses, IPv4-mapped and
//     IPv4-compatible IPv6, NAT64 (64:ff9b::/96 and 64:ff9b:1::/48),
//     unique-local and site-local IPv6, cloud metadata endpoints
//     (169.254.169.254 and fd00:ec2::254 fall in those blocks;
//     168.63.129.16 is listed explicitly), and any IPv6 address outside
//     global unicast 2000::/3.
//   - Proxies from the environment are ignored. Redirects are followed by
//     hand up to Options.MaxRedirects (5), each hop checked again (scheme,
//     user information, port, host) and its address checked at dial time.
//   - Refusals end as status "blocked" with the reason in failureReason,
//     and no connection to a refused address is attempted.
//
// Options.AllowAddrs (exact "ip:port" pairs) is the only way past the
// address and port checks; Options.HostMap ("host:port" → "ip:port",
// applied before the check) lets a demo corpus serve realistic
// http://docs.example.org/ URLs from one loopback server. Tests inject
// Options.Resolver and use Options.DialControl as a tripwire so that no
// test can send traffic off the machine.
//
// # Limits and retries
//
// Per capture: Options.CaptureTimeout (15 s) covers every attempt,
// redirect and the body; CaptureAll adds Options.BatchTimeout (60 s) and
// the caller's deadline, runs Options.Concurrency (20) captures at once,
// and returns one record per URL in input order (captures still running at
// the deadline are "failed" with "capture deadline exceeded"). Connections
// to one host are limited by Options.MaxPerHost, which defaults to the
// concurrency: URLs that share a host are fetched all at once, not in
// rounds (set it lower to be gentler with sites). Bodies are
// read as a stream, hashed on the way, and staged in memory up to 256 KiB,
// then in a temporary file; at Options.MaxBytes (5,000,000 bytes, counted
// after content decoding) reading stops and the capture ends as
// "too_large" (a declared Content-Length above the limit ends it before
// reading). Media types outside Options.ContentTypes (HTML, XHTML, text/*,
// JSON and +json, XML and +xml, PDF) end as "unsupported"; a response
// without Content-Type is sniffed (net/http's implementation of the WHATWG
// algorithm) and the sniffed type is recorded. SVG (image/svg+xml) is not
// captured by default. Connection errors, 429 and 5xx other than 501 are
// retried (Options.Retries, 2) through go-retryablehttp with jittered
// exponential backoff (200 ms to 2 s); a Retry-After is honoured up to
// Options.RetryWaitMax, and no wait outlasts the capture's deadline (the
// last response is reported instead). Requests carry an identifying
// User-Agent (DefaultUserAgent), an Accept header preferring HTML, JSON,
// text, XML and PDF, and Accept-Encoding "gzip, deflate, br".
//
// # Record fields (choices the interface documents leave open)
//
//   - snapshotId: "snap_" and 32 hex digits, random: unguessable.
//   - requestedUrl: exactly as given. finalUrl: the URL, without
//     fragment, whose response the record describes — the requested URL
//     or the last redirect target that answered; httpStatus, contentType,
//     retrievedAt and the WARC export are of that same response. It is
//     null exactly when httpStatus is null: no response arrived (the
//     requested URL was refused, by the URL check or at connect time, or
//     its lookup or connection failed). A redirect target that is refused
//     or fails never answered, so finalUrl stays at the hop that
//     redirected (its 3xx in httpStatus) and failureReason names the
//     target: "redirect to <url> refused: <reason>" or "redirect to <url>
//     failed: <reason>". An auditor can thus rely on finalUrl and
//     httpStatus describing one real exchange.
//   - retrievedAt: when the final response's headers arrived (the fetch
//     time), UTC, microsecond precision; for captures that got no response,
//     when the capture started.
//   - httpStatus and contentType: of the last response (contentType as
//     declared, or as sniffed when none was declared).
//   - contentLength: for "captured", the number of content bytes stored
//     (after content decoding); for "too_large" and "unsupported", the
//     declared Content-Length when the body was not content-encoded; else
//     null.
//   - rawSha256: lowercase hex SHA-256 of the entity body after transfer
//     decoding (chunked) and content decoding (gzip, deflate, br) — the
//     decoded entity. It is exactly what the content endpoint serves and
//     what the WARC export's WARC-Payload-Digest covers; the bytes as
//     compressed on the wire are not kept.
//   - normalizedSha256: lowercase hex SHA-256 of the normalised text
//     (below); null for PDF (text extraction is not implemented yet) and
//     for failed captures.
//   - failureReason: a short English sentence ("HTTP 404 Not Found",
//     "address 127.0.0.1 is loopback (127.0.0.0/8)", "timed out after 15s",
//     "body exceeds the limit of 5000000 bytes", ...).
//
// Records are immutable once written. Stores keep Exchange (the final
// hop's request and response headers and the dialled address, for the
// WARC export), Charset and Normalization, but not Text: a record loaded
// from a store has an empty Text, and Service.Recheck re-derives it from
// the stored content (verifying both hashes on the way). Records made by
// Capture/CaptureAll in this process carry Text, so the claims engine can
// call Contains right after capturing.
//
// Retrieval over HTTP (package server) is public, without credentials:
// snapshot ids are 128-bit random capabilities that only appear in the
// results that cite them, the content is public web content, and anyone a
// result is shared with must be able to check its evidence. Content is
// served inert (attachment, nosniff, "sandbox" CSP, text/plain or
// application/octet-stream only).
//
// Retention: records and content are kept for Options.Retention (30 days,
// the documented retention). Service.Purge(ctx, before) deletes records
// retrieved before the given time, then every blob last stored before it
// that no record uses; PurgeExpired and RunPurger apply the retention.
// A record store that is a HoldStore lets an owner exempt records from
// that purge (Service.Hold) and hand them back (Service.Release): the
// niche catalogue holds the captures of its evidence for as long as an
// evaluation uses them, so they follow the evaluation's lifecycle rather
// than the 30 days of claims.
//
// # Normalisation, version assay-norm/1
//
// normalizedSha256 is the SHA-256 of the UTF-8 bytes of the normalised
// text, computed from the stored content (rawSha256's bytes) and the
// response's Content-Type as follows. Media types are compared in lower
// case without parameters.
//
// 1. Kind. text/html and application/xhtml+xml are HTML.
// application/json and application/*+json are JSON. application/xml,
// text/xml and any */*+xml are XML. Any other text/* is text. Everything
// else (PDF included) has no normalised form: normalizedSha256 is null.
//
// 2. JSON. The body, without a leading UTF-8 byte order mark, must be
// valid UTF-8 and exactly one JSON value (RFC 8259) with unique member
// names, numbers within IEEE 754 double range, no unpaired surrogate
// escapes and at most 1000 levels of nesting. Then the normalised text is
// its RFC 8785 (JCS) serialisation — members sorted by UTF-16 code units,
// numbers in ECMAScript form, strings escaping only '"', '\' and U+0000..
// U+001F — and nothing else is applied. A body that fails these checks is
// treated as text (steps 3 and 5).
//
// 3. Character encoding (HTML, XHTML, XML, text). The first rule that
// applies decides: (a) a byte order mark: EF BB BF UTF-8, FE FF UTF-16BE,
// FF FE UTF-16LE (removed); (b) the Content-Type charset parameter, if it
// is a label of the WHATWG Encoding Standard (so "iso-8859-1", "latin1"
// and "ascii" mean windows-1252); (c) what the document declares in its
// first 1024 bytes — text and JSON: nothing is read; HTML, XHTML and XML:
// first a UTF-16 XML declaration without byte order mark (bytes 3C 00 3F
// 00 78 00 mean UTF-16LE, 00 3C 00 3F 00 78 UTF-16BE), then, for
// text/html only, a <meta charset> or <meta http-equiv="content-type"
// content="...charset=..."> found as the HTML Standard's prescan does (a
// declared UTF-16 means UTF-8, x-user-defined means windows-1252), then
// the encoding of an XML declaration at the very start, read as the HTML
// Standard's "get an XML encoding" reads it: the body starts with
// "<?xml"; "encoding" occurs before the first ">"; then optional bytes up
// to 0x20, "=", optional bytes up to 0x20 and a label in single or double
// quotes without bytes up to 0x20, ending before that ">" (a UTF-16 label
// means UTF-8). So text/html follows the HTML Standard (a <meta> wins over
// an XML declaration, which is the fallback), while application/xhtml+xml
// follows the XML rules that browsers apply to it (its XML declaration
// counts and <meta> is ignored); (d) UTF-8 if the whole body is valid
// UTF-8; (e) windows-1252. Decoding follows the Encoding Standard;
// malformed UTF-8 becomes U+FFFD per maximal subpart.
//
// 4. HTML text. The decoded document is parsed with the HTML standard's
// tree construction (scripting enabled). The text nodes are concatenated
// in document order, skipping script, style, noscript and template
// elements and every element in the SVG namespace, with all their
// descendants; comments and the doctype contribute nothing; character
// references are decoded by the parser; <title> counts. One U+0020 is
// written before and after each of these elements (block elements, which
// separate words): address, article, aside, blockquote, body, br,
// button, caption, dd, details, dialog, div, dl, dt, fieldset,
// figcaption, figure, footer, form, h1–h6, head, header, hgroup, hr,
// html, img, legend, li, main, menu, nav, ol, optgroup, option, p, pre,
// section, select, summary, table, tbody, td, textarea, tfoot, th, thead,
// title, tr, ul. Other elements (a, b, span, ...) join their text
// without a space. A document nested more than 512 elements deep (the
// parser's limit) is read token by token instead, with the same rules.
//
// 5. Finishing (HTML, XML, text). The text is put in Unicode
// Normalization Form C (Unicode 15.0.0 tables), then every run of
// characters with the Unicode White_Space property (including U+00A0 and
// line breaks) becomes one U+0020, and leading and trailing spaces are
// removed. XML and text get no markup processing: their normalised text is
// the decoded document with step 5 applied.
//
// The Unicode version is pinned by a test, not by the code:
// golang.org/x/text/unicode/norm picks its tables by Go release (15.0.0
// up to Go 1.26, 17.0.0 from Go 1.27), and the White_Space property and
// case folding come from the standard library's unicode package. A test
// fails when either reports a version other than the one stated above, so
// a toolchain upgrade that changes the tables is a deliberate change of
// this document (and of NormalizationVersion, if hashes of previously
// unassigned characters could change), not a silent one.
//
// Revisions of assay-norm/1 before the first release (the name was kept
// because no hash had been published): XHTML is decoded by its XML
// declaration rather than by <meta>, text/html falls back to an XML
// declaration when no <meta> declares an encoding, and a UTF-16 XML
// declaration without byte order mark is recognised; an XML declaration
// naming UTF-16 now means UTF-8.
//
// # Test vectors
//
// Each line: Content-Type; body (Go string syntax); normalised text;
// normalizedSha256. More, with bodies in base64, are in
// testdata/normalization.json (HTML in UTF-8, windows-1252 by header,
// Shift_JIS and ISO-8859-2 by <meta>, UTF-16LE by byte order mark,
// windows-1251 by XML declaration, the fallbacks; XHTML in Shift_JIS by
// XML declaration despite a <meta>; JSON; text in KOI8-R; XML by
// declaration; PDF).
//
//	text/html; charset=utf-8
//	"<p>Hello,&nbsp;<b>wor</b>ld!</p><script>x()</script><p>Caf&eacute;</p>"
//	"Hello, world! Café"
//	4aafa666911d0d2c1673e9865785cc3a83cfcba20f33dc4c56fbff7fe35710a0
//
//	application/json
//	`{"b": 2, "a": [1.50, "x"]}`
//	`{"a":[1.5,"x"],"b":2}`
//	9d2d5023722806603b789c1acf2a8e3be1cd88e46fab93731a1cc82a7d083554
//
//	text/plain; charset=windows-1252
//	"caf\xe9  \r\n au lait"
//	"café au lait"
//	7c413039fbb2248e2b18b98e7a8d4d85bdcac7cd79b9477a0923f97e3a1f2b50
//
//	application/xhtml+xml
//	"<?xml version='1.0' encoding='Shift_JIS'?><p>\x93\xfa\x96{\x8c\xea</p>"
//	"日本語"
//	77710aedc74ecfa33685e33a6c7df5cc83004da1bdcef7fb280f5c2b2e97e0a5
//
// # Excerpts
//
// Snapshot.Contains(excerpt) reports whether a quoted excerpt occurs in
// the normalised text, tolerant of case, whitespace, Unicode form,
// typographic quotes and dashes, and ellipses (a gap: each part must
// appear, in order), strict about words and numbers: "8453" does not match
// "84530", "8,453" or "8.453", and "not" can neither vanish nor appear.
// Matcher documents the exact rules. JSON snapshots are searched with
// their string escapes resolved.
//
// # WARC export
//
// Service.WARC writes WARC/1.1: a warcinfo record (software, format, the
// snapshot id, both hashes, the normalisation version and charset), the
// request as sent, and the response with the stored content as its
// payload. Because the payload is the decoded entity, the response's
// Content-Encoding, Transfer-Encoding and Content-Length headers are
// replaced by a Content-Length for the stored bytes, their original values
// kept as X-Assay-Original-*; the status line is written as HTTP/1.1 and
// the protocol used goes in WARC-Protocol. WARC-Payload-Digest and
// WARC-Block-Digest are "sha256:" + RFC 4648 base32 (the encoding of the
// specification's examples and of warcio); WARC-Payload-Digest decodes to
// the bytes of rawSha256. Record ids are derived from the snapshot id, so
// exporting twice gives identical bytes.
package snapshot
