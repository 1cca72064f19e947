package corpus

import (
	"math"
	"sort"
)

// BM25 parameters (Robertson–Spärck Jones with the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 is an in-memory BM25 index over documents given as term lists.
type bm25 struct {
	tf   []map[string]int
	lens []int
	avg  float64
	df   map[string]int
}

func newBM25(docs [][]string) *bm25 {
	x := &bm25{tf: make([]map[string]int, len(docs)), lens: make([]int, len(docs)), df: map[string]int{}}
	total := 0
	for i, terms := range docs {
		m := make(map[string]int, len(terms))
		for _, t := range terms {
			m[t]++
		}
		for t := range m {
			x.df[t]++
		}
		x.tf[i], x.lens[i] = m, len(terms)
		total += len(terms)
	}
	if len(docs) > 0 {
		x.avg = float64(total) / float64(len(docs))
	}
	return x
}

// idf is the BM25 inverse document frequency, always positive:
// ln(1 + (N − df + 0.5) / (df + 0.5)).
func (x *bm25) idf(term string) float64 {
	n, df := float64(len(x.tf)), float64(x.df[term])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// score is Σ idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg)) over the
// distinct query terms.
func (x *bm25) score(doc int, query []string) float64 {
	var s float64
	norm := bm25K1 * (1 - bm25B + bm25B*float64(x.lens[doc])/x.avg)
	seen := map[string]bool{}
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		f := float64(x.tf[doc][t])
		if f == 0 {
			continue
		}
		s += x.idf(t) * f * (bm25K1 + 1) / (f + norm)
	}
	return s
}

// hit is one retrieved document.
type hit struct {
	doc   int
	score float64
}

// search returns up to k candidates with a positive score, best first
// (ties by document order, so results are deterministic).
func (x *bm25) search(query []string, candidates []int, k int) []hit {
	var hits []hit
	for _, d := range candidates {
		if s := x.score(d, query); s > 0 {
			hits = append(hits, hit{d, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].doc < hits[j].doc
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
