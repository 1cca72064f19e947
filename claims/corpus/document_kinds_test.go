package corpus_test

import (
	"slices"
	"testing"

	"github.com/assaykit/assay/claims/corpus"
)

func TestHostsOfKind(t *testing.T) {
	c, err := corpus.Demo()
	if err != nil {
		t.Fatal(err)
	}
	official := c.HostsOfKind(corpus.KindOfficial)
	if len(official) == 0 || !slices.IsSorted(official) {
		t.Fatalf("official hosts %v", official)
	}
	for _, h := range official {
		for _, d := range c.Documents() {
			if d.Host == h && d.Kind != corpus.KindOfficial {
				t.Errorf("%s listed as official but %s is %s", h, d.URL, d.Kind)
			}
		}
	}
	if len(c.HostsOfKind("")) != 0 || len(c.HostsOfKind("no-such-kind")) != 0 {
		t.Error("unknown kinds match hosts")
	}
}
