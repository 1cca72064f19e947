// Package nichedemo holds a demonstration catalogue for the niche engine:
// 42 published evaluations in 12 categories backed by 187 signals, written
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
//
// Each evaluation's per-criterion rationale (rationale.json, keyed by the
// draft's operation id) is a level phrase for the criterion's value
// followed, where one exists, by the sentence of the evaluation notes
// that speaks to that criterion; the others state what the linked
// evidence shows. Load applies it as a revision of its own ("demo
// catalogue: per-criterion rationale") to every demo evaluation still at
// its first revision without one, so that catalogues loaded before the
// rationale existed get it too, and the drafts of the file (and their
// operations' request hashes) stay as they were.
//
// ServePages serves an illustrative page at every signal's source URL on
// loopback over TLS, for the snapshot service that captures the demo's
// evidence (see Pages): the demo's full evaluations then list each signal
// with its capture, hashes and snapshot id.
package nichedemo

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/niche"
)

//go:embed catalogue.jsonl
var catalogue []byte

//go:embed rationale.json
var rationaleJSON []byte

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
	if err := applyRationale(ctx, e, data, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// applyRationale revises every demo evaluation still at revision 1
// without a rationale to carry the rationale of rationale.json.
func applyRationale(ctx context.Context, e *niche.Engine, data []byte, rep *niche.ImportReport) error {
	var reasons map[string]niche.DraftRationale
	if err := json.Unmarshal(rationaleJSON, &reasons); err != nil {
		return fmt.Errorf("nichedemo: embedded rationale: %w", err)
	}
	type draftLine struct {
		Type        string      `json:"type"`
		OperationID string      `json:"operationId"`
		Draft       niche.Draft `json:"draft"`
	}
	drafts := map[int]draftLine{} // by line number, as the report counts them
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var d draftLine
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("nichedemo: catalogue line %d: %w", n, err)
		}
		if d.Type == "draft" {
			drafts[n] = d
		}
	}
	for _, l := range rep.Lines {
		d, ok := drafts[l.Line]
		r, has := reasons[d.OperationID]
		if !ok || !has || l.ID == "" {
			continue
		}
		cur, err := e.Evaluation(ctx, l.ID)
		if err != nil {
			return fmt.Errorf("nichedemo: %w", err)
		}
		if cur.Revision != 1 || cur.Rationale != (niche.Rationale{}) {
			continue // already given, or changed by a curator since
		}
		d.Draft.Rationale = &r
		op := niche.Op{ID: d.OperationID + ":rationale", Actor: "assay demo", Reason: "demo catalogue: per-criterion rationale"}
		_, err = e.Revise(ctx, l.ID, 1, op, d.Draft)
		if errors.Is(err, niche.ErrConflict) || errors.Is(err, niche.ErrOperationConflict) {
			// Another instance loading the demo at the same time revised
			// it first (or a curator did): its revision stands.
			continue
		}
		if err != nil {
			return fmt.Errorf("nichedemo: rationale of %s: %w", l.ID, err)
		}
	}
	return nil
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
