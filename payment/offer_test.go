package payment

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestCallRecordsResultAndUsage(t *testing.T) {
	c := &Call{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.AddUsage(Usage{Provider: "p", InputTokens: 2, OutputTokens: 1, SearchCalls: 1})
		}()
	}
	wg.Wait()
	c.SetResult("verification", "cv_1")
	if k, id := c.Result(); k != "verification" || id != "cv_1" {
		t.Fatalf("Result = %s %s", k, id)
	}
	if u := c.Usage(); u.InputTokens != 20 || u.OutputTokens != 10 || u.SearchCalls != 10 || u.Provider != "p" {
		t.Fatalf("Usage = %+v", u)
	}
}

type checked struct{ ok bool }

func (c checked) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if !c.ok {
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	return r, c.ok
}

func (c checked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call, ok := CallFrom(r.Context())
	if !ok || call.Protocol != ProtocolFree || call.Offer.ID != "o" {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func TestFreeRunsPrecheckThenHandler(t *testing.T) {
	for _, ok := range []bool{true, false} {
		rec := httptest.NewRecorder()
		Free{}.Gate(Offer{ID: "o"}, checked{ok}).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		want := http.StatusOK
		if !ok {
			want = http.StatusUnprocessableEntity
		}
		if rec.Code != want {
			t.Errorf("precheck %v: status %d, want %d", ok, rec.Code, want)
		}
	}
}
