package utf8repair

import "testing"

// The replacements Python's bytes.decode("utf-8", "replace") makes.
func TestStringMatchesPython(t *testing.T) {
	for in, want := range map[string]string{
		"abc":                      "abc",
		"\xe2\x82":                 "\ufffd",
		"\xe2\x82A":                "\ufffdA",
		"\xed\xa0\x80":             "\ufffd\ufffd\ufffd",
		"\xe0\x80\x80":             "\ufffd\ufffd\ufffd",
		"\xc0\xaf":                 "\ufffd\ufffd",
		"\xff\xfe":                 "\ufffd\ufffd",
		"\xf0\x9f\x98\x80\xf0\x9f": "😀\ufffd",
		"é\xa9":                    "é\ufffd",
	} {
		if got := String([]byte(in)); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
