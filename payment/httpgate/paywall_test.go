package httpgate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
)

type checked struct{ ok bool }

func (c checked) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if !c.ok {
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	return r, c.ok
}

func (c checked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call, ok := payment.CallFrom(r.Context())
	if !ok || call.Protocol != payment.ProtocolFree || call.Offer.ID != "o" {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func TestFreeRunsPrecheckThenHandler(t *testing.T) {
	for _, ok := range []bool{true, false} {
		rec := httptest.NewRecorder()
		httpgate.Free{}.Gate(payment.Offer{ID: "o"}, checked{ok}).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		want := http.StatusOK
		if !ok {
			want = http.StatusUnprocessableEntity
		}
		if rec.Code != want {
			t.Errorf("precheck %v: status %d, want %d", ok, rec.Code, want)
		}
	}
}
