package claims

import (
	"net/url"
	"slices"
	"strings"

	"github.com/assaykit/assay/internal/urlnorm"
	"golang.org/x/net/publicsuffix"
)

// Source types, the values of Evidence.sourceType.
const (
	SourceOfficial  = "official"
	SourceAcademic  = "academic"
	SourceNews      = "news"
	SourceReference = "reference"
	SourceVendor    = "vendor"
	SourceForum     = "forum"
	SourceOther     = "other"
)

// classification is the outcome of classify.
type classification struct {
	Type   string
	Reason string
}

// Built-in domain lists. Options add to them; nothing removes from them.
func defaultOfficialDomains() []string {
	return []string{
		"europa.eu", "un.org", "who.int", "oecd.org", "imf.org", "worldbank.org", "wto.org",
		"canada.ca", "admin.ch", "bund.de", "gc.ca", "gov", "mil", "int",
	}
}

func defaultAcademicDomains() []string {
	return []string{
		"arxiv.org", "doi.org", "nature.com", "science.org", "sciencedirect.com", "springer.com",
		"link.springer.com", "jstor.org", "ssrn.com", "plos.org", "biorxiv.org", "medrxiv.org",
		"thelancet.com", "nejm.org", "bmj.com", "jamanetwork.com", "cell.com", "wiley.com",
		"semanticscholar.org", "acm.org", "ieee.org", "pnas.org",
	}
}

func defaultNewsDomains() []string {
	return []string{
		"reuters.com", "apnews.com", "bbc.co.uk", "bbc.com", "nytimes.com", "theguardian.com",
		"washingtonpost.com", "ft.com", "bloomberg.com", "wsj.com", "economist.com", "npr.org",
		"cnn.com", "aljazeera.com", "lemonde.fr", "spiegel.de", "nikkei.com", "cnbc.com",
		"axios.com", "politico.com", "politico.eu", "afp.com", "dw.com", "france24.com",
		"abc.net.au", "cbc.ca", "latimes.com", "usatoday.com", "time.com", "theverge.com",
		"techcrunch.com", "arstechnica.com", "wired.com", "elpais.com", "corriere.it",
		"asahi.com", "scmp.com", "straitstimes.com", "theatlantic.com", "newsweek.com",
		"forbes.com", "fortune.com", "businessinsider.com", "coindesk.com", "theblock.co",
	}
}

func defaultReferenceDomains() []string {
	return []string{
		"wikipedia.org", "wikidata.org", "wikimedia.org", "britannica.com", "merriam-webster.com",
		"dictionary.com", "oxfordreference.com", "investopedia.com", "wolframalpha.com",
		"ietf.org", "rfc-editor.org", "w3.org", "iso.org", "unicode.org", "whatwg.org",
		"ourworldindata.org", "statista.com",
	}
}

func defaultForumDomains() []string {
	return []string{
		"reddit.com", "quora.com", "stackexchange.com", "stackoverflow.com", "superuser.com",
		"serverfault.com", "news.ycombinator.com", "x.com", "twitter.com", "facebook.com",
		"instagram.com", "tiktok.com", "youtube.com", "discord.com", "discord.gg", "t.me",
		"medium.com", "substack.com", "tumblr.com", "linkedin.com", "threads.net", "bsky.app",
		"mastodon.social", "4chan.org", "boards.ie", "github.com",
	}
}

// govLabels mark government second-level domains inside a public suffix
// (gov.uk, gouv.fr, gob.mx, go.jp, govt.nz, mil.br, …).
var govLabels = []string{"gov", "gouv", "gob", "go", "govt", "mil", "government", "gv"}

// academicLabels mark academic second-level domains (ac.uk, edu.au, …).
var academicLabels = []string{"ac", "edu"}

// forumHostPrefixes mark discussion subdomains on any site.
var forumHostPrefixes = []string{"forum.", "forums.", "community.", "discuss.", "discussions.", "answers.", "boards."}

// vendorGenericTLDs are the generic top-level domains on which a site named
// like a word of the claim is presumed to be that name's own site (with
// the two-letter country codes; see vendorByName).
var vendorGenericTLDs = []string{"com", "net", "org"}

// reservedTLDs are reserved for documentation and testing (RFC 2606, RFC
// 6761): nobody can register a name under them, so no look-alike can
// either (the demo corpus lives under .example).
var reservedTLDs = []string{"example", "test"}

// classifier holds the domain lists of one engine.
type classifier struct {
	official, academic, news, reference, forum, vendor []string
}

func newClassifier(o *Options) *classifier {
	c := &classifier{
		official:  defaultOfficialDomains(),
		academic:  defaultAcademicDomains(),
		news:      defaultNewsDomains(),
		reference: defaultReferenceDomains(),
		forum:     defaultForumDomains(),
	}
	add := func(dst *[]string, src []string) {
		for _, d := range src {
			if n, err := urlnorm.Domain(d); err == nil {
				*dst = append(*dst, n)
			}
		}
	}
	add(&c.official, o.OfficialDomains)
	add(&c.news, o.NewsDomains)
	add(&c.academic, o.AcademicDomains)
	add(&c.vendor, o.VendorDomains)
	return c
}

func firstMatch(host string, list []string) string {
	for _, d := range list {
		if urlnorm.HostMatches(host, d) {
			return d
		}
	}
	return ""
}

// suffixLabels returns the labels of host's public suffix, e.g. ["gov",
// "uk"] for "www.gov.uk" and "service.gov.uk".
func suffixLabels(host string) []string {
	ps, _ := publicsuffix.PublicSuffix(host)
	return strings.Split(ps, ".")
}

// classify assigns a source type to a URL. The rules, first match wins:
//
//  1. official_only policy and host within allowedDomains → official
//     ("listed in allowedDomains under official_only");
//  2. host within a configured or built-in official domain (the gov, mil
//     and int TLDs; europa.eu, un.org, …) or a government label in the
//     public suffix (gov.uk, gouv.fr, gob.mx, go.jp, govt.nz) → official;
//  3. host within the edu TLD, an academic label in the public suffix
//     (ac.uk, edu.au) or a known academic publisher → academic;
//  4. host within a known or configured news publisher → news;
//  5. host within a known reference work or standards body → reference;
//  6. host within a known forum or social site, a discussion subdomain
//     (forum., community., discuss., answers.) or a path under /forum(s)
//     → forum;
//  7. host within a configured vendor domain → vendor; or the registrable
//     domain's name (e.g. "stripe" for docs.stripe.com, at least 3
//     letters) appears as a word of the claim and the domain is registered
//     under com, net, org or a country code (an ICANN suffix such as .de or
//     co.uk; not a shared-hosting suffix such as github.io, and not a newer
//     generic TLD such as .fan or .xyz), or under a reserved test TLD
//     (.example, .test) → vendor (a first-party source about itself; see
//     vendorByName);
//  8. otherwise → other (a name match that rule 7 refuses says so).
func (c *classifier) classify(rawURL string, eff *Effective) classification {
	host := urlnorm.Host(rawURL)
	if host == "" {
		return classification{SourceOther, "other: the URL is not a valid http(s) URL"}
	}
	if eff.SourcePolicy == PolicyOfficialOnly {
		if d := firstMatch(host, eff.AllowedDomains); d != "" {
			return classification{SourceOfficial, "official: " + d + " is listed in allowedDomains under official_only"}
		}
	}
	if d := firstMatch(host, c.official); d != "" {
		if !strings.Contains(d, ".") {
			return classification{SourceOfficial, "official: ." + d + " domain"}
		}
		if slices.Contains(defaultOfficialDomains(), d) {
			return classification{SourceOfficial, "official: " + d + " is a government or intergovernmental domain"}
		}
		return classification{SourceOfficial, "official: " + d + " is a configured official domain"}
	}
	labels := suffixLabels(host)
	if len(labels) >= 2 {
		if slices.Contains(govLabels, labels[0]) {
			return classification{SourceOfficial, "official: government domain (" + strings.Join(labels, ".") + ")"}
		}
		if slices.Contains(academicLabels, labels[0]) {
			return classification{SourceAcademic, "academic: academic domain (" + strings.Join(labels, ".") + ")"}
		}
	}
	if labels[len(labels)-1] == "edu" {
		return classification{SourceAcademic, "academic: .edu domain"}
	}
	if d := firstMatch(host, c.academic); d != "" {
		return classification{SourceAcademic, "academic: " + d + " is a scholarly publisher or repository"}
	}
	if d := firstMatch(host, c.news); d != "" {
		return classification{SourceNews, "news: " + d + " is a known news publisher"}
	}
	if d := firstMatch(host, c.reference); d != "" {
		return classification{SourceReference, "reference: " + d + " is a reference work or standards body"}
	}
	if d := firstMatch(host, c.forum); d != "" {
		return classification{SourceForum, "forum: " + d + " is a forum or social site"}
	}
	for _, p := range forumHostPrefixes {
		if strings.HasPrefix(host, p) {
			return classification{SourceForum, "forum: discussion subdomain (" + strings.TrimSuffix(p, ".") + ")"}
		}
	}
	if u, err := url.Parse(rawURL); err == nil {
		p := strings.ToLower(u.Path)
		if strings.HasPrefix(p, "/forum/") || strings.HasPrefix(p, "/forums/") || p == "/forum" || p == "/forums" {
			return classification{SourceForum, "forum: page under /forum"}
		}
	}
	if d := firstMatch(host, c.vendor); d != "" {
		return classification{SourceVendor, "vendor: " + d + " is a configured vendor domain"}
	}
	if name := siteName(host); len(name) >= 3 && containsWord(eff.Claim, name) {
		ok, why := vendorByName(host)
		if ok {
			return classification{SourceVendor, "vendor: first-party site of '" + name + "', which the claim names"}
		}
		return classification{SourceOther, "other: " + urlnorm.Registrable(host) + " is named like '" + name +
			"', which the claim names, but " + why + "; list it in Options.VendorDomains to count it as vendor"}
	}
	return classification{SourceOther, "other: no classification rule matched " + urlnorm.Registrable(host)}
}

// vendorByName reports whether a host whose site name is a word of the
// claim is presumed to be that name's own (first-party) site. A name is
// cheap to register on most top-level domains, so that a fan or look-alike
// site (tesla.fan, stripe.xyz, tesla.github.io) would otherwise count as
// the vendor under the authoritative policy. The presumption holds only
// where a name's owner usually holds it: the registrable domain is under
// an ICANN public suffix (not a private suffix where anyone can take a
// name, such as github.io, vercel.app or blogspot.com) whose top-level
// domain is com, net, org or a two-letter country code (including their
// second levels, e.g. co.uk, com.au), or it is one of the reserved test
// TLDs (.example, .test), under which nobody can register a name.
// Otherwise it returns why not.
func vendorByName(host string) (bool, string) {
	ps, icann := publicsuffix.PublicSuffix(host)
	if !icann && slices.Contains(reservedTLDs, ps) {
		return true, ""
	}
	if !icann {
		return false, "its suffix " + ps + " is not an ICANN public suffix (a shared-hosting domain where anyone can take a name, or a reserved or unknown TLD)"
	}
	labels := strings.Split(ps, ".")
	tld := labels[len(labels)-1]
	if len(tld) == 2 || slices.Contains(vendorGenericTLDs, tld) {
		return true, ""
	}
	return false, "." + tld + " is not a top-level domain on which a first-party site is presumed (com, net, org or a country code)"
}

// siteName is the first label of the registrable domain ("stripe" for
// docs.stripe.com, "bbc" for news.bbc.co.uk).
func siteName(host string) string {
	reg := urlnorm.Registrable(host)
	name, _, _ := strings.Cut(reg, ".")
	return name
}

// containsWord reports whether word occurs in text as a whole word,
// case-insensitively (letters and digits delimit words).
func containsWord(text, word string) bool {
	t := strings.ToLower(text)
	w := strings.ToLower(word)
	for i := 0; ; {
		j := strings.Index(t[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !isWordByte(t[start-1])) && (end == len(t) || !isWordByte(t[end])) {
			return true
		}
		i = start + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// admitted reports whether a source type counts toward verdicts under a
// source policy:
//
//   - official_only: only sources within allowedDomains exist at all (the
//     others are removed), and all of them count;
//   - authoritative: official, academic, news, reference and vendor count;
//     forum and other are kept as context but do not count;
//   - open_web: every type counts.
func admitted(policy, sourceType string) bool {
	switch policy {
	case PolicyOpenWeb, PolicyOfficialOnly:
		return true
	default:
		return sourceType != SourceForum && sourceType != SourceOther
	}
}
