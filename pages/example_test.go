package pages_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing/fstest"

	"github.com/assaykit/assay/pages"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
)

// Mount the pages beside the API and restyle them: a stylesheet of your
// own (here the default extended) and a landing template of your own.
// A browser gets the page at GET /; an agent keeps the JSON.
func Example() {
	pg, err := pages.New(&pages.Options{
		SiteName:   "Acme Evidence",
		Stylesheet: append(pages.DefaultStylesheet(), []byte(":root{--accent:#8a2be2}")...),
		Templates: fstest.MapFS{"landing.html": {Data: []byte(
			`{{define "landing"}}{{template "head" .}}<h1>Welcome to {{.Site}}</h1>{{template "foot" .}}{{end}}`)}},
	})
	if err != nil {
		panic(err)
	}
	h, err := server.New(server.Config{Paywall: httpgate.Free{}, Mounts: []server.Mount{pg}})
	if err != nil {
		panic(err)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), strings.Contains(rec.Body.String(), "<h1>Welcome to Acme Evidence</h1>"))
	css := httptest.NewRecorder()
	h.ServeHTTP(css, httptest.NewRequest("GET", "/assets/pages.css", nil))
	fmt.Println(css.Code, strings.HasSuffix(css.Body.String(), "--accent:#8a2be2}"))
	// Output:
	// 200 text/html; charset=utf-8 true
	// 200 true
}
