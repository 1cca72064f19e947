// Package mpp is the wire form of MPP, the "Payment" HTTP authentication
// scheme: challenges (WWW-Authenticate, RFC 9110 auth-params), credentials
// (Authorization), receipts (Payment-Receipt), the stateless HMAC challenge
// id, the request and payload objects of the evm and stripe charge
// methods, and the RFC 9530 body digest a challenge binds.
//
// The header parser is hand-written: no Go library parses the RFC 9110
// challenge list with token68 and quoted-string escapes as mppx emits
// them. JSON canonicalisation (RFC 8785) uses gowebpki/jcs.
package mpp
