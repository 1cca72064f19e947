// Package ids makes the prefixed identifiers and secret tokens used throughout
// assay, and hashes secrets for storage.
//
// Identifiers are a prefix plus 32 lowercase hex digits (128 random bits), for
// example "cv_3f2a…". Tokens are a prefix plus the unpadded base64url encoding
// of 32 random bytes, for example "ort_…"; they are shown once and only their
// SHA-256 is stored.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
)

// Prefixes used by assay. Keep them here so that formats are checked in one place.
const (
	Niche        = "niche_"
	Signal       = "sig_"
	Verification = "cv_"
	Snapshot     = "snap_"
	Order        = "ord_"
	OrderToken   = "ort_"
	Receipt      = "rcpt_"
	Quote        = "quo_"
	Customer     = "cus_"
	CustomerKey  = "ask_"
	Subscriber   = "nd_"
	Session      = "nds_"
)

// New returns prefix followed by 32 random lowercase hex digits.
func New(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + hex.EncodeToString(b[:])
}

// Token returns prefix followed by 32 random bytes in unpadded base64url.
func Token(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Valid reports whether id is prefix followed by exactly 32 lowercase hex digits.
func Valid(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidToken reports whether token is prefix followed by the 43 characters
// of 32 bytes in unpadded base64url (the form Token makes).
func ValidToken(prefix, token string) bool {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok || len(rest) != 43 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Hash returns the lowercase hex SHA-256 of a secret, the form in which
// tokens and keys are stored.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Equal compares two strings in constant time (for hashes and keys).
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// Pattern is the regular expression (RE2 and ECMA-262 alike, anchored) of
// the identifiers with prefix that Valid accepts, for JSON Schemas.
func Pattern(prefix string) string {
	return "^" + regexp.QuoteMeta(prefix) + "[0-9a-f]{32}$"
}
