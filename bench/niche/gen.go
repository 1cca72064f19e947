package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/assaykit/assay/niche"
)

// The synthetic catalogue: titles "<tool> for <segment> <profession>",
// problems and hypotheses mixing those words with a Zipf-distributed
// filler vocabulary, 12 categories, scores from random criteria. Every
// value comes from a PCG generator seeded by the caller, so a seed always
// gives the same catalogue.

var (
	tools = []string{"scheduling", "invoicing", "inventory", "booking", "payroll", "compliance", "routing", "reminders",
		"quoting", "estimating", "dispatch", "onboarding", "reporting", "tracking", "ordering", "billing", "rostering",
		"auditing", "labelling", "forecasting", "ticketing", "recruiting", "marketing", "bookkeeping", "contracts",
		"waitlists", "logistics", "certification", "maintenance", "procurement", "training", "documentation",
		"referrals", "subscriptions", "reviews", "deliveries", "returns", "pricing", "timesheets", "permits"}
	professions = []string{"plumbers", "electricians", "roofers", "dentists", "physiotherapists", "veterinarians",
		"bakers", "florists", "tutors", "landlords", "couriers", "photographers", "translators", "architects",
		"accountants", "barbers", "hairdressers", "caterers", "brewers", "winemakers", "beekeepers", "farmers",
		"gardeners", "landscapers", "locksmiths", "painters", "carpenters", "welders", "mechanics", "opticians",
		"pharmacists", "midwives", "nurses", "caregivers", "chiropractors", "podcasters", "musicians", "potters",
		"tailors", "jewellers", "butchers", "grocers", "cafes", "restaurants", "hotels", "campsites", "gyms",
		"notaries", "surveyors", "auctioneers", "printers", "upholsterers", "glaziers", "plasterers", "tilers",
		"cleaners", "movers", "decorators", "therapists", "coaches"}
	segments = []string{"small", "independent", "rural", "urban", "mobile", "family", "boutique", "regional",
		"seasonal", "multisite", "solo", "community", "specialist", "franchise", "volunteer"}
	categories = []string{"Trades", "Healthcare", "Food & Beverage", "Finance", "Retail", "Education", "Property",
		"Logistics", "Legal", "HR", "Agriculture", "Creative"}
)

// filler returns a deterministic pseudo-word vocabulary of n entries.
func filler(n int) []string {
	syll := []string{"ka", "lo", "ver", "min", "sta", "rel", "po", "dun", "ti", "mar", "sel", "qu", "bri", "nor", "fa", "gel"}
	out := make([]string, n)
	for i := range n {
		var b strings.Builder
		x := i + 17
		for k := 0; k < 3; k++ {
			b.WriteString(syll[x%len(syll)])
			x /= len(syll)
			if x == 0 {
				break
			}
		}
		fmt.Fprintf(&b, "%d", i%7)
		out[i] = b.String()
	}
	return out
}

type generator struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newGenerator(seed uint64) *generator {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := filler(5000)
	return &generator{r: r, zipf: rand.NewZipf(r, 1.1, 8, uint64(len(vocab)-1)), vocab: vocab}
}

func (g *generator) words(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.vocab[g.zipf.Uint64()]
	}
	return strings.Join(parts, " ")
}

func (g *generator) pick(list []string) string { return list[g.r.IntN(len(list))] }

// generate returns n published records linking signals from a pool it
// also returns, as of now.
func generate(seed uint64, n int, now time.Time) ([]niche.Signal, []niche.Record) {
	g := newGenerator(seed)
	scorer := niche.DefaultScorer()
	nsig := max(n/30, 30)
	signals := make([]niche.Signal, nsig)
	kinds := niche.Kinds()
	for i := range signals {
		obs := now.Add(-time.Duration(g.r.IntN(90*24)) * time.Hour).UTC().Truncate(time.Second)
		signals[i] = niche.Signal{
			ID: fmt.Sprintf("sig_%032x", seed<<32|uint64(i)), Kind: kinds[i%6], Origin: "bench",
			SourceURL: fmt.Sprintf("https://site%d.example/post/%d", i%50, i), SourceDomain: fmt.Sprintf("site%d.example", i%50),
			ExternalID: fmt.Sprintf("bench-%d", i), Title: "Synthetic signal " + g.words(4), Excerpt: g.words(20),
			ObservedAt: obs, CollectedAt: obs.Add(time.Hour), License: "synthetic", Attribution: "bench",
			State: niche.StateAccepted, CreatedAt: now,
		}
	}
	recs := make([]niche.Record, n)
	for i := range recs {
		tool, seg, prof := g.pick(tools), g.pick(segments), g.pick(professions)
		d := niche.Dimensions{Pain: g.r.IntN(6), Frequency: g.r.IntN(6), WillingnessToPay: g.r.IntN(6),
			ReachableBuyers: g.r.IntN(6), Feasibility: g.r.IntN(6), CompetitionGap: g.r.IntN(6)}
		updated := now.Add(-time.Duration(g.r.IntN(365*24*60)) * time.Minute).UTC().Truncate(time.Microsecond)
		sigs := []string{signals[g.r.IntN(nsig)].ID, signals[g.r.IntN(nsig)].ID, signals[g.r.IntN(nsig)].ID}
		recs[i] = niche.Record{
			ID:    fmt.Sprintf("niche_%032x", seed<<40|uint64(i)),
			Title: fmt.Sprintf("%s for %s %s", strings.ToUpper(tool[:1])+tool[1:], seg, prof),
			Problem: fmt.Sprintf("%s %s struggle with %s: %s. Owners mention %s and %s every week.",
				strings.ToUpper(seg[:1])+seg[1:], prof, tool, g.words(30), g.pick(tools), g.words(8)),
			Buyer:              fmt.Sprintf("Owners of %s %s businesses", seg, prof),
			Category:           categories[g.r.IntN(len(categories))],
			SolutionHypothesis: fmt.Sprintf("A focused %s tool for %s: %s", tool, prof, g.words(25)),
			EvaluationNotes:    "Synthetic evaluation notes for the benchmark: " + g.words(40),
			Dimensions:         d, SignalIDs: sigs, Score: scorer.Score(d), ScoreVersion: scorer.Version(),
			ScoreWeights: scorer.Weights(), Status: niche.StatusPublished, Revision: 1,
			CreatedAt: updated, UpdatedAt: updated, PublishedAt: updated,
		}
	}
	return signals, recs
}

// queries returns typical multi-word search queries (two or three words
// that together match a few dozen evaluations at 100k) and broad
// single-word ones (thousands of matches).
func queries(seed uint64, n int) (typical, broad []string) {
	g := newGenerator(seed + 1)
	for range n {
		switch g.r.IntN(3) {
		case 0:
			typical = append(typical, g.pick(tools)+" "+g.pick(professions))
		case 1:
			typical = append(typical, g.pick(segments)+" "+g.pick(professions)+" "+g.pick(tools))
		default:
			typical = append(typical, g.pick(professions)+" "+g.pick(tools)+" owners")
		}
		broad = append(broad, g.pick(tools))
	}
	return typical, broad
}

// distinctQueries returns distinct typical queries in the proportions of
// queries (a third each of "tool profession", "segment profession tool"
// and "profession tool owners": 2,400 of each, 7,200 in all), in a seeded
// random order, for a query mix in which no query repeats within a short
// run.
func distinctQueries(seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed+2))
	var two, three, owners []string
	for _, p := range professions {
		for _, t := range tools {
			two = append(two, t+" "+p)
			owners = append(owners, p+" "+t+" owners")
			three = append(three, segments[r.IntN(len(segments))]+" "+p+" "+t)
		}
	}
	out := make([]string, 0, 3*len(two))
	for i := range two {
		out = append(out, two[i], three[i], owners[i])
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// catalogueJSONL writes the synthetic catalogue of seed as a bulk import
// file (niche.Engine.Import): its signals, then one draft per record with
// operation id "bench-<seed>-<i>", published, linking three signals on
// pages of three different domains (the publication floor).
func catalogueJSONL(w io.Writer, seed uint64, n int, now time.Time) error {
	signals, recs := generate(seed, n, now)
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	for _, s := range signals {
		if err := enc.Encode(struct {
			Type string `json:"type"`
			niche.SignalInput
		}{"signal", niche.SignalInput{ID: s.ID, Kind: s.Kind, SourceURL: s.SourceURL, Origin: s.Origin,
			ExternalID: s.ExternalID, Title: s.Title, Excerpt: s.Excerpt, ObservedAt: s.ObservedAt,
			CollectedAt: s.CollectedAt, License: s.License, Attribution: s.Attribution, State: s.State}}); err != nil {
			return err
		}
	}
	for i, r := range recs {
		d := r.Dimensions
		// Three consecutive signals: three pages on three domains.
		j := i % (len(signals) - 2)
		draft := niche.Draft{Title: r.Title, Problem: r.Problem, Buyer: r.Buyer, Category: r.Category,
			SolutionHypothesis: r.SolutionHypothesis, EvaluationNotes: r.EvaluationNotes,
			Pain: new(d.Pain), Frequency: new(d.Frequency), WillingnessToPay: new(d.WillingnessToPay),
			ReachableBuyers: new(d.ReachableBuyers), Feasibility: new(d.Feasibility), CompetitionGap: new(d.CompetitionGap),
			SignalIDs: []string{signals[j].ID, signals[j+1].ID, signals[j+2].ID}, Publish: true}
		if err := enc.Encode(struct {
			Type        string       `json:"type"`
			OperationID string       `json:"operationId"`
			Draft       *niche.Draft `json:"draft"`
		}{"draft", fmt.Sprintf("bench-%d-%d", seed, i), &draft}); err != nil {
			return err
		}
	}
	return bw.Flush()
}
