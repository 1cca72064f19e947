package mpp

import (
	"testing"
)

func FuzzParseMPPChallenges(f *testing.F) {
	for _, s := range []string{
		`Payment id="abc", realm="r", method="evm", intent="charge", request="e30"`,
		`Basic realm="x", Payment id=abc, realm=r, method=evm, intent=charge, request=e30, Bearer tok==`,
		`Payment id="a\"b\\c\u00e9", realm="", method="evm", intent="charge", request="e30", opaque="x"`,
		`Payment ,,,=,"",\\, id=`, `Payment id="unterminated`, `payment`, `=`, `"`, `a=b=c, ,`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, _ := ParseChallenges([]string{s, s})
		for _, c := range cs {
			// A parsed challenge re-serialises to something that parses
			// to the same challenge.
			again, err := ParseChallenges([]string{c.String()})
			if err != nil || len(again) != 1 || again[0] != c {
				// Round trip may legitimately differ only for
				// characters we replace (controls, non-BMP).
				if clean(c) {
					t.Fatalf("round trip of %q: %+v, %v", c.String(), again, err)
				}
			}
		}
	})
}

// clean reports whether a challenge has only characters that survive
// quoting unchanged.
func clean(c Challenge) bool {
	for _, s := range []string{c.ID, c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest, c.Opaque, c.Description, c.Header} {
		for _, r := range s {
			if r < 0x20 || r == 0x7f || r > 0xffff || r == 0xfffd {
				return false
			}
		}
	}
	return true
}

func FuzzParseMPPCredential(f *testing.F) {
	f.Add("Payment " + b64url(`{"challenge":{"id":"a","realm":"r","method":"evm","intent":"charge","request":"e30"},"payload":{}}`))
	f.Add("Payment " + b64url(`{"challenge":{"opaque":{"a":"b"}},"payload":{}}`))
	f.Add("Payment !!!")
	f.Add("Payment a, Payment b")
	f.Add("Payment")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCredential(s)
		if err == nil && c != nil {
			if _, err := c.Encode(); err != nil {
				t.Fatalf("parsed credential does not encode: %v", err)
			}
		}
	})
}

func FuzzDecodeMPPReceipt(f *testing.F) {
	f.Add(b64url(`{"method":"evm","reference":"0x1","status":"success","timestamp":"2026-01-01T00:00:00Z"}`))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) { _, _ = DecodeReceipt(s) })
}
