// Package wacz writes and reads WACZ files (Webrecorder's "Web Archive
// Collection Zipped", version 1.2.0) and signs them per the WACZ Signing
// and Verification recommendation (0.1.0), with an optional RFC 3161
// timestamp.
//
// # Writing
//
// Writer streams a WACZ into any io.Writer; it never holds a page in
// memory. Entries are written in this order:
//
//	archive/data.warc.gz     WARC/1.1 records, one gzip member per record
//	…further files            added with AddFile (listed in datapackage.json)
//	indexes/index.cdxj       one CDXJ line per indexed response, sorted (bytewise)
//	pages/pages.jsonl        the header line, then one line per page
//	datapackage.json         every resource with its sha256 and size
//	datapackage-digest.json  the hash of datapackage.json and its signature
//
// The manifest comes last because it lists the hashes of everything before
// it; readers find entries through the ZIP central directory, as the WACZ
// processing model says. Every entry is stored uncompressed (the WARC is
// gzipped record by record; the JSON files are small), so that every byte
// of an entry is covered by its SHA-256, and Reader.CheckFraming can
// require exactly the framing Writer makes around them: together, no byte
// of a file Writer made can change unnoticed. Every record's gzip member starts at the offset its
// CDXJ line names, so a replay tool can fetch one record by HTTP range.
//
// # Choices where the documents leave one, and deviations
//
//   - datapackage.json's "profile" is "data-package", not the "wacz" of the
//     1.2.0 draft: ReplayWeb.page 2.5.3 (wabac.js 2.27) refuses any profile
//     but "data-package" and "wacz-package" with "Unknown package profile".
//     Everything else follows 1.2.0: no wacz_version, mainPageUrl or
//     mainPageDate; a "home" object; a CDXJ index.
//   - Searchable URLs (SURT) are computed as wabac.js computes them to look
//     a URL up: scheme removed, a leading "www" label (with digits) removed,
//     lowercased, host labels reversed and joined by commas, ":port" when
//     present, ")", the path, and the query with its parameters sorted.
//   - CDXJ "digest" is "sha256:" + hex of the payload (the CDXJ example's
//     form); "recordDigest" is the record's WARC-Block-Digest.
//   - Anonymous signing (the recommendation's first form): an ECDSA P-384
//     key, "publicKey" the base64 DER SubjectPublicKeyInfo, "signature" the
//     base64 of the IEEE P1363 (r‖s) ECDSA signature of the SHA-256 of the
//     UTF-8 bytes of "hash" — the curve, encoding and hash that
//     ArchiveWeb.page produces and wabac.js verifies (WebCrypto
//     importKey("spki", P-384), verify({ECDSA, SHA-256})). VerifySignature
//     also accepts an ASN.1 DER signature, as py-wacz does.
//   - The optional timestamp is the recommendation's "timeSignature" (an
//     RFC 3161 TimeStampToken, base64 DER) over the SHA-256 of the signature
//     bytes, with the TSA's certificates in "timestampCert" (PEM): it
//     proves that the signature, and so the digest it covers, existed by
//     the TSA's time. The recommendation's check that "created" lies within
//     10 minutes of that time is applied.
//
// Hand-written parts: the ZIP container is archive/zip and the RFC 3161
// messages are github.com/digitorus/timestamp; the WACZ layout, the CDXJ
// index and the signature format are small JSON and line formats with no
// maintained Go implementation, so they are written here.
package wacz
