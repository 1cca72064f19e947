package corpus

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	xhtml "golang.org/x/net/html"
)

// Source kinds (the Evidence sourceType the provider reports).
const (
	KindOfficial  = "official"
	KindAcademic  = "academic"
	KindNews      = "news"
	KindReference = "reference"
	KindVendor    = "vendor"
	KindForum     = "forum"
	KindOther     = "other"
)

// Errors.
var (
	// ErrInvalidDocument wraps every problem with a document file.
	ErrInvalidDocument = errors.New("corpus: invalid document")
	// ErrDuplicateURL is returned when two documents claim one URL.
	ErrDuplicateURL = errors.New("corpus: duplicate document URL")
)

// Document is one page of a collection.
type Document struct {
	URL         string     // canonical http:// URL
	Host        string     // lowercase host, no port
	Path        string     // path and query, "/" at least
	Title       string     // from the front matter or the HTML <title>
	Publisher   string     // from the front matter, else the host
	PublishedAt *time.Time // nil when unknown
	Kind        string     // official, academic, news, reference, vendor, forum or other
	File        string     // file name it was loaded from

	blocks    []string // visible text blocks, whitespace collapsed
	sentences []sentence
	page      []byte // what the loopback server serves
}

type sentence struct {
	text  string
	block int
}

// Sentences returns the document's sentences, each an exact substring of
// its visible text.
func (d *Document) Sentences() []string {
	out := make([]string, len(d.sentences))
	for i, s := range d.sentences {
		out[i] = s.text
	}
	return out
}

// Text returns the visible text of the document as served: its blocks
// joined by spaces.
func (d *Document) Text() string { return strings.Join(d.blocks, " ") }

// Page returns the bytes the loopback server serves for the document.
func (d *Document) Page() []byte { return bytes.Clone(d.page) }

// Published returns PublishedAt as YYYY-MM-DD, or nil.
func (d *Document) Published() *string {
	if d.PublishedAt == nil {
		return nil
	}
	s := d.PublishedAt.Format(time.DateOnly)
	return &s
}

// Collection is a set of documents with a BM25 index over them.
type Collection struct {
	label  string
	docs   []*Document
	byKey  map[string]*Document // host + path
	index  *bm25
	lex    *lexicon
	digest string
}

// Label names the collection in limitations, e.g. "offline demo corpus".
func (c *Collection) Label() string { return c.label }

// Documents returns the documents in load order (sorted by file name).
func (c *Collection) Documents() []*Document { return append([]*Document(nil), c.docs...) }

// Lookup returns the document served at host and path, or nil. A host
// with or without a leading "www." finds the document of the other form
// (URL canonicalisers often drop "www."), and a trailing "/" is ignored.
func (c *Collection) Lookup(host, pathAndQuery string) *Document {
	h := hostKey(host)
	alt := "www." + h
	if rest, ok := strings.CutPrefix(h, "www."); ok {
		alt = rest
	}
	paths := []string{pathAndQuery}
	if p := strings.TrimSuffix(pathAndQuery, "/"); p != pathAndQuery && p != "" {
		paths = append(paths, p)
	} else if !strings.HasSuffix(pathAndQuery, "/") && !strings.Contains(pathAndQuery, "?") {
		paths = append(paths, pathAndQuery+"/")
	}
	for _, hh := range []string{h, alt} {
		for _, p := range paths {
			if d := c.byKey[hh+p]; d != nil {
				return d
			}
		}
	}
	return nil
}

// Hosts returns the distinct hosts of the collection, sorted.
func (c *Collection) Hosts() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range c.docs {
		if !seen[d.Host] {
			seen[d.Host] = true
			out = append(out, d.Host)
		}
	}
	sort.Strings(out)
	return out
}

//go:embed demo
var demoFS embed.FS

// Demo returns the embedded demo collection: short documents written for
// assay, served under hosts in the reserved .example top-level domain (so
// no capture can ever reach a real site and no real publisher is quoted).
func Demo() (*Collection, error) {
	sub, err := fs.Sub(demoFS, "demo")
	if err != nil {
		return nil, err
	}
	c, err := Load(sub)
	if err != nil {
		return nil, err
	}
	c.label = "offline demo corpus"
	return c, nil
}

// Load reads every .md, .markdown, .html and .htm file under fsys (other
// files are ignored) into a collection labelled "offline document
// collection". Each file starts with a front-matter block:
//
//	---
//	url: http://docs.example.org/network
//	title: Network information
//	publisher: Example Docs
//	publishedAt: 2025-06-10
//	kind: official
//	---
//
// url is required and must be an absolute http:// URL without userinfo or
// fragment (the loopback server speaks plain HTTP); kind defaults to other;
// an HTML file without a title uses its <title>. Markdown supports
// headings (#), bullet lists (- or *) and paragraphs; inline emphasis
// markers and link targets are dropped. HTML is served as written and its
// sentences are taken within single text nodes, so that inline markup never
// joins words differently from a snapshot's text extraction.
func Load(fsys fs.FS) (*Collection, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".md", ".markdown", ".html", ".htm":
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	sort.Strings(names)
	docs := make([]*Document, 0, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		d, err := ParseDocument(name, data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return NewCollection("offline document collection", docs)
}

// NewCollection indexes documents made by ParseDocument. URLs must be
// unique.
func NewCollection(label string, docs []*Document) (*Collection, error) {
	c := &Collection{label: label, byKey: map[string]*Document{}, lex: newLexicon()}
	terms := make([][]string, 0, len(docs))
	var digest strings.Builder
	for _, d := range docs {
		if d == nil || len(d.sentences) == 0 || d.Host == "" {
			return nil, fmt.Errorf("%w: a document not made by ParseDocument", ErrInvalidDocument)
		}
		key := d.Host + d.Path
		if prev, ok := c.byKey[key]; ok {
			return nil, fmt.Errorf("%w: %s in %s and %s", ErrDuplicateURL, d.URL, prev.File, d.File)
		}
		c.byKey[key] = d
		c.docs = append(c.docs, d)
		terms = append(terms, c.lex.docTerms(d))
		digest.WriteString(d.URL + "\x00" + d.Text() + "\x00")
	}
	c.index = newBM25(terms)
	c.digest = shortHash(digest.String())
	return c, nil
}

// docTerms are the index terms of a document: the title twice, then the
// body, without stop words.
func (lx *lexicon) docTerms(d *Document) []string {
	stop := lx.stop
	var out []string
	add := func(s string) {
		for _, t := range lx.tokenize(s) {
			if !stop[t.text] && t.term != "" {
				out = append(out, t.term)
			}
		}
	}
	add(d.Title)
	add(d.Title)
	add(d.Text())
	return out
}

// ParseDocument parses one file (front matter plus Markdown or HTML).
func ParseDocument(name string, data []byte) (*Document, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInvalidDocument, name, fmt.Sprintf(format, args...))
	}
	meta, body, err := frontMatter(data)
	if err != nil {
		return nil, bad("%v", err)
	}
	d := &Document{File: name, Title: meta["title"], Publisher: meta["publisher"], Kind: strings.ToLower(meta["kind"])}
	raw := meta["url"]
	if raw == "" {
		return nil, bad("front matter has no url")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return nil, bad("url %q is not an absolute http:// URL without userinfo or fragment", raw)
	}
	if u.Port() != "" && u.Port() != "80" {
		return nil, bad("url %q: only the default port 80 can be served", raw)
	}
	d.Host = hostKey(u.Hostname())
	d.Path = u.EscapedPath()
	if d.Path == "" {
		d.Path = "/"
	}
	if u.RawQuery != "" {
		d.Path += "?" + u.RawQuery
	}
	d.URL = "http://" + d.Host + d.Path
	switch d.Kind {
	case "":
		d.Kind = KindOther
	case KindOfficial, KindAcademic, KindNews, KindReference, KindVendor, KindForum, KindOther:
	default:
		return nil, bad("unknown kind %q", d.Kind)
	}
	if s := meta["publishedat"]; s != "" {
		t, err := parseDate(s)
		if err != nil {
			return nil, bad("publishedAt %q is not YYYY-MM-DD or RFC 3339", s)
		}
		d.PublishedAt = &t
	}

	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm":
		title, blocks := htmlText(body)
		if d.Title == "" {
			d.Title = title
		}
		d.blocks = blocks
		d.page = body
	default:
		d.blocks = markdownBlocks(body)
		if d.Title == "" {
			return nil, bad("front matter has no title")
		}
		d.page = d.render(markdownKinds(body))
	}
	if d.Title == "" {
		return nil, bad("no title")
	}
	if d.Publisher == "" {
		d.Publisher = d.Host
	}
	for i, b := range d.blocks {
		for _, s := range splitSentences(b) {
			d.sentences = append(d.sentences, sentence{text: s, block: i})
		}
	}
	if len(d.sentences) == 0 {
		return nil, bad("no visible text")
	}
	return d, nil
}

func hostKey(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	return h
}

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	return t.UTC(), err
}

// frontMatter splits "---\nkey: value\n---\n" from the body. Keys are
// lowercased; values may be quoted.
func frontMatter(data []byte) (map[string]string, []byte, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, nil, errors.New("no front matter (a first line of ---)")
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return nil, nil, errors.New("front matter is not closed by ---")
	}
	meta := map[string]string{}
	for n, line := range strings.Split(rest[:end], "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(strings.TrimSpace(k), " \t") {
			return nil, nil, fmt.Errorf("front matter line %d has no key: value", n+2)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		k = strings.ReplaceAll(k, "_", "")
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		meta[k] = v
	}
	body := rest[end+4:]
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	return meta, []byte(body), nil
}

// mdBlock is one Markdown block: its HTML element and its text.
type mdBlock struct {
	tag  string // h2, h3, h4, p, li
	text string
}

// markdownKinds parses the supported Markdown subset.
func markdownKinds(body []byte) []mdBlock {
	var out []mdBlock
	var para []string
	flush := func() {
		if len(para) > 0 {
			if t := inlineText(strings.Join(para, " ")); t != "" {
				out = append(out, mdBlock{"p", t})
			}
			para = nil
		}
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "#"):
			flush()
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			tag := fmt.Sprintf("h%d", min(level+1, 6))
			if t := inlineText(strings.TrimLeft(trimmed, "# ")); t != "" {
				out = append(out, mdBlock{tag, t})
			}
		case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
			flush()
			if t := inlineText(trimmed[2:]); t != "" {
				out = append(out, mdBlock{"li", t})
			}
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return out
}

func markdownBlocks(body []byte) []string {
	var out []string
	for _, b := range markdownKinds(body) {
		out = append(out, b.text)
	}
	return out
}

// inlineText drops emphasis markers and link targets and collapses space:
// "[RFC 9110](http://x)" becomes "RFC 9110".
func inlineText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '*', '`':
			continue
		case '_':
			if (i == 0 || s[i-1] == ' ') || (i+1 == len(s) || s[i+1] == ' ') {
				continue
			}
		case ']':
			if i+1 < len(s) && s[i+1] == '(' {
				if j := strings.IndexByte(s[i:], ')'); j > 0 {
					i += j
					continue
				}
			}
			continue
		case '[':
			continue
		}
		b.WriteByte(c)
	}
	return collapseSpace(b.String())
}

// render writes the HTML page of a Markdown document. Every block is one
// element whose only child is its text, so the visible text of the page is
// the title, the byline and the blocks.
func (d *Document) render(blocks []mdBlock) []byte {
	var b bytes.Buffer
	esc := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(d.Title))
	fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n", esc(d.URL))
	fmt.Fprintf(&b, "<meta name=\"publisher\" content=\"%s\">\n", esc(d.Publisher))
	if p := d.Published(); p != nil {
		fmt.Fprintf(&b, "<meta name=\"date\" content=\"%s\">\n", *p)
	}
	b.WriteString("</head>\n<body>\n<article>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(d.Title))
	byline := d.Publisher
	if p := d.Published(); p != nil {
		byline += " | " + *p
	}
	fmt.Fprintf(&b, "<p class=\"byline\">%s</p>\n", esc(byline))
	inList := false
	for _, blk := range blocks {
		if blk.tag == "li" && !inList {
			b.WriteString("<ul>\n")
			inList = true
		}
		if blk.tag != "li" && inList {
			b.WriteString("</ul>\n")
			inList = false
		}
		fmt.Fprintf(&b, "<%s>%s</%s>\n", blk.tag, esc(blk.text), blk.tag)
	}
	if inList {
		b.WriteString("</ul>\n")
	}
	b.WriteString("</article>\n</body>\n</html>\n")
	return b.Bytes()
}

// htmlText returns the <title> and the visible text nodes of an HTML page
// (script, style, noscript, template, svg and head skipped), each with its
// whitespace collapsed.
func htmlText(body []byte) (string, []string) {
	z := xhtml.NewTokenizer(bytes.NewReader(body))
	var title string
	var blocks []string
	skip := 0
	inTitle := false
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			return title, blocks
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript", "template", "svg", "head":
				if tt == xhtml.StartTagToken {
					skip++
				}
			case "title":
				inTitle = tt == xhtml.StartTagToken
			}
		case xhtml.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript", "template", "svg", "head":
				if skip > 0 {
					skip--
				}
			case "title":
				inTitle = false
			}
		case xhtml.TextToken:
			text := collapseSpace(string(z.Text())) // Text unescapes entities
			switch {
			case text == "":
			case inTitle:
				if title == "" {
					title = text
				}
			case skip == 0:
				blocks = append(blocks, text)
			}
		}
	}
}
