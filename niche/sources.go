package niche

import (
	"context"
	"slices"
)

// Source is a configured signal source. It holds descriptive facts only:
// credentials a collector needs live in the collector, never here, so
// listing sources can never leak them.
type Source struct {
	// ID is the origin name its signals carry.
	ID string `json:"id"`
	// Name is a human name, e.g. "Stack Exchange network".
	Name string `json:"name"`
	// Homepage is the source's public site.
	Homepage string `json:"homepage,omitempty"`
	// License says under which terms excerpts are used.
	License string `json:"license"`
	// Scope says what is collected, e.g. "questions tagged accounting on
	// money.stackexchange.com".
	Scope string `json:"scope"`
	// Kinds are the signal kinds the source produces.
	Kinds []SignalKind `json:"kinds,omitempty"`
	// Enabled is false for a source kept for its past signals only.
	Enabled bool `json:"enabled"`
}

// SourceStatus is a source with its collection statistics.
type SourceStatus struct {
	Source
	// Configured is false for an origin found among stored signals but
	// absent from the configuration.
	Configured bool `json:"configured"`
	// Stats counts the source's stored signals.
	Stats OriginStats `json:"stats"`
	// LastCollection is the latest ingestion run, if any.
	LastCollection *Collection `json:"lastCollection"`
}

// Sources returns the configured sources, then any other origin found in
// the store, each with its statistics and latest collection run.
func (e *Engine) Sources(ctx context.Context) ([]SourceStatus, error) {
	stats, err := e.st.SignalStats(ctx)
	if err != nil {
		return nil, err
	}
	runs, err := e.st.LastCollections(ctx)
	if err != nil {
		return nil, err
	}
	byOrigin := map[string]OriginStats{}
	for _, s := range stats {
		byOrigin[s.Origin] = s
	}
	lastRun := map[string]Collection{}
	for _, c := range runs {
		lastRun[c.Origin] = c
	}
	out := []SourceStatus{}
	seen := map[string]bool{}
	add := func(src Source, configured bool) {
		st := byOrigin[src.ID]
		st.Origin = src.ID
		ss := SourceStatus{Source: src, Configured: configured, Stats: st}
		if src.Kinds != nil {
			ss.Kinds = slices.Clone(src.Kinds)
		}
		if c, ok := lastRun[src.ID]; ok {
			ss.LastCollection = &c
		}
		out = append(out, ss)
		seen[src.ID] = true
	}
	for _, s := range e.opts.Sources {
		add(s, true)
	}
	var extra []string
	for o := range byOrigin {
		if !seen[o] {
			extra = append(extra, o)
		}
	}
	slices.Sort(extra)
	for _, o := range extra {
		add(Source{ID: o, Name: o}, false)
	}
	return out, nil
}
