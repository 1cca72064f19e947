package websession

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSecureOffOnlyOnPlainLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1:8080": false, "localhost": false, "app.localhost:80": false, "[::1]:8080": false,
		"127.8.9.1": false, "example.com": true, "10.0.0.1:8080": true, "": true} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if got := Secure(r); got != want {
			t.Errorf("%q: Secure %v, want %v", host, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Host, r.TLS = "127.0.0.1", &tls.ConnectionState{}
	if !Secure(r) {
		t.Error("TLS on loopback: not Secure")
	}
}

func TestSetReadClear(t *testing.T) {
	r := httptest.NewRequest("GET", "http://example.com/", nil)
	w := httptest.NewRecorder()
	Set(w, r, "nds_x", time.Now().Add(time.Hour))
	c := w.Result().Cookies()[0]
	if c.Name != CookieName || !c.HttpOnly || !c.Secure || c.Path != "/" || c.MaxAge <= 0 {
		t.Fatalf("cookie %+v", c)
	}
	r.AddCookie(c)
	if Read(r) != "nds_x" {
		t.Error("Read does not return the secret")
	}
	w = httptest.NewRecorder()
	Clear(w, r)
	if c := w.Result().Cookies()[0]; c.MaxAge >= 0 || c.Value != "" {
		t.Errorf("cleared cookie %+v", c)
	}
}
