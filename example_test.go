package assay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The quick start: one store holds everything (here SQLite in memory; a
// file with sqlite.Open, or PostgreSQL with postgres.Open, in
// production); the niche
// catalogue, the snapshot service and the claims engine are built on it,
// and server.New composes them into one *server.Server (an http.Handler).
// The offline demo corpus stands in for OpenAI, and httpgate.Free serves
// the paid routes without charging (a *httpgate.Gate built on the same
// store charges).
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	catalogue, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := nichedemo.Load(ctx, catalogue, nil); err != nil {
		log.Fatal(err)
	}

	coll, err := corpus.Demo()
	if err != nil {
		log.Fatal(err)
	}
	site, err := corpus.Serve(coll) // the corpus's pages, on loopback, for real captures
	if err != nil {
		log.Fatal(err)
	}
	defer site.Close()
	provider, err := corpus.New(coll, nil)
	if err != nil {
		log.Fatal(err)
	}
	records := snapshotstore.New(db)
	snaps, err := snapshot.NewService(records, records, &snapshot.Options{HostMap: site.HostMap(), AllowAddrs: site.AllowList()})
	if err != nil {
		log.Fatal(err)
	}
	defer snaps.Close()
	engine, err := claims.New(provider, claimsstore.New(db), snaps, nil)
	if err != nil {
		log.Fatal(err)
	}

	h, err := server.New(server.Config{
		Logger:    slog.New(slog.DiscardHandler),
		Paywall:   httpgate.Free{},
		Niche:     server.NicheConfig{Engine: catalogue},
		Claims:    server.ClaimsConfig{Engine: engine},
		Snapshots: server.SnapshotsConfig{Service: snaps, Prefixes: []string{server.DefaultClaimsPrefix}},
		Ready:     map[string]func(context.Context) error{"store": db.Ping},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string) {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Println(path, res.StatusCode, strings.TrimSpace(string(b)))
	}
	get("/readyz")
	res, err := http.Post(srv.URL+"/v1/claims/verify", "application/json",
		strings.NewReader(`{"claim":"Base mainnet uses chain ID 8453.","minimumSources":1}`))
	if err != nil {
		log.Fatal(err)
	}
	var result claims.Result
	err = json.NewDecoder(res.Body).Decode(&result)
	res.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("/v1/claims/verify", res.StatusCode, result.Status, len(result.Snapshots) > 0)

	res, err = http.Get(srv.URL + "/v1/niches?limit=2")
	if err != nil {
		log.Fatal(err)
	}
	var list server.NicheListResponse
	err = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("/v1/niches", res.StatusCode, len(list.Niches), "previews")
	// Output:
	// /readyz 200 {"status":"ok","checks":{"store":"ok"}}
	// /v1/claims/verify 200 confirmed true
	// /v1/niches 200 2 previews
}
