package claimstest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/shapes"
)

//go:embed testdata/*.json
var fixtureFiles embed.FS

// Fixture is a recorded provider exchange: the request a test sends, the
// provider's response, and the pages its URLs lead to.
type Fixture struct {
	// Name is the file name without ".json".
	Name string `json:"-"`
	// Description says what the fixture exercises.
	Description string `json:"description"`
	// Tier is the tier to verify on.
	Tier string `json:"tier"`
	// Request is the raw request body (defaults applied by Request()).
	RawRequest json.RawMessage `json:"request"`
	// Pages maps URLs to page text for the fake Snapshotter.
	Pages map[string]string `json:"pages"`
	// ContentTypes maps URLs of Pages to their Content-Type when it is not
	// text/html (see Page.ContentType), e.g. "application/pdf" for a page
	// whose text the capturer cannot extract.
	ContentTypes map[string]string `json:"contentTypes,omitempty"`
	// Response is the provider's answer.
	Response *claims.ProviderResponse `json:"response"`
}

// Request decodes the fixture's request with the documented defaults.
func (f *Fixture) Request() (*claims.Request, error) {
	var r claims.Request
	if err := shapes.Decode(f.RawRequest, &r); err != nil {
		return nil, fmt.Errorf("claimstest: fixture %s: request: %w", f.Name, err)
	}
	return &r, nil
}

// Snapshotter returns a fake Snapshotter serving the fixture's pages.
func (f *Fixture) Snapshotter() *Snapshotter {
	s := &Snapshotter{Pages: map[string]Page{}}
	for u, text := range f.Pages {
		s.Pages[u] = Page{Text: text, ContentType: f.ContentTypes[u]}
	}
	return s
}

// Provider returns a scripted provider answering the fixture's response.
func (f *Fixture) Provider() *Provider { return Respond(f.Response, 0) }

// LoadFixture reads the named fixture (file name without ".json").
func LoadFixture(name string) (*Fixture, error) {
	b, err := fixtureFiles.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("claimstest: no fixture %q", name)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	f := &Fixture{Name: name}
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("claimstest: fixture %s: %w", name, err)
	}
	if f.Response == nil || f.Tier == "" || len(f.RawRequest) == 0 {
		return nil, fmt.Errorf("claimstest: fixture %s: tier, request and response are required", name)
	}
	for u := range f.ContentTypes {
		if _, ok := f.Pages[u]; !ok {
			return nil, fmt.Errorf("claimstest: fixture %s: content type for %s, which is not among its pages", name, u)
		}
	}
	return f, nil
}

// FixtureNames lists every fixture, sorted.
func FixtureNames() []string {
	entries, _ := fs.ReadDir(fixtureFiles, "testdata")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
