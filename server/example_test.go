package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// verificationPieces builds a claims engine over the offline demo corpus
// and a snapshot service that captures the corpus pages from its loopback
// server, all on one in-memory database. closeAll releases them.
func verificationPieces(ctx context.Context) (engine *claims.Engine, snaps *snapshot.Service, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	coll, err := corpus.Demo()
	if err != nil {
		return nil, nil, nil, err
	}
	site, err := corpus.Serve(coll)
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, func() { site.Close() })
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, func() { db.Close() })
	provider, err := corpus.New(coll, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	// The table resolver (no DNS) and the dial tripwire (loopback only)
	// keep the examples' captures on this machine whatever a result cites;
	// a real deployment leaves both unset.
	records := snapshotstore.New(db)
	snaps, err = snapshot.NewService(records, records, &snapshot.Options{
		HostMap: site.HostMap(), AllowAddrs: site.AllowList(),
		Resolver: snapshottest.Resolver(nil), DialControl: (&snapshottest.Tripwire{}).Control,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, snaps.Close)
	engine, err = claims.New(provider, claimsstore.New(db), snaps, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return engine, snaps, closeAll, nil
}

// New composes the configured services into one http.Handler. Here:
// claim verification and snapshot retrieval, served without charging
// (httpgate.Free; a httpgate.Gate charges), plus the routes every server has
// (/healthz, /readyz, /v1/capabilities).
func ExampleNew() {
	ctx := context.Background()
	engine, snaps, closeAll, err := verificationPieces(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer closeAll()

	h, err := server.New(server.Config{
		Paywall:   httpgate.Free{},
		Claims:    server.ClaimsConfig{Engine: engine},
		Snapshots: server.SnapshotsConfig{Service: snaps, Prefixes: []string{server.DefaultClaimsPrefix}},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"claim":"Base mainnet uses chain ID 8453.","minimumSources":1}`
	res, err := http.Post(srv.URL+"/claim-verification/v1/claims/verify", "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	var result claims.Result
	err = json.NewDecoder(res.Body).Decode(&result)
	res.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.StatusCode, result.Status, len(result.Snapshots), "snapshots")

	// Every snapshot a result cites can be fetched by anyone it is shared
	// with; its bytes hash to rawSha256.
	res, err = http.Get(srv.URL + "/claim-verification/v1/url-snapshots/" + result.Snapshots[0].ID + "/content")
	if err != nil {
		log.Fatal(err)
	}
	content, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, snapshot.RawSHA256(content) == *result.Snapshots[0].RawSHA256)

	// Errors are FastAPI-style bodies: a request the tier cannot serve is
	// refused before any payment with Pydantic's 422 list.
	res, err = http.Post(srv.URL+"/v1/claims/verify/quick", "application/json", strings.NewReader(`{"claim":"Base","minimumSources":5}`))
	if err != nil {
		log.Fatal(err)
	}
	detail, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, string(detail))
	// Output:
	// 200 confirmed 3 snapshots
	// 200 true
	// 422 {"detail":[{"type":"value_error","loc":["body"],"msg":"Value error, The quick tier supports at most 3 cited sources; minimumSources (5) cannot be met","input":{"claim":"Base","minimumSources":5},"ctx":{"error":{}}}]}
}

// Mount the handler in a host's own mux, under a prefix and behind the
// host's authentication. Configure the services with the prefix (rather
// than http.StripPrefix) so that the URLs the handler builds — snapshot
// content URLs, payment resource URLs — carry it too.
func Example_mountUnderPrefix() {
	ctx := context.Background()
	engine, snaps, closeAll, err := verificationPieces(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer closeAll()
	h, err := server.New(server.Config{
		Paywall:   httpgate.Free{},
		Claims:    server.ClaimsConfig{Engine: engine, Prefix: "/api"},
		Snapshots: server.SnapshotsConfig{Service: snaps, Prefixes: []string{"/api"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	hostAuth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer host-token" {
				http.Error(w, "host says no", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the host's own page") })
	mux.Handle("/api/", hostAuth(h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(token string) (int, []byte) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/claims/verify/quick", strings.NewReader(`{"claim":"Base mainnet uses chain ID 8543.","minimumSources":1}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	status, body := post("")
	fmt.Println(status, strings.TrimSpace(string(body)))
	status, body = post("host-token")
	var result claims.Result
	if err := json.Unmarshal(body, &result); err != nil {
		log.Fatal(err)
	}
	fmt.Println(status, result.Status)
	// Output:
	// 401 host says no
	// 200 contradicted
}
