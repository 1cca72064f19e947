// Package evidence makes and checks evidence bundles: a WACZ file that
// lets anyone show a third party, offline and for as long as they keep it,
// that a verdict rested on the pages it cites and that its counted quotes
// were on them.
//
// # What a bundle holds
//
// A bundle is a WACZ (package snapshot/wacz) holding:
//
//   - archive/data.warc.gz: for every page captured for the verification
//     (standard, deep and research: the result's snapshots; quick: the
//     pages it fetched, which its result does not list) a warcinfo,
//     request and response record, exactly the snapshot's WARC export
//     (snapshot.Service.WARC), each record its own gzip member; the
//     response's WARC-Payload-Digest is the snapshot's rawSha256;
//   - indexes/index.cdxj and pages/pages.jsonl, so replay tools
//     (ReplayWeb.page) open the pages;
//   - assay/result.json: the result as the exact bytes delivered — what
//     the receipt's resultSha256 covers (Manifest.Result.Form says whether
//     they are the result itself, an A2A JSON-RPC answer carrying it, or a
//     niche evaluation answer);
//   - assay/receipt.json: the order's signed receipt (none for a
//     subscriber's read of a niche evaluation);
//   - assay/jwks.json: the publisher's JWKS when the bundle was made (the
//     receipt keys and the bundle keys);
//   - assay/bundle.json: the Manifest (kind, ids, order, pages, the
//     signing key's id, whether it is timestamped);
//   - datapackage.json (every file's sha256 and size) and
//     datapackage-digest.json, signed with the publisher's ECDSA P-384
//     bundle key (anonymous signing, WACZ Signing and Verification), with
//     an RFC 3161 timestamp when a TSA is configured.
//
// # Checking
//
// Check follows the chain in order and names the first link that breaks:
// the ZIP layout; every resource digest and every WARC record's digests;
// the signature (with a key published in the JWKS given, or in the
// bundle's own), and the timestamp when present; the receipt's Ed25519
// signature; resultSha256 against the result's bytes; every evidence
// item's snapshot hash against a WARC record's payload digest; every
// counted quote against that record's text, normalised as the capture did
// (snapshot.Normalize) and matched with the engine's matcher
// (snapshot.Matcher). examples/bundlecheck is the command-line form.
//
// # What it proves, and what not
//
// With the publisher's JWKS obtained independently (-jwks), an intact
// bundle proves that the publisher signed these pages, this result and
// this receipt together; that the receipt's payment bought exactly these
// result bytes; and that every quote the verdict counted occurs in the
// archived page whose hash the result names. It does not prove that a
// website served those bytes (HTTP has no signatures: the capture is the
// publisher's word, as any web archive's), nor when the bundle was made:
// "created" is the publisher's word unless an RFC 3161 timestamp from a
// TSA you trust dates the signature. Without -jwks it proves only that
// the bundle is consistent: anyone can make a consistent bundle with keys
// of their own.
//
// # Choices
//
// Quick pages are matched to evidence by URL exactly as the engine
// matched them (urlnorm.Key of the requested and final URL), through the
// manifest's page list, because a quick result lists no snapshots. Niche
// bundles check each signal's snapshot hash; the catalogue engine counts
// no quotes (curators review excerpts), so none is checked. A purged page
// makes Prepare fail with ErrEvidenceGone before any byte is written.
package evidence
