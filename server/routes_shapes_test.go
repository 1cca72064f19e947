package server

import (
	"testing"

	"github.com/assaykit/assay/shapes"
)

// TestRouteShapesResolve: every Body and Query name in the routing table
// (which discovery documents turn into schemas) is a shape that New knows
// and whose JSON Schema can be generated.
func TestRouteShapesResolve(t *testing.T) {
	var names []string
	for _, s := range []*Server{
		newNicheFixture(t, NicheConfig{}).srv,
		newClaimsEnv(t, nil, nil).srv,
	} {
		for _, rt := range s.Routes() {
			for _, n := range []string{rt.Body, rt.Query} {
				if n != "" {
					names = append(names, rt.ID+":"+n)
					if _, ok := shapes.New(n); !ok {
						t.Errorf("route %s names unknown shape %q", rt.ID, n)
					}
					if _, ok := shapes.Schema(n); !ok {
						t.Errorf("route %s: no schema for %q", rt.ID, n)
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no route names a shape")
	}
}
