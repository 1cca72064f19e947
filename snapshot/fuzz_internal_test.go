package snapshot

import (
	"strings"
	"testing"
)

// The fuzz targets check that no input makes these functions panic and
// that their outputs keep their invariants. Run with -fuzz to explore.

func FuzzNormalize(f *testing.F) {
	for _, v := range docVectors() {
		f.Add([]byte(v.body), v.contentType)
	}
	f.Add([]byte(`{"a":[1e400]}`), "application/json")
	f.Add([]byte("\xff\xfe<\x00p\x00>\x00"), "text/html")
	f.Add([]byte(`<meta charset="x-user-defined"><svg><p>t</svg>`), "text/html")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		nz := Normalize(body, ct)
		if nz == nil {
			return
		}
		if nz.SHA256 != RawSHA256([]byte(nz.Text)) {
			t.Fatal("hash does not cover the text")
		}
		mt, _ := parseContentType(ct)
		if mediaKind(mt) != kindJSON && (strings.HasPrefix(nz.Text, " ") || strings.HasSuffix(nz.Text, " ") || strings.Contains(nz.Text, "  ")) {
			t.Fatalf("whitespace not collapsed: %q", nz.Text)
		}
		again := Normalize(body, ct)
		if again.Text != nz.Text {
			t.Fatal("not deterministic")
		}
	})
}

func FuzzContains(f *testing.F) {
	f.Add("Base chain id is 8453.", "chain id … 8453")
	f.Add("x", "...")
	f.Fuzz(func(t *testing.T, text, excerpt string) {
		m := NewMatcher(text)
		got := m.Contains(excerpt)
		if got && !m.Contains(strings.ToUpper(excerpt)) && strings.ToUpper(excerpt) == strings.ToLower(strings.ToUpper(excerpt)) {
			t.Fatal("case changed the outcome")
		}
		if NewMatcher(text).Contains(text) != (canonTokens(text) != "") && !strings.Contains(text, "…") && !strings.Contains(text, "...") {
			t.Fatalf("a text does not contain itself: %q", text)
		}
	})
}

func FuzzCheckURL(f *testing.F) {
	f.Add("http://127.1:80/")
	f.Add("http://[::ffff:127.0.0.1]/")
	f.Add("http://0x7f.0x0.0.01/")
	f.Fuzz(func(t *testing.T, raw string) {
		g := &guard{ports: map[int]bool{80: true, 443: true}}
		u, err := g.checkURL(raw)
		if err != nil {
			if _, ok := asBlocked(err); !ok {
				t.Fatalf("non-blocked error %v", err)
			}
			return
		}
		// Whatever passes must be http(s) without user info, with a host
		// that is either a name or an allowed public address.
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Hostname() == "" {
			t.Fatalf("%q passed as %v", raw, u)
		}
		if ip, isIP, err := parseHostIP(u.Hostname()); err == nil && isIP && classifyIP(ip) != "" {
			t.Fatalf("%q passed with forbidden address %s", raw, ip)
		}
	})
}
