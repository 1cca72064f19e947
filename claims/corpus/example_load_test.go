package corpus_test

import (
	"context"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
)

// Load reads your own documents (Markdown or HTML with front matter) from
// any fs.FS — os.DirFS for a directory, embed.FS for documents compiled in.
func ExampleLoad() {
	docs := fstest.MapFS{
		"wage.md": {Data: []byte(`---
url: http://stats.exampleton.example/minimum-wage
title: Minimum wage
publisher: Exampleton Statistics Office
publishedAt: 2026-01-02
kind: official
---
The minimum wage in Exampleton is 18 dollars per hour. It applies to all employers.
`)},
		"forum.md": {Data: []byte(`---
url: http://forum.exampleton.example/t/wage
title: Wage question
kind: forum
---
Someone said the minimum wage in Exampleton is 15 dollars per hour.
`)},
		"notes.txt": {Data: []byte("ignored: not .md, .markdown, .html or .htm")},
	}
	c, err := corpus.Load(docs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Label(), len(c.Documents()), c.Hosts())

	p, err := corpus.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	r, err := p.Search(context.Background(), &claims.ProviderQuery{
		Tier: claims.Standard, Claim: "The minimum wage in Exampleton is 18 dollars per hour.", MaxToolActions: 3, MaxSources: 8,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Analysis.Status)
	for _, e := range r.Analysis.Evidence {
		fmt.Println(e.Relationship, e.SourceType, e.URL)
	}
	// Output:
	// offline document collection 2 [forum.exampleton.example stats.exampleton.example]
	// confirmed
	// supports official http://stats.exampleton.example/minimum-wage
	// contradicts forum http://forum.exampleton.example/t/wage
}
