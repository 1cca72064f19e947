// Package nichedemo holds a demonstration catalogue for the niche engine:
// 42 published evaluations in 12 categories backed by 183 signals, written
// for assay (the excerpts are illustrative text, not quotations, and say
// so in their licence field). It is embedded as JSON Lines in the bulk
// import format and loaded through niche.Engine.Import, the same path
// curators use.
//
// Dates are kept relative: the file is written as of Anchor, and Load
// shifts every signal's observedAt and collectedAt by the whole days
// between Anchor and the load time, so the evidence always spans the last
// 90 days and the trends mean something (several evaluations are rising,
// one is falling, one is stable, the rest have too little history).
// Loading is idempotent: signals carry fixed ids and external ids and
// drafts fixed operation ids, so loading again — after a restart, on
// another instance, days later — stores nothing new (stored signals keep
// the dates of their first load).
package nichedemo

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assaykit/assay/niche"
)

//go:embed catalogue.jsonl
var catalogue []byte

// Anchor is the date the embedded file is written as of.
var anchor = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// Anchor returns the date the embedded catalogue is written as of.
func Anchor() time.Time { return anchor }

// Options configure Load. Nil means defaults.
type Options struct {
	// Now is the load time the dates are shifted to. Nil means time.Now.
	Now func() time.Time
}

// JSONL returns the embedded catalogue with its dates shifted so that
// Anchor falls on the UTC day of now: the bulk-import file Load imports.
func JSONL(now time.Time) ([]byte, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	shift := today.Sub(anchor)
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(catalogue))
	sc.Buffer(make([]byte, 0, 64*1024), niche.MaxImportLineBytes)
	for sc.Scan() {
		line := sc.Bytes()
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("nichedemo: embedded catalogue: %w", err)
		}
		if rec["type"] == "signal" {
			for _, k := range []string{"observedAt", "collectedAt"} {
				s, _ := rec[k].(string)
				t, err := time.Parse(time.RFC3339, s)
				if err != nil {
					return nil, fmt.Errorf("nichedemo: embedded catalogue: %s %q: %w", k, s, err)
				}
				rec[k] = t.Add(shift).Format(time.RFC3339)
			}
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nichedemo: embedded catalogue: %w", err)
	}
	return out.Bytes(), nil
}

// Load imports the demonstration catalogue into e. It is idempotent.
func Load(ctx context.Context, e *niche.Engine, opts *Options) (*niche.ImportReport, error) {
	now := time.Now
	if opts != nil && opts.Now != nil {
		now = opts.Now
	}
	data, err := JSONL(now())
	if err != nil {
		return nil, err
	}
	rep, err := e.Import(ctx, bytes.NewReader(data), &niche.ImportOptions{Actor: "assay demo"})
	if err != nil {
		return nil, fmt.Errorf("nichedemo: %w", err)
	}
	if rep.DraftsFailed > 0 {
		return rep, fmt.Errorf("nichedemo: %d demo evaluations could not be stored", rep.DraftsFailed)
	}
	return rep, nil
}

// Sources describes the origins of the demonstration signals, for
// niche.Options.Sources.
func Sources() []niche.Source {
	demo := "Illustrative demo text written for assay (not a quotation)"
	src := func(id, name, home, scope string, kinds ...niche.SignalKind) niche.Source {
		return niche.Source{ID: id, Name: name, Homepage: home, License: demo, Scope: scope, Kinds: kinds, Enabled: true}
	}
	return []niche.Source{
		src("reddit", "Reddit", "https://www.reddit.com", "Public threads in trade, small-business and profession subreddits",
			niche.KindComplaint, niche.KindQuestion, niche.KindForumPost),
		src("stackexchange", "Stack Exchange network", "https://stackexchange.com", "Questions on DIY, personal finance, law and UX sites",
			niche.KindQuestion),
		src("app-store", "Apple App Store reviews", "https://apps.apple.com", "Reviews of field-service, inventory and booking apps", niche.KindReview),
		src("google-play", "Google Play reviews", "https://play.google.com", "Reviews of field-service and delivery apps", niche.KindReview),
		src("capterra", "Capterra reviews", "https://www.capterra.com", "Reviews of small-business software", niche.KindReview),
		src("g2", "G2 reviews", "https://www.g2.com", "Reviews of small-business software", niche.KindReview),
		src("indeed", "Indeed job posts", "https://www.indeed.com", "Job posts that reveal manual work", niche.KindJobPost),
		src("linkedin-jobs", "LinkedIn job posts", "https://www.linkedin.com/jobs", "Compliance and operations job posts", niche.KindJobPost),
		src("ziprecruiter", "ZipRecruiter job posts", "https://www.ziprecruiter.com", "Trade job posts", niche.KindJobPost),
		src("shopify-community", "Shopify community and app reviews", "https://community.shopify.com", "Merchant discussions and app reviews",
			niche.KindQuestion, niche.KindComplaint, niche.KindReview),
		src("forums", "Trade and profession forums", "", "Independent forums of trades, clinics, landlords and makers",
			niche.KindForumPost, niche.KindComplaint, niche.KindQuestion),
		src("government", "Government publications", "", "Regulatory guidance and notices", niche.KindRegulatoryNotice, niche.KindRecallNotice),
		src("eur-lex", "EUR-Lex", "https://eur-lex.europa.eu", "EU legislation", niche.KindRegulatoryNotice),
		src("news", "News and trade press", "", "Reporting on regulation and markets", niche.KindNewsReport),
	}
}
