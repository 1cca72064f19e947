package snapshot

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

type vector struct {
	Name        string  `json:"name"`
	ContentType string  `json:"contentType"`
	BodyBase64  string  `json:"bodyBase64"`
	Text        *string `json:"text"`
	SHA256      *string `json:"sha256"`
}

// TestNormalizationVectors checks the published test vectors: the
// expected texts were written by hand and hashed independently (Python's
// hashlib), so they pin the algorithm, not this implementation.
func TestNormalizationVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/normalization.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 10 {
		t.Fatalf("only %d vectors", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			body, err := base64.StdEncoding.DecodeString(v.BodyBase64)
			if err != nil {
				t.Fatal(err)
			}
			got := Normalize(body, v.ContentType)
			if v.Text == nil {
				if got != nil {
					t.Fatalf("want no normalised form, got %q", got.Text)
				}
				return
			}
			if got == nil {
				t.Fatal("no normalised form")
			}
			if diff := cmp.Diff(*v.Text, got.Text); diff != "" {
				t.Fatalf("text (-want +got):\n%s", diff)
			}
			if got.SHA256 != *v.SHA256 || got.Version != NormalizationVersion {
				t.Fatalf("hash %s (%s), want %s", got.SHA256, got.Version, *v.SHA256)
			}
		})
	}
}

// TestDocVectors keeps the vectors printed in the package documentation
// honest.
func TestDocVectors(t *testing.T) {
	for _, v := range docVectors() {
		got := Normalize([]byte(v.body), v.contentType)
		if got == nil || got.Text != v.text || got.SHA256 != v.sha256 {
			t.Errorf("%q: got %+v, want %q %s", v.body, got, v.text, v.sha256)
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	good := map[string]string{
		`0`:                             `0`,
		`-0.0`:                          `0`,
		`1e21`:                          `1e+21`,
		`1e20`:                          `100000000000000000000`,
		`123e-9`:                        `1.23e-7`,
		`0.1`:                           `0.1`,
		`-1.5E+2`:                       `-150`,
		`9007199254740993`:              `9007199254740992`,
		`1.7976931348623157e308`:        `1.7976931348623157e+308`,
		`5e-324`:                        `5e-324`,
		`"\u0000\u001f\u007f\/"`:        `"\u0000\u001f` + "\x7f" + `/"`,
		`"\b\f\n\r\t"`:                  `"\b\f\n\r\t"`,
		`{"\u00e9":1,"e":2,"E":3}`:      `{"E":3,"e":2,"é":1}`,
		`{"\ud800\udc00":1,"\uffff":2}`: `{"𐀀":1,"` + "\uffff" + `":2}`,
		" [ true , false , null ] ":     `[true,false,null]`,
		`{"a":{"c":[],"b":{}}}`:         `{"a":{"b":{},"c":[]}}`,
	}
	for in, want := range good {
		got, ok := canonicalJSON([]byte(in))
		if !ok || got != want {
			t.Errorf("canonicalJSON(%s) = %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a":1,"a":2}`, `01`, `1.`, `.5`, `+1`, `1e`, `1e400`,
		`-`, `NaN`, `Infinity`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"a` + "\n" + `"`, `"\x"`,
		`[1] [2]`, `tru`, "\"\xff\"", `{"a" 1}`, `{1:2}`, strings.Repeat("[", 1002) + strings.Repeat("]", 1002),
	} {
		if got, ok := canonicalJSON([]byte(in)); ok {
			t.Errorf("canonicalJSON(%q) accepted: %s", in, got)
		}
	}
}

func TestDecodeUTF8WHATWG(t *testing.T) {
	// Each maximal subpart of an ill-formed sequence is one U+FFFD (the
	// Encoding Standard's UTF-8 decoder).
	cases := map[string]string{
		"a\xffb":             "a\uFFFDb",
		"\xe2\x82":           "\uFFFD",
		"\xe2\x82A":          "\uFFFDA",
		"\xf0\x9f\x98":       "\uFFFD",
		"\xed\xa0\x80":       "\uFFFD\uFFFD\uFFFD", // surrogate: E0..9F only after ED
		"\xc0\xaf":           "\uFFFD\uFFFD",       // overlong
		"\xf4\x90\x80\x80":   "\uFFFD\uFFFD\uFFFD\uFFFD",
		"ok \xe2\x82\xac ok": "ok € ok",
	}
	for in, want := range cases {
		if got := decodeUTF8([]byte(in)); got != want {
			t.Errorf("decodeUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHTMLTextDeepNesting(t *testing.T) {
	doc := strings.Repeat("<div><span>", 50000) + "deep" + strings.Repeat("</span></div>", 50000)
	got := Normalize([]byte(doc), "text/html; charset=utf-8")
	if got == nil || got.Text != "deep" {
		t.Fatalf("got %+v", got)
	}
}

func TestMediaKinds(t *testing.T) {
	for ct, want := range map[string]kind{
		"text/html; charset=utf-8":     kindHTML,
		"application/xhtml+xml":        kindHTML,
		"application/json":             kindJSON,
		"application/problem+json":     kindJSON,
		"application/rss+xml":          kindXML,
		"text/xml":                     kindXML,
		"text/csv":                     kindText,
		"TEXT/PLAIN; charset=us-ascii": kindText,
		"application/pdf":              kindNone,
		"image/svg+xml":                kindXML,
		"garbage;;":                    kindNone,
	} {
		mt, _ := parseContentType(ct)
		if got := mediaKind(mt); got != want {
			t.Errorf("%q: kind %d, want %d", ct, got, want)
		}
	}
}

type docVector struct{ contentType, body, text, sha256 string }

// docVectors are the vectors printed in doc.go ("Test vectors").
func docVectors() []docVector {
	return []docVector{
		{"text/html; charset=utf-8", "<p>Hello,&nbsp;<b>wor</b>ld!</p><script>x()</script><p>Caf&eacute;</p>",
			"Hello, world! Café", "4aafa666911d0d2c1673e9865785cc3a83cfcba20f33dc4c56fbff7fe35710a0"},
		{"application/json", `{"b": 2, "a": [1.50, "x"]}`,
			`{"a":[1.5,"x"],"b":2}`, "9d2d5023722806603b789c1acf2a8e3be1cd88e46fab93731a1cc82a7d083554"},
		{"text/plain; charset=windows-1252", "caf\xe9  \r\n au lait",
			"café au lait", "7c413039fbb2248e2b18b98e7a8d4d85bdcac7cd79b9477a0923f97e3a1f2b50"},
		{"application/xhtml+xml", "<?xml version='1.0' encoding='Shift_JIS'?><p>\x93\xfa\x96{\x8c\xea</p>",
			"日本語", "77710aedc74ecfa33685e33a6c7df5cc83004da1bdcef7fb280f5c2b2e97e0a5"},
	}
}

// TestDeclaredEncoding pins step 3 of the normalisation: which declaration
// decides for which media type.
func TestDeclaredEncoding(t *testing.T) {
	utf16le := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteByte(byte(r))
			b.WriteByte(0)
		}
		return b.String()
	}
	metaSJIS := `<meta charset="shift_jis">`
	declCyr := `<?xml version="1.0" encoding="windows-1251"?>`
	cases := []struct {
		name, contentType, body, charset string
	}{
		{"html: meta beats the XML declaration", "text/html", declCyr + metaSJIS + "<p>x</p>", "shift_jis"},
		{"html: XML declaration when there is no meta", "text/html", declCyr + "<p>x</p>", "windows-1251"},
		{"xhtml: XML declaration, meta ignored", "application/xhtml+xml", declCyr + metaSJIS + "<p>x</p>", "windows-1251"},
		{"xhtml: meta alone is ignored", "application/xhtml+xml", metaSJIS + "<p>x\xe9</p>", "windows-1252"},
		{"xhtml: the header's charset beats the declaration", "application/xhtml+xml; charset=koi8-r", declCyr, "koi8-r"},
		{"xhtml: a byte order mark beats everything", "application/xhtml+xml; charset=koi8-r", "\xef\xbb\xbf" + declCyr, "utf-8"},
		{"xml: whitespace and single quotes", "application/xml", "<?xml version='1.0' encoding \t= 'euc-jp' ?><r/>", "euc-jp"},
		{"xml: a UTF-16 label readable as ASCII means UTF-8", "application/xml", `<?xml version="1.0" encoding="UTF-16"?><r>\xe9</r>`, "utf-8"},
		{"xml: unquoted label", "application/xml", "<?xml version=\"1.0\" encoding=shift_jis?><r>\xe9</r>", "windows-1252"},
		{"xml: space inside the quotes", "application/xml", "<?xml version=\"1.0\" encoding=\" shift_jis\"?><r>\xe9</r>", "windows-1252"},
		{"xml: encoding after the declaration's end", "application/xml", `<?xml version="1.0"?><r encoding="shift_jis">` + "\xe9</r>", "windows-1252"},
		{"xml: not at the very start", "application/xml", " " + declCyr + "<r>\xe9</r>", "windows-1252"},
		{"xml: unknown label", "application/xml", `<?xml version="1.0" encoding="x-nonsense"?><r>é</r>`, "utf-8"},
		{"xhtml: UTF-16LE declaration without byte order mark", "application/xhtml+xml", utf16le(`<?xml version="1.0"?><p>x</p>`), "utf-16le"},
		{"html: UTF-16LE declaration without byte order mark", "text/html", utf16le(`<?xml version="1.0"?><p>x</p>`), "utf-16le"},
		{"html: UTF-16BE declaration without byte order mark", "text/html", "\x00" + utf16le(`<?xml version="1.0"?><p>x</p>`)[:40], "utf-16be"},
		{"text: declarations are not read", "text/plain", declCyr + metaSJIS + "\xe9", "windows-1252"},
		{"html: a meta after the first 1024 bytes is not read", "text/html", "<p>" + strings.Repeat("a", 1024) + "</p>" + metaSJIS + "\xe9", "windows-1252"},
		{"xhtml: a declaration cut at 1024 bytes is not read", "application/xhtml+xml", `<?xml version="1.0"` + strings.Repeat(" ", 1024) + `encoding="windows-1251"?>` + "\xe9", "windows-1252"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Normalize([]byte(tc.body), tc.contentType)
			if got == nil || got.Charset != tc.charset {
				t.Fatalf("charset %+v, want %s", got, tc.charset)
			}
		})
	}
}

// TestUnicodeVersionPinned: the Unicode version doc.go states for step 5
// is the one the NFC tables (golang.org/x/text, chosen by Go release) and
// the unicode package (White_Space, case folding) were built from. A Go
// upgrade that switches tables fails here until doc.go is updated on
// purpose.
func TestUnicodeVersionPinned(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(doc), "\n// ", " ")
	m := regexp.MustCompile(`Normalization Form C \(Unicode ([0-9]+\.[0-9]+\.[0-9]+) tables\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("doc.go no longer states the Unicode version of step 5")
	}
	if norm.Version != m[1] {
		t.Errorf("golang.org/x/text/unicode/norm has Unicode %s tables; doc.go promises %s", norm.Version, m[1])
	}
	if unicode.Version != m[1] {
		t.Errorf("package unicode is Unicode %s; doc.go promises %s", unicode.Version, m[1])
	}
}
