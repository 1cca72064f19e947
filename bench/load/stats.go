package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// stats collects latencies and statuses per route class, transport
// errors, and failures (each a broken promise of the server, with a few
// examples kept per kind).
type stats struct {
	mu       sync.Mutex
	classes  map[string]*classStats
	failures map[string]*failure
	defects  map[string]*failure
	notes    []string
}

type classStats struct {
	durs   []time.Duration
	status map[int]int
	netErr int
}

type failure struct {
	count    int
	examples []string
}

func newStats() *stats {
	return &stats{classes: map[string]*classStats{}, failures: map[string]*failure{}, defects: map[string]*failure{}}
}

func (s *stats) class(name string) *classStats {
	c := s.classes[name]
	if c == nil {
		c = &classStats{status: map[int]int{}}
		s.classes[name] = c
	}
	return c
}

// observe records one answered request.
func (s *stats) observe(class string, status int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.class(class)
	c.durs = append(c.durs, d)
	c.status[status]++
}

// netErr records a request that got no answer.
func (s *stats) netErr(class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.class(class).netErr++
}

// fail records a failure of kind with an example message.
func (s *stats) fail(kind, format string, args ...any) {
	s.add(s.failures, kind, format, args...)
}

// known records an occurrence of a known defect of the server (listed in
// README.md): reported, and a failure only with -strict.
func (s *stats) known(kind, format string, args ...any) {
	s.add(s.defects, kind, format, args...)
}

func (s *stats) add(m map[string]*failure, kind, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := m[kind]
	if f == nil {
		f = &failure{}
		m[kind] = f
	}
	f.count++
	if len(f.examples) < 5 {
		msg := fmt.Sprintf(format, args...)
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		f.examples = append(f.examples, msg)
	}
}

// note records an observation that is not a failure.
func (s *stats) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// failureCount returns the number of failures recorded.
func (s *stats) failureCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.failures {
		n += f.count
	}
	return n
}

// classRow is one line of the summary table.
type classRow struct {
	Class    string      `json:"class"`
	Count    int         `json:"count"`
	P50ms    float64     `json:"p50Ms"`
	P99ms    float64     `json:"p99Ms"`
	MaxMs    float64     `json:"maxMs"`
	Statuses map[int]int `json:"statuses"`
	NetErr   int         `json:"transportErrors"`
}

// snap is a copy of the collected statistics.
type snap struct {
	rows     []classRow
	total    int
	statuses map[int]int
	netErrs  int
	failures []string
	known    []string
	notes    []string
}

// snapshot copies the statistics: class rows sorted by name, totals,
// failures, known defects and notes.
func (s *stats) snapshot() snap {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := snap{statuses: map[int]int{}, notes: slices.Clone(s.notes)}
	for _, name := range slices.Sorted(maps.Keys(s.classes)) {
		c := s.classes[name]
		d := slices.Clone(c.durs)
		slices.Sort(d)
		r := classRow{Class: name, Count: len(d), Statuses: maps.Clone(c.status), NetErr: c.netErr}
		if len(d) > 0 {
			r.P50ms = ms(percentile(d, 0.50))
			r.P99ms = ms(percentile(d, 0.99))
			r.MaxMs = ms(d[len(d)-1])
		}
		out.rows = append(out.rows, r)
		out.total += len(d)
		out.netErrs += c.netErr
		for k, v := range c.status {
			out.statuses[k] += v
		}
	}
	render := func(m map[string]*failure) []string {
		var l []string
		for _, kind := range slices.Sorted(maps.Keys(m)) {
			f := m[kind]
			l = append(l, fmt.Sprintf("%s: %d (e.g. %s)", kind, f.count, strings.Join(f.examples, " | ")))
		}
		return l
	}
	out.failures, out.known = render(s.failures), render(s.defects)
	return out
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// formatStatuses renders {200: 3, 402: 1} as "200:3 402:1".
func formatStatuses(m map[int]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d:%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// memRow summarises one process's resident memory over a scenario.
type memRow struct {
	Instance  string    `json:"instance"`
	Samples   int       `json:"samples"`
	StartMiB  float64   `json:"startMiB"`
	PeakMiB   float64   `json:"peakMiB"`
	EndMiB    float64   `json:"endMiB"`
	Quarters  []float64 `json:"postWarmupQuarterMediansMiB"`
	Sustained bool      `json:"sustainedGrowth"`
	Verdict   string    `json:"verdict"`
}

// report is the outcome of one scenario.
type report struct {
	Scenario   string        `json:"scenario"`
	Backend    string        `json:"backend"`
	Instances  int           `json:"instances"`
	Clients    int           `json:"clients"`
	Elapsed    time.Duration `json:"elapsedNs"`
	Requests   int           `json:"requests"`
	Throughput float64       `json:"throughputPerSec"`
	Classes    []classRow    `json:"classes"`
	Statuses   map[int]int   `json:"statuses"`
	NetErrors  int           `json:"transportErrors"`
	Facts      []fact        `json:"facts"`
	// Deliveries is the number of paid responses received (load, crash);
	// Kills the number of SIGKILLs (crash).
	Deliveries int `json:"deliveries"`
	Kills      int `json:"kills"`
	// InFlight counts the paid requests in flight at the kills (crash),
	// each sent again with its credential after the restart: Recovered
	// got the answer of the order the kill left charged, Served ran anew
	// (the kill released the payment), Expired were refused because the
	// restart outlasted their authorization (nothing charged), Refused
	// were refused for any other reason.
	InFlight  int `json:"inFlight"`
	Recovered int `json:"recovered"`
	Served    int `json:"served"`
	Expired   int `json:"expired"`
	Refused   int `json:"refused"`
	// KnownFiveXX counts 5xx answers explained by a known defect.
	KnownFiveXX int      `json:"knownDefect5xx"`
	Memory      []memRow `json:"memory"`
	Notes       []string `json:"notes"`
	Known       []string `json:"knownDefects"`
	Failures    []string `json:"failures"`
	// Strict makes known defects fail the scenario.
	Strict bool `json:"strict"`
	// Faults and Violations are the faults scenario's: what each fault's
	// payers saw, and every broken invariant.
	Faults     []faultSummary `json:"faults,omitempty"`
	Violations []violation    `json:"violations,omitempty"`
}

// fact is a named figure of the summary ("deliveries", "double deliveries").
type fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (r *report) addFact(name string, format string, args ...any) {
	r.Facts = append(r.Facts, fact{Name: name, Value: fmt.Sprintf(format, args...)})
}

// passed reports whether the scenario kept every promise.
func (r *report) passed() bool { return len(r.Failures) == 0 && (!r.Strict || len(r.Known) == 0) }

// fill copies the request statistics of the load phase into r.
func (r *report) fill(s *stats, elapsed time.Duration) {
	sn := s.snapshot()
	r.Classes, r.Requests, r.Statuses, r.NetErrors = sn.rows, sn.total, sn.statuses, sn.netErrs
	r.Elapsed = elapsed
	if elapsed > 0 {
		r.Throughput = float64(sn.total) / elapsed.Seconds()
	}
}

// finish copies the failures, known defects and notes collected so far
// (load phase and checks) into r.
func (r *report) finish(s *stats) {
	sn := s.snapshot()
	r.Failures, r.Known, r.Notes = sn.failures, sn.known, sn.notes
}

// print writes the summary table.
func (r *report) print(w io.Writer) {
	verdict := "PASS"
	if !r.passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\n== %s on %s: %s\n", r.Scenario, r.Backend, verdict)
	fmt.Fprintf(w, "instances %d, clients %d, elapsed %s, requests %d, throughput %.1f req/s, transport errors %d\n",
		r.Instances, r.Clients, r.Elapsed.Round(10*time.Millisecond), r.Requests, r.Throughput, r.NetErrors)
	fmt.Fprintf(w, "%-30s %8s %9s %9s %9s  %s\n", "route class", "requests", "p50 ms", "p99 ms", "max ms", "statuses")
	for _, c := range r.Classes {
		st := formatStatuses(c.Statuses)
		if c.NetErr > 0 {
			st += fmt.Sprintf(" neterr:%d", c.NetErr)
		}
		fmt.Fprintf(w, "%-30s %8d %9.1f %9.1f %9.1f  %s\n", c.Class, c.Count, c.P50ms, c.P99ms, c.MaxMs, st)
	}
	fmt.Fprintf(w, "%-30s %8d %29s  %s\n", "all", r.Requests, "", formatStatuses(r.Statuses))
	fivexx := 0
	for s, n := range r.Statuses {
		if s >= 500 {
			fivexx += n
		}
	}
	if r.KnownFiveXX > 0 {
		fmt.Fprintf(w, "5xx answers: %d (%d of them the known defect listed below)\n", fivexx, r.KnownFiveXX)
	} else {
		fmt.Fprintf(w, "5xx answers: %d\n", fivexx)
	}
	for _, f := range r.Facts {
		fmt.Fprintf(w, "%s: %s\n", f.Name, f.Value)
	}
	if len(r.Memory) > 0 {
		fmt.Fprintf(w, "%-14s %7s %9s %9s %9s  %-30s %s\n", "memory (RSS)", "samples", "start MiB", "peak MiB", "end MiB", "post-warm-up quarter medians", "verdict")
		for _, m := range r.Memory {
			q := make([]string, len(m.Quarters))
			for i, v := range m.Quarters {
				q[i] = fmt.Sprintf("%.1f", v)
			}
			fmt.Fprintf(w, "%-14s %7d %9.1f %9.1f %9.1f  %-30s %s\n", m.Instance, m.Samples, m.StartMiB, m.PeakMiB, m.EndMiB, strings.Join(q, " "), m.Verdict)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, k := range r.Known {
		fmt.Fprintf(w, "KNOWN DEFECT (see bench/load/README.md; fails only with -strict): %s\n", k)
	}
	sort.Strings(r.Failures)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAILURE: %s\n", f)
	}
}

// writeJSON writes the reports to path.
func writeJSON(path string, reps []*report) error {
	b, err := json.MarshalIndent(reps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
