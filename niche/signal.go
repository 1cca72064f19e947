package niche

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
)

// SignalKind classifies a piece of evidence.
type SignalKind string

// Signal kinds. Demand kinds show people having the problem; context kinds
// (news, regulation, recalls, market reports) explain it but do not count
// toward the publication floor.
const (
	KindComplaint        SignalKind = "complaint"
	KindQuestion         SignalKind = "question"
	KindReview           SignalKind = "review"
	KindJobPost          SignalKind = "job_post"
	KindFeatureRequest   SignalKind = "feature_request"
	KindForumPost        SignalKind = "forum_post"
	KindNewsReport       SignalKind = "news_report"
	KindRegulatoryNotice SignalKind = "regulatory_notice"
	KindRecallNotice     SignalKind = "recall_notice"
	KindMarketReport     SignalKind = "market_report"
)

// Kinds returns every signal kind, demand kinds first.
func Kinds() []SignalKind {
	return []SignalKind{KindComplaint, KindQuestion, KindReview, KindJobPost, KindFeatureRequest,
		KindForumPost, KindNewsReport, KindRegulatoryNotice, KindRecallNotice, KindMarketReport}
}

// Valid reports whether k is one of Kinds.
func (k SignalKind) Valid() bool { return slices.Contains(Kinds(), k) }

// Demand reports whether k counts as a demand signal (every kind except
// news reports, regulatory notices, recall notices and market reports).
func (k SignalKind) Demand() bool {
	switch k {
	case KindNewsReport, KindRegulatoryNotice, KindRecallNotice, KindMarketReport:
		return false
	}
	return k.Valid()
}

// SignalState is a signal's moderation state.
type SignalState string

// Moderation states. New signals are pending; linking a pending signal to
// an evaluation accepts it (the curator reviewed it); rejected signals can
// no longer be linked.
const (
	StatePending  SignalState = "pending"
	StateAccepted SignalState = "accepted"
	StateRejected SignalState = "rejected"
)

// Valid reports whether s is a known state.
func (s SignalState) Valid() bool {
	return s == StatePending || s == StateAccepted || s == StateRejected
}

// Signal is one piece of evidence: a public post, review, job ad, news
// report or notice, with where and when it was observed.
type Signal struct {
	ID   string     `json:"id"`
	Kind SignalKind `json:"kind"`
	// SourceURL is the page the evidence is on.
	SourceURL string `json:"sourceUrl"`
	// SourceDomain is the registrable domain of SourceURL (public-suffix
	// list, "www." and other subdomains removed); independent sources are
	// counted by it.
	SourceDomain string `json:"sourceDomain"`
	// Origin names the collector or adapter that produced the signal,
	// e.g. "reddit", "stackexchange", "manual".
	Origin string `json:"origin"`
	// ExternalID identifies the item at its origin; (Origin, ExternalID)
	// is unique, which deduplicates repeated collection.
	ExternalID string `json:"externalId"`
	Title      string `json:"title"`
	Excerpt    string `json:"excerpt"`
	// ObservedAt is when the source says the item happened (posted,
	// published, filed). It is never the ingestion time.
	ObservedAt time.Time `json:"observedAt"`
	// CollectedAt is when the collector fetched the item.
	CollectedAt time.Time `json:"collectedAt"`
	License     string    `json:"license"`
	Attribution string    `json:"attribution"`
	// Engagement holds source metrics when the source has them (for
	// example upvotes, comments, helpfulVotes), keyed in camelCase.
	Engagement map[string]int64 `json:"engagement,omitempty"`

	State          SignalState `json:"state"`
	ModerationNote string      `json:"moderationNote,omitempty"`
	ModeratedBy    string      `json:"moderatedBy,omitempty"`
	ModeratedAt    *time.Time  `json:"moderatedAt,omitempty"`
	CreatedAt      time.Time   `json:"createdAt"`
	// Snapshot is the latest capture of SourceURL (see Capturer), failed
	// or not; nil when the page was never captured or its capture was
	// released.
	Snapshot *snapshot.Snapshot `json:"snapshot,omitempty"`
}

// SignalInput is a signal as a collector or curator submits it.
type SignalInput struct {
	// ID is optional: a caller-chosen "sig_" + 32 hex id (bulk imports
	// use it to link drafts to signals of the same file). Empty means a
	// new random id.
	ID          string           `json:"id,omitempty"`
	Kind        SignalKind       `json:"kind"`
	SourceURL   string           `json:"sourceUrl"`
	Origin      string           `json:"origin"`
	ExternalID  string           `json:"externalId,omitempty"`
	Title       string           `json:"title"`
	Excerpt     string           `json:"excerpt"`
	ObservedAt  time.Time        `json:"observedAt"`
	CollectedAt time.Time        `json:"collectedAt,omitzero"`
	License     string           `json:"license"`
	Attribution string           `json:"attribution"`
	Engagement  map[string]int64 `json:"engagement,omitempty"`
	// State is the initial moderation state: pending (default) or
	// accepted (curated input).
	State SignalState `json:"state,omitempty"`
}

// Signal input bounds.
const (
	maxSignalTitle       = 300
	maxSignalExcerpt     = 1000
	maxSignalURL         = 2048
	maxSignalText        = 200 // origin, external id, license, attribution
	maxEngagementEntries = 8
	// futureSkew is how far in the future ObservedAt may be (clock skew).
	futureSkew = time.Hour
)

var (
	originPattern        = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	engagementKeyPattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,31}$`)
)

// normalizeSignal validates in and returns the signal to store. field
// prefixes error paths.
func normalizeSignal(in SignalInput, field string, now time.Time) (Signal, error) {
	f := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	s := Signal{
		ID:          in.ID,
		Kind:        in.Kind,
		Origin:      strings.TrimSpace(in.Origin),
		ExternalID:  strings.TrimSpace(in.ExternalID),
		Title:       strings.TrimSpace(in.Title),
		Excerpt:     strings.TrimSpace(in.Excerpt),
		License:     strings.TrimSpace(in.License),
		Attribution: strings.TrimSpace(in.Attribution),
		State:       in.State,
		CreatedAt:   now,
	}
	if s.ID == "" {
		s.ID = ids.New(ids.Signal)
	} else if !ids.Valid(ids.Signal, s.ID) {
		return s, invalid(f("id"), "must be sig_ followed by 32 lowercase hex digits")
	}
	if !s.Kind.Valid() {
		names := make([]string, 0, len(Kinds()))
		for _, k := range Kinds() {
			names = append(names, string(k))
		}
		return s, invalid(f("kind"), "must be one of %s", strings.Join(names, ", "))
	}
	u, domain, err := canonicalSource(in.SourceURL)
	if err != nil {
		return s, invalid(f("sourceUrl"), "%s", err.Error())
	}
	s.SourceURL, s.SourceDomain = u, domain
	if !originPattern.MatchString(s.Origin) {
		return s, invalid(f("origin"), "must be 1 to 64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	if s.ExternalID == "" {
		s.ExternalID = s.SourceURL
	}
	if n := utf8.RuneCountInString(s.ExternalID); n > maxSignalURL {
		return s, invalid(f("externalId"), "must have at most %d characters", maxSignalURL)
	}
	if n := utf8.RuneCountInString(s.Title); n < 3 || n > maxSignalTitle {
		return s, invalid(f("title"), "must have 3 to %d characters", maxSignalTitle)
	}
	if n := utf8.RuneCountInString(s.Excerpt); n > maxSignalExcerpt {
		return s, invalid(f("excerpt"), "must have at most %d characters", maxSignalExcerpt)
	}
	if s.License == "" || utf8.RuneCountInString(s.License) > maxSignalText {
		return s, invalid(f("license"), "is required (at most %d characters): name the terms under which the excerpt is used", maxSignalText)
	}
	if utf8.RuneCountInString(s.Attribution) > maxSignalText {
		return s, invalid(f("attribution"), "must have at most %d characters", maxSignalText)
	}
	if in.ObservedAt.IsZero() {
		return s, invalid(f("observedAt"), "is required: when the source says the item happened (never the ingestion time)")
	}
	s.ObservedAt = in.ObservedAt.UTC().Truncate(time.Microsecond)
	if s.ObservedAt.After(now.Add(futureSkew)) {
		return s, invalid(f("observedAt"), "is in the future")
	}
	s.CollectedAt = in.CollectedAt.UTC().Truncate(time.Microsecond)
	if in.CollectedAt.IsZero() {
		s.CollectedAt = now
	}
	if s.CollectedAt.Before(s.ObservedAt) {
		return s, invalid(f("collectedAt"), "is before observedAt")
	}
	if s.CollectedAt.After(now.Add(futureSkew)) {
		return s, invalid(f("collectedAt"), "is in the future")
	}
	if len(in.Engagement) > maxEngagementEntries {
		return s, invalid(f("engagement"), "must have at most %d entries", maxEngagementEntries)
	}
	if len(in.Engagement) > 0 {
		s.Engagement = make(map[string]int64, len(in.Engagement))
		for k, v := range in.Engagement {
			if !engagementKeyPattern.MatchString(k) {
				return s, invalid(f("engagement"), "key %q must be camelCase letters and digits (at most 32)", k)
			}
			if v < 0 {
				return s, invalid(f("engagement"), "%s must not be negative", k)
			}
			s.Engagement[k] = v
		}
	}
	switch s.State {
	case "":
		s.State = StatePending
	case StatePending, StateAccepted:
	default:
		return s, invalid(f("state"), "must be pending or accepted")
	}
	return s, nil
}

// canonicalSource checks that raw is an absolute http(s) URL without
// credentials and returns it (host lower-cased, fragment removed) with its
// registrable domain.
func canonicalSource(raw string) (string, string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > maxSignalURL {
		return "", "", errorString("must be an http or https URL of at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", "", errorString("must be an absolute http or https URL")
	}
	if u.User != nil {
		return "", "", errorString("must not carry credentials")
	}
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	d, err := RegistrableDomain(u.Hostname())
	if err != nil {
		return "", "", err
	}
	return u.String(), d, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// RegistrableDomain returns the registrable domain of host: the public
// suffix plus one label ("forum.example.co.uk" → "example.co.uk",
// "www.example.com" → "example.com"). IP addresses are returned as they
// are; a host that is itself a public suffix is returned whole.
func RegistrableDomain(host string) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	if host == "" {
		return "", errorString("has no host")
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	if !strings.Contains(host, ".") {
		return "", errorString("host must be a domain name")
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		// The host is a public suffix itself (e.g. "github.io").
		return strings.TrimPrefix(host, "www."), nil
	}
	return d, nil
}
