package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// rssSample is one reading of a process's resident set size.
type rssSample struct {
	at    time.Time
	bytes int64
}

// rssSeries is the readings of one process lifetime.
type rssSeries struct {
	name    string
	pid     int
	samples []rssSample
}

// memWatch samples the RSS of server processes from /proc at a fixed
// interval; a restarted process (new pid) starts a new series.
type memWatch struct {
	mu     sync.Mutex
	series []*rssSeries
	done   chan struct{}
}

// watchMemory samples procs every interval until ctx ends.
func watchMemory(ctx context.Context, procs []*serverProc, every time.Duration) *memWatch {
	m := &memWatch{done: make(chan struct{})}
	current := map[string]*rssSeries{}
	sample := func() {
		for _, p := range procs {
			pid := p.pid()
			if pid == 0 {
				continue
			}
			b, err := rssBytes(pid)
			if err != nil {
				continue // the process is gone (killed) or restarting
			}
			m.mu.Lock()
			s := current[p.name]
			if s == nil || s.pid != pid {
				s = &rssSeries{name: p.lifeName(), pid: pid}
				current[p.name] = s
				m.series = append(m.series, s)
			}
			s.samples = append(s.samples, rssSample{at: time.Now(), bytes: b})
			m.mu.Unlock()
		}
	}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		sample()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return m
}

// wait blocks until the sampler has stopped.
func (m *memWatch) wait() { <-m.done }

// growthLimits say when memory growth counts as sustained.
type growthLimits struct {
	// WarmFraction of each series (by time) is excluded as warm-up.
	WarmFraction float64
	// MinSamples after warm-up are needed for a verdict.
	MinSamples int
	// MinMiB and MinRatio: the rise from the first to the last
	// post-warm-up quarter must exceed both to count.
	MinMiB   float64
	MinRatio float64
}

// rows summarises every series and judges its growth.
func (m *memWatch) rows(l growthLimits) []memRow {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memRow
	for _, s := range m.series {
		out = append(out, judgeGrowth(s.name, s.samples, l))
	}
	return out
}

const mib = 1 << 20

// judgeGrowth computes start/peak/end and whether the post-warm-up
// readings grow in a sustained way: the medians of the four quarters of
// the post-warm-up window rise strictly one after the other, and the last
// exceeds the first by more than both MinMiB and MinRatio. A plateau, a
// one-off step or a saw-tooth (garbage collection) is not sustained.
func judgeGrowth(name string, samples []rssSample, l growthLimits) memRow {
	r := memRow{Instance: name, Samples: len(samples)}
	if len(samples) == 0 {
		r.Verdict = "no samples"
		return r
	}
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.bytes)
	}
	r.StartMiB = float64(samples[0].bytes) / mib
	r.PeakMiB = float64(peak) / mib
	r.EndMiB = float64(samples[len(samples)-1].bytes) / mib
	first, last := samples[0].at, samples[len(samples)-1].at
	cut := first.Add(time.Duration(float64(last.Sub(first)) * l.WarmFraction))
	var post []rssSample
	for _, s := range samples {
		if !s.at.Before(cut) {
			post = append(post, s)
		}
	}
	if len(post) < max(l.MinSamples, 4) {
		r.Verdict = fmt.Sprintf("too few samples after warm-up (%d) to judge", len(post))
		return r
	}
	q := len(post) / 4
	for i := range 4 {
		part := post[i*q : (i+1)*q]
		if i == 3 {
			part = post[3*q:]
		}
		vals := make([]int64, len(part))
		for j, s := range part {
			vals[j] = s.bytes
		}
		slices.Sort(vals)
		r.Quarters = append(r.Quarters, float64(vals[len(vals)/2])/mib)
	}
	rising := r.Quarters[0] < r.Quarters[1] && r.Quarters[1] < r.Quarters[2] && r.Quarters[2] < r.Quarters[3]
	rise := r.Quarters[3] - r.Quarters[0]
	r.Sustained = rising && rise > l.MinMiB && rise > l.MinRatio*r.Quarters[0]
	switch {
	case r.Sustained:
		r.Verdict = fmt.Sprintf("SUSTAINED GROWTH (+%.1f MiB, +%.0f%%)", rise, 100*rise/r.Quarters[0])
	case rising:
		r.Verdict = fmt.Sprintf("flat (rising by %.1f MiB, within %.0f MiB / %.0f%%)", rise, l.MinMiB, 100*l.MinRatio)
	default:
		r.Verdict = "flat"
	}
	return r
}
