package corpus

import (
	"context"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
)

// FuzzSearch: no claim makes the provider panic, exceed its budget or
// quote something that is not a sentence of a document.
func FuzzSearch(f *testing.F) {
	for _, tc := range demoClaims {
		f.Add(tc.claim, 3, 8)
	}
	f.Add("8453", 1, 1)
	f.Add("and and and ; ; is is", 2, 0)
	f.Add("RFC -0.5e3 10^-34 ×× ° % 1,2,3 and 4 is not", 15, 20)
	f.Add(strings.Repeat("Base mainnet uses chain ID 8453 and ", 100), 7, 15)
	p := demoProvider(f)
	f.Fuzz(func(t *testing.T, claim string, actions, maxSources int) {
		q := &claims.ProviderQuery{Claim: claim, MaxToolActions: actions % 20, MaxSources: maxSources % 25, IncludeConflicts: true, Now: testNow}
		r, err := p.Search(context.Background(), q)
		if strings.TrimSpace(claim) == "" {
			if err == nil {
				t.Fatal("empty claim accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if budget := max(q.MaxToolActions, 1); len(r.SearchCalls) > budget {
			t.Fatalf("%d actions for budget %d", len(r.SearchCalls), budget)
		}
		for _, e := range r.Analysis.Evidence {
			d := p.c.byKey[strings.TrimPrefix(e.URL, "http://")]
			if d == nil || !strings.Contains(d.Text(), e.Excerpt) {
				t.Fatalf("bad evidence %+v", e)
			}
		}
	})
}

// FuzzParseDocument: no file makes the parser panic.
func FuzzParseDocument(f *testing.F) {
	f.Add("x.md", "---\nurl: http://a.example/\ntitle: T\n---\nText. More text.\n")
	f.Add("x.html", "---\nurl: http://a.example/\n---\n<title>T</title><p>a<b>b</b>c. D.</p>")
	f.Add("x.md", "---\n---\n")
	f.Fuzz(func(t *testing.T, name, src string) {
		d, err := ParseDocument(name, []byte(src))
		if err == nil {
			for _, s := range d.Sentences() {
				if !strings.Contains(d.Text(), s) {
					t.Fatalf("sentence %q not in text %q", s, d.Text())
				}
			}
		}
	})
}
