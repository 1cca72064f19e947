package claims

import (
	"strings"
	"testing"
)

func TestClassifyNamesWhyAnOfficialDomainIsOfficial(t *testing.T) {
	c := newClassifier(&Options{OfficialDomains: []string{"docs.base.example"}})
	eff := &Effective{SourcePolicy: PolicyAuthoritative}
	for _, tc := range []struct{ url, want string }{
		{"https://www.who.int/news/x", "who.int is a government or intergovernmental domain"},
		{"https://docs.base.example/chains", "docs.base.example is a configured official domain"},
		{"https://www.nasa.gov/x", "official: .gov domain"},
	} {
		got := c.classify(tc.url, eff)
		if got.Type != SourceOfficial || !strings.Contains(got.Reason, tc.want) {
			t.Errorf("%s: %+v, want official with %q", tc.url, got, tc.want)
		}
	}
}
