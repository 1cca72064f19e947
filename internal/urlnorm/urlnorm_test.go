package urlnorm

import (
	"errors"
	"testing"
)

func TestDomain(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "example.com", want: "example.com"},
		{in: "Example.COM.", want: "example.com"},
		{in: "https://www.Example.com/some/path?q=1", want: "www.example.com"},
		{in: "http://example.com:8080", want: "example.com"},
		{in: "example.com:443", want: "example.com"},
		{in: "*.gov.uk", want: "gov.uk"},
		{in: "bücher.de", want: "xn--bcher-kva.de"},
		{in: "BÜCHER.DE", want: "xn--bcher-kva.de"},
		{in: "xn--bcher-kva.de", want: "xn--bcher-kva.de"},
		{in: "gov", want: "gov"},
		{in: "", bad: true},
		{in: " example.com", bad: true},
		{in: "exa mple.com", bad: true},
		{in: "user@example.com", bad: true},
		{in: "https://user:pw@example.com", bad: true},
		{in: "ftp://example.com", bad: true},
		{in: "127.0.0.1", bad: true},
		{in: "[::1]", bad: true},
		{in: "-bad-.com", bad: true},
		{in: "a..b", bad: true},
		{in: "exa$mple.com", bad: true},
		{in: "example.com:abc", bad: true},
	}
	for _, tc := range tests {
		got, err := Domain(tc.in)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Errorf("Domain(%q) = %q, %v; want an ErrInvalid error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Domain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCanonicalAndKey(t *testing.T) {
	tests := []struct {
		in, canon, key string
	}{
		{"HTTPS://WWW.Example.COM:443/a/b/?utm_source=x&id=7&gclid=abc#frag",
			"https://www.example.com/a/b/?id=7", "example.com/a/b?id=7"},
		{"http://example.com:80", "http://example.com/", "example.com/"},
		{"https://example.com:8443/x", "https://example.com:8443/x", "example.com:8443/x"},
		{"https://example.com/%7euser/%2f%c3%a9", "https://example.com/~user/%2F%C3%A9", "example.com/~user/%2F%C3%A9"},
		{"https://bücher.de/straße", "https://xn--bcher-kva.de/stra%C3%9Fe", "xn--bcher-kva.de/stra%C3%9Fe"},
		{"https://example.com./x?b=2&a=1&fbclid=z", "https://example.com/x?b=2&a=1", "example.com/x?a=1&b=2"},
		{"https://example.com/?utm_medium=m", "https://example.com/", "example.com/"},
		{"https://127.0.0.1:8080/p", "https://127.0.0.1:8080/p", "127.0.0.1:8080/p"},
	}
	for _, tc := range tests {
		c, err := Canonical(tc.in)
		if err != nil || c != tc.canon {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, c, err, tc.canon)
		}
		k, err := Key(tc.in)
		if err != nil || k != tc.key {
			t.Errorf("Key(%q) = %q, %v; want %q", tc.in, k, err, tc.key)
		}
	}
	same := [][2]string{
		{"http://www.example.com/page/", "https://example.com/page"},
		{"https://example.com/page?utm_campaign=x#section", "https://EXAMPLE.com/page"},
		{"https://example.com/a%2db", "https://example.com/a-b"},
		{"https://example.com/?b=1&a=2", "https://example.com?a=2&b=1"},
	}
	for _, p := range same {
		a, _ := Key(p[0])
		b, _ := Key(p[1])
		if a == "" || a != b {
			t.Errorf("Key(%q)=%q and Key(%q)=%q should be equal", p[0], a, p[1], b)
		}
	}
	for _, bad := range []string{"", "mailto:a@b.c", "javascript:alert(1)", "https://", "https://u:p@example.com/", "/relative", "https://exa mple.com/"} {
		if _, err := Canonical(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Canonical(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestHostAndRegistrable(t *testing.T) {
	if h := Host("https://WWW.Example.com:8443/x"); h != "www.example.com" {
		t.Fatalf("Host = %q", h)
	}
	if h := Host("not a url"); h != "" {
		t.Fatalf("Host(bad) = %q", h)
	}
	match := []struct {
		host, domain string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"news.example.com", "example.com", true},
		{"badexample.com", "example.com", false},
		{"example.com", "news.example.com", false},
		{"", "example.com", false},
	}
	for _, m := range match {
		if got := HostMatches(m.host, m.domain); got != m.want {
			t.Errorf("HostMatches(%q, %q) = %v", m.host, m.domain, got)
		}
	}
	if !MatchesAny("a.b.gov.uk", []string{"x.com", "gov.uk"}) || MatchesAny("a.com", nil) {
		t.Fatal("MatchesAny")
	}
	reg := map[string]string{
		"news.bbc.co.uk":      "bbc.co.uk",
		"www.example.com":     "example.com",
		"a.b.example.com":     "example.com",
		"example.com":         "example.com",
		"user.github.io":      "user.github.io",
		"co.uk":               "co.uk",
		"127.0.0.1":           "127.0.0.1",
		"":                    "",
		"xn--bcher-kva.de":    "xn--bcher-kva.de",
		"docs.cdc.gov":        "cdc.gov",
		"EN.Wikipedia.ORG.":   "wikipedia.org",
		"localhost":           "localhost",
		"deep.sub.nhs.uk":     "sub.nhs.uk",
		"service.gov.au":      "service.gov.au",
		"blog.service.gov.au": "service.gov.au",
	}
	for in, want := range reg {
		if got := Registrable(in); got != want {
			t.Errorf("Registrable(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=c#d", "http://[::1]:80/", "https://%zz", "http://a.b/%", "https://ü.de/ü?ü=ü", "http://0\xbc", "http://ü.0?  #"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Canonical(s)
		if err != nil {
			return
		}
		// Canonical is idempotent and keys agree.
		c2, err := Canonical(c)
		if err != nil || c2 != c {
			t.Fatalf("Canonical not idempotent: %q -> %q -> %q (%v)", s, c, c2, err)
		}
		k1, _ := Key(s)
		k2, _ := Key(c)
		if k1 != k2 {
			t.Fatalf("keys differ: %q vs %q", k1, k2)
		}
	})
}
