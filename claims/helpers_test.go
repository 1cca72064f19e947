package claims_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/storetest"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testNow is the fixed clock of engine tests (fixtures are dated around it).
var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func clock() time.Time { return testNow }

// emptyDB is an empty, migrated database, copied for each test that
// opens it (migrating each anew cost about 10 ms).
var emptyDB storetest.Template

func openStore(t testing.TB) *store.DB {
	t.Helper()
	db := emptyDB.Open(t, nil)
	return db
}

func newEngine(t testing.TB, p claims.SearchProvider, s claims.Snapshotter, opts *claims.Options) (*claims.Engine, *store.DB) {
	t.Helper()
	db := openStore(t)
	if opts == nil {
		opts = &claims.Options{}
	}
	if opts.Now == nil {
		opts.Now = clock
	}
	e, err := claims.New(p, claimsstore.New(db), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, db
}

func fixture(t testing.TB, name string) *claimstest.Fixture {
	t.Helper()
	f, err := claimstest.LoadFixture(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type run struct {
	res   *claims.Result
	prov  *claimstest.Provider
	snaps *claimstest.Snapshotter
	eng   *claims.Engine
	db    *store.DB
}

// runFixture verifies a fixture's request (after mutate) on its tier.
func runFixture(t *testing.T, name string, mutate func(*claims.Request)) run {
	t.Helper()
	return runFixtureWith(t, name, mutate, nil)
}

// runFixtureWith is runFixture with the loaded fixture (its recorded
// response and pages) changed by change first.
func runFixtureWith(t *testing.T, name string, mutate func(*claims.Request), change func(*claimstest.Fixture)) run {
	t.Helper()
	f := fixture(t, name)
	if change != nil {
		change(f)
	}
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(req)
	}
	p, s := f.Provider(), f.Snapshotter()
	s.Now = clock
	e, db := newEngine(t, p, s, nil)
	res, err := e.Verify(context.Background(), f.Tier, req, &claims.Call{Scope: "payer:test"})
	if err != nil {
		t.Fatalf("Verify(%s): %v", name, err)
	}
	validate(t, res)
	return run{res, p, s, e, db}
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validate checks a result against the hand-written JSON Schema of the
// interface document's ClaimVerificationResult.
func validate(t testing.TB, res *claims.Result) {
	t.Helper()
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		schema, schemaErr = c.Compile("testdata/result.schema.json")
	})
	if schemaErr != nil {
		t.Fatalf("schema: %v", schemaErr)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("result does not match the schema: %v\n%s", err, b)
	}
	if bytes.Contains(b, []byte(":null,")) || bytes.Contains(b, []byte(":null}")) {
		// Only documented nullable fields may be null.
		for _, m := range regexp.MustCompile(`"(\w+)":null`).FindAllSubmatch(b, -1) {
			switch string(m[1]) {
			case "publishedAt", "snapshotId", "title", "finalUrl", "httpStatus", "contentType", "contentLength",
				"rawSha256", "normalizedSha256", "failureReason":
			default:
				t.Fatalf("field %s is null:\n%s", m[1], b)
			}
		}
	}
}

var idPattern = regexp.MustCompile(`(cv|snap)_[0-9a-f]{32}`)

// golden compares a result with testdata/golden/<name>.json, ids replaced
// by placeholders in order of appearance.
func golden(t *testing.T, name string, res *claims.Result) {
	t.Helper()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	b = idPattern.ReplaceAllFunc(b, func(id []byte) []byte {
		s := string(id)
		if r, ok := seen[s]; ok {
			return []byte(r)
		}
		prefix, _, _ := strings.Cut(s, "_")
		r := prefix + "_ID" + string(rune('A'+len(seen)))
		seen[s] = r
		return []byte(r)
	})
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file missing (run with -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(b)+"\n"); diff != "" {
		t.Fatalf("result differs from %s (-want +got):\n%s", path, diff)
	}
}

func evidenceByID(res *claims.Result) map[string]claims.Evidence {
	m := map[string]claims.Evidence{}
	for _, e := range res.Evidence {
		m[e.ID] = e
	}
	return m
}

func factStatuses(res *claims.Result) []claims.Status {
	var out []claims.Status
	for _, f := range res.AtomicFacts {
		out = append(out, f.Status)
	}
	return out
}

func hasLimitation(res *claims.Result, substr string) bool {
	for _, l := range res.Limitations {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

func dateOf(y int, m time.Month, d int) *field.Date { return &field.Date{Year: y, Month: m, Day: d} }
