package corpus

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	xhtml "golang.org/x/net/html"
)

func TestDemoCollection(t *testing.T) {
	c, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	docs := c.Documents()
	if n := len(docs); n < 40 || n > 80 {
		t.Errorf("demo has %d documents, want 40..80", n)
	}
	kinds := map[string]int{}
	domains := map[string]int{}
	for _, d := range docs {
		kinds[d.Kind]++
		if !strings.HasSuffix(d.Host, ".example") {
			t.Errorf("%s: host %q is not under the reserved .example TLD", d.File, d.Host)
		}
		if d.Title == "" || d.Publisher == "" || d.PublishedAt == nil {
			t.Errorf("%s: incomplete metadata %+v", d.File, d)
		}
		labels := strings.Split(d.Host, ".")
		domains[strings.Join(labels[max(0, len(labels)-2):], ".")]++
	}
	for _, k := range []string{KindOfficial, KindAcademic, KindNews, KindReference, KindForum} {
		if kinds[k] < 3 {
			t.Errorf("only %d %s documents", kinds[k], k)
		}
	}
	shared := 0
	for _, n := range domains {
		if n > 1 {
			shared++
		}
	}
	if shared < 3 {
		t.Errorf("only %d registrable domains hold several documents", shared)
	}
	if c.Label() != "offline demo corpus" {
		t.Errorf("label = %q", c.Label())
	}
}

// visibleText extracts the text of a page the way a snapshot normaliser
// does in the worst case: every text node outside script, style, noscript,
// template and svg, joined by single spaces, whitespace collapsed.
func visibleText(t *testing.T, page []byte) string {
	t.Helper()
	root, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "script", "style", "noscript", "template", "svg":
				return
			}
		}
		if n.Type == xhtml.TextNode {
			parts = append(parts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// TestSentencesAreOnThePage proves the excerpt guarantee: every sentence
// the provider can quote occurs verbatim in the visible text of the page
// the loopback server serves.
func TestSentencesAreOnThePage(t *testing.T) {
	c, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range c.Documents() {
		text := visibleText(t, d.Page())
		for _, s := range d.Sentences() {
			total++
			if !strings.Contains(text, s) {
				t.Errorf("%s: sentence %q is not in the page text %q", d.File, s, text)
			}
		}
		if strings.Contains(text, "chain 9999") {
			t.Errorf("%s: script text leaked into the visible text", d.File)
		}
	}
	if total < 150 {
		t.Errorf("only %d sentences in the demo", total)
	}
}

func TestParseMarkdown(t *testing.T) {
	src := "---\nurl: http://Docs.Example.org/a/b?x=1\ntitle: \"A: title\"\npublisher: Pub\npublished_at: 2024-02-03\nkind: News\n---\n" +
		"# Heading one\n\nFirst line\ncontinues here. Second *sentence* with a [link](http://x.example/y).\n\n- item one\n- item `two`\n\n## Sub\n\nLast & final.\n"
	d, err := ParseDocument("a.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != "http://docs.example.org/a/b?x=1" || d.Host != "docs.example.org" || d.Path != "/a/b?x=1" || d.Kind != KindNews || d.Title != "A: title" || *d.Published() != "2024-02-03" {
		t.Errorf("metadata = %+v", d)
	}
	want := []string{"Heading one", "First line continues here.", "Second sentence with a link.", "item one", "item two", "Sub", "Last & final."}
	if diff := cmp.Diff(want, d.Sentences()); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
	page := string(d.Page())
	for _, s := range []string{"<title>A: title</title>", `<link rel="canonical" href="http://docs.example.org/a/b?x=1">`, "<li>item two</li>", "<p>Last &amp; final.</p>", "<h2>Heading one</h2>"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q:\n%s", s, page)
		}
	}
}

func TestParseHTML(t *testing.T) {
	src := "---\nurl: http://x.example/p\nkind: reference\n---\n<html><head><title>Page title</title><style>p{}</style></head><body>" +
		"<p><b>Bold</b> start of a sentence. Next one &amp; more.</p><script>var hidden = 1;</script><p>Plain paragraph here.</p></body></html>"
	d, err := ParseDocument("p.html", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Page title" || d.Publisher != "x.example" {
		t.Errorf("title %q publisher %q", d.Title, d.Publisher)
	}
	want := []string{"Bold", "start of a sentence.", "Next one & more.", "Plain paragraph here."}
	if diff := cmp.Diff(want, d.Sentences()); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
	if !bytes.HasPrefix(d.Page(), []byte("<html>")) {
		t.Errorf("HTML is not served as written: %q", d.Page()[:20])
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no front matter", "# Title\n", "no front matter"},
		{"unclosed", "---\nurl: http://a.example/\n", "not closed"},
		{"bad line", "---\nurl http://a.example/\n---\nText.\n", "no key: value"},
		{"no url", "---\ntitle: T\n---\nText.\n", "no url"},
		{"https", "---\nurl: https://a.example/\ntitle: T\n---\nText.\n", "http:// URL"},
		{"userinfo", "---\nurl: http://u:p@a.example/\ntitle: T\n---\nText.\n", "http:// URL"},
		{"port", "---\nurl: http://a.example:8080/\ntitle: T\n---\nText.\n", "port 80"},
		{"kind", "---\nurl: http://a.example/\ntitle: T\nkind: blog\n---\nText.\n", "unknown kind"},
		{"date", "---\nurl: http://a.example/\ntitle: T\npublishedAt: yesterday\n---\nText.\n", "publishedAt"},
		{"no title", "---\nurl: http://a.example/\n---\nText.\n", "no title"},
		{"empty", "---\nurl: http://a.example/\ntitle: T\n---\n\n", "no visible text"},
	}
	for _, tc := range tests {
		_, err := ParseDocument(tc.name+".md", []byte(tc.src))
		if !errors.Is(err, ErrInvalidDocument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"a.md":          {Data: []byte("---\nurl: http://one.example/a\ntitle: A\nkind: official\n---\nThe value is 5.\n")},
		"sub/b.html":    {Data: []byte("---\nurl: http://two.example/b\n---\n<title>B</title><p>Other text.</p>")},
		"notes.txt":     {Data: []byte("ignored")},
		"sub/README.md": {Data: []byte("---\nurl: http://one.example/readme\ntitle: R\n---\nRead me.\n")},
	}
	c, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Documents()); got != 3 {
		t.Errorf("documents = %d, want 3", got)
	}
	if d := cmp.Diff([]string{"one.example", "two.example"}, c.Hosts()); d != "" {
		t.Errorf("hosts: %s", d)
	}
	if d := c.Lookup("TWO.example:80", "/b"); d == nil || d.Title != "B" {
		t.Errorf("lookup = %+v", d)
	}
	if c.Label() != "offline document collection" {
		t.Errorf("label = %q", c.Label())
	}
	fsys["dup.md"] = &fstest.MapFile{Data: []byte("---\nurl: http://one.example/a\ntitle: Dup\n---\nSame URL.\n")}
	if _, err := Load(fsys); !errors.Is(err, ErrDuplicateURL) {
		t.Errorf("duplicate URL: error = %v", err)
	}
	fsys["dup.md"] = &fstest.MapFile{Data: []byte("no front matter")}
	if _, err := Load(fsys); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("bad file: error = %v", err)
	}
}

func TestBM25Ranking(t *testing.T) {
	x := newBM25([][]string{
		{"base", "chain", "id", "8453", "base", "mainn"}, // 0: all terms
		{"base", "chain", "id"},                          // 1: no number
		{"measl", "vacci", "dose"},                       // 2: unrelated
		{"base", "chain", "id", "8453", "mainn", "a", "b", "c", "d", "e", "f", "g", "h"}, // 3: all terms, longer
	})
	hits := x.search([]string{"base", "mainn", "chain", "id", "8453"}, []int{0, 1, 2, 3}, 10)
	var order []int
	for _, h := range hits {
		order = append(order, h.doc)
	}
	if d := cmp.Diff([]int{0, 3, 1}, order); d != "" {
		t.Errorf("ranking (-want +got):\n%s", d)
	}
	if x.idf("8453") <= x.idf("base") {
		t.Errorf("rarer term has lower idf: %v vs %v", x.idf("8453"), x.idf("base"))
	}
	if hits := x.search([]string{"base"}, []int{2}, 10); len(hits) != 0 {
		t.Errorf("candidate filter ignored: %v", hits)
	}

	c, _ := Demo()
	top := c.index.search(testLex.newFact("Mount Everest is 8,849 metres tall.").query, allDocs(c), 4)
	for _, h := range top {
		if !strings.Contains(strings.ToLower(c.docs[h.doc].Title+c.docs[h.doc].Text()), "everest") {
			t.Errorf("top hit %s is not about Everest", c.docs[h.doc].URL)
		}
	}
}

func allDocs(c *Collection) []int {
	out := make([]int, len(c.docs))
	for i := range out {
		out[i] = i
	}
	return out
}

func TestNewCollectionRejectsUnparsed(t *testing.T) {
	if _, err := NewCollection("x", []*Document{{URL: "http://a.example/", Title: "T"}}); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("error = %v", err)
	}
	if _, err := NewCollection("x", []*Document{nil}); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("nil document: error = %v", err)
	}
}
