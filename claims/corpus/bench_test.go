package corpus

import (
	"context"
	"testing"

	"github.com/assaykit/assay/claims"
)

// BenchmarkSearch measures one standard-tier search over the demo
// collection (retrieval, reading, stance rule, verdicts, trace).
func BenchmarkSearch(b *testing.B) {
	p := demoProvider(b)
	queries := make([]*claims.ProviderQuery, len(demoClaims))
	for i, tc := range demoClaims {
		queries[i] = tierQuery(claims.Standard, tc.claim)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := p.Search(context.Background(), queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDemo measures loading and indexing the embedded collection.
func BenchmarkDemo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Demo(); err != nil {
			b.Fatal(err)
		}
	}
}
