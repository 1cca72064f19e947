// Package websession is the cookie of a subscriber's browser session, one
// definition shared by the pages (package pages: sign-in, sign-out, reads)
// and the server's checkout success pages (which sign the payer in).
//
// The cookie holds the session secret (niche.SubscriptionService.SignIn);
// the server stores only its hash. It is HttpOnly, SameSite=Lax (a link
// from elsewhere still arrives signed in; a cross-site POST does not carry
// it) and Secure, except on a loopback host over plain HTTP, where
// browsers would drop a Secure cookie of a development server.
package websession

import (
	"net"
	"net/http"
	"strings"
	"time"
)

// CookieName is the session cookie's name.
const CookieName = "assay_session"

// Read returns the session secret the request carries ("" for none).
func Read(r *http.Request) string {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

// Set stores the session secret in the browser until expires.
func Set(w http.ResponseWriter, r *http.Request, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: secret, Path: "/", Expires: expires,
		MaxAge: max(int(time.Until(expires).Seconds()), 1), HttpOnly: true, Secure: Secure(r), SameSite: http.SameSiteLaxMode})
}

// Clear removes the session cookie.
func Clear(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: Secure(r), SameSite: http.SameSiteLaxMode})
}

// Secure reports whether the cookie gets the Secure attribute: always,
// except for a plain-HTTP request to a loopback host (localhost,
// 127.0.0.0/8, ::1).
func Secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return false
	}
	return true
}
