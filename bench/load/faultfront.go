package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/payment/paymenttest"
)

// front is the facilitator the servers of the faults scenario talk to: a
// small reverse proxy on loopback in front of paymenttest's fake
// facilitator, adding the failures the fake cannot make from inside its
// own handler:
//
//   - an outage (setOutage): the listener is closed, so connections are
//     refused, and idle connections are closed; it listens again on the
//     same address when healed;
//   - an outage that starts right after a burst's /verify answers
//     (outageAfterVerify): /verify calls are held until n have arrived (or
//     a short window has passed), answered together with Connection:
//     close, and the outage begins before any of their /settle calls can
//     connect;
//   - a delay before every /verify (setVerifyDelay).
//
// Everything else is forwarded as it is. When the fake drops a call (a
// connection reset, a hang the client gave up on), the proxy resets the
// servers' connection too instead of answering 502, so that the server
// sees what it would see from the facilitator itself. Every call it
// receives is counted per path and EIP-3009 authorization (authKey).
//
// httputil.ReverseProxy is not used: it answers an upstream failure with
// 502, which would turn a reset into an answer.
type front struct {
	upstream string
	addr     string
	client   *http.Client

	mu          sync.Mutex
	srv         *http.Server
	ln          net.Listener
	outage      bool
	verifyDelay time.Duration
	barrier     *verifyBarrier
	calls       map[string]map[string]int // path -> authorization -> calls
	abandoned   map[string]map[string]int // calls the caller gave up on before the answer
	// slowAfter: a call answered this long after it arrived may have
	// outlasted its caller's timeout (the answer in flight as it gave up);
	// it counts as abandoned. Zero: never.
	slowAfter time.Duration
	closed    bool
}

// verifyBarrier holds /verify answers until n calls arrived or the window
// ended, then starts an outage.
type verifyBarrier struct {
	n       int
	arrived int
	release chan struct{}
	once    sync.Once
}

// startFront starts a proxy to upstream on a free loopback port.
func startFront(upstream string) (*front, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &front{upstream: strings.TrimRight(upstream, "/"), addr: ln.Addr().String(), calls: map[string]map[string]int{}, abandoned: map[string]map[string]int{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}}
	f.serveLocked(ln)
	return f, nil
}

// URL is the proxy's base URL.
func (f *front) URL() string { return "http://" + f.addr }

func (f *front) serveLocked(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 10 * time.Second}
	f.srv, f.ln = srv, ln
	go func() { _ = srv.Serve(ln) }()
}

// close stops the proxy for good.
func (f *front) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.srv != nil {
		_ = f.srv.Close()
		f.srv = nil
	}
	if f.barrier != nil {
		f.barrier.open()
	}
	f.client.CloseIdleConnections()
}

// setOutage starts (on) or ends an outage: connections are refused while
// it lasts.
func (f *front) setOutage(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setOutageLocked(on)
}

func (f *front) setOutageLocked(on bool) error {
	if f.closed {
		return errors.New("front: closed")
	}
	f.outage = on
	if on {
		if f.srv == nil {
			return nil
		}
		// New connections are refused; idle ones are closed, and busy ones
		// close after their answer (keep-alives off).
		err := f.ln.Close()
		f.srv.SetKeepAlivesEnabled(false)
		old := f.srv
		f.srv = nil
		go func() {
			// Calls still running finish (a burst's held /verify answers);
			// whatever is left after a while is cut.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if old.Shutdown(ctx) != nil {
				_ = old.Close()
			}
		}()
		return err
	}
	if f.srv != nil {
		return nil
	}
	var ln net.Listener
	var err error
	// The port was ours a moment ago; a socket in TIME_WAIT does not stop
	// a listener (SO_REUSEADDR), but retry a few times all the same.
	for range 50 {
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	f.serveLocked(ln)
	return nil
}

// outageAfterVerify arms an outage that starts once n /verify calls have
// arrived (or window after the first one, when fewer come): the listener
// closes first, then the held calls are answered, so that none of their
// /settle calls can connect.
func (f *front) outageAfterVerify(n int, window time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := &verifyBarrier{n: n, release: make(chan struct{})}
	f.barrier = b
	go func() {
		// The window starts with the first /verify; a barrier nobody
		// reaches is disarmed by heal.
		for {
			f.mu.Lock()
			cur, arrived := f.barrier, b.arrived
			f.mu.Unlock()
			if cur != b {
				return
			}
			if arrived > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(window)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.barrier == b {
			f.releaseLocked(b)
		}
	}()
}

// releaseLocked starts the outage and then answers the held /verify calls.
func (f *front) releaseLocked(b *verifyBarrier) {
	f.barrier = nil
	if !f.closed {
		_ = f.setOutageLocked(true)
	}
	b.open()
}

func (b *verifyBarrier) open() { b.once.Do(func() { close(b.release) }) }

// setVerifyDelay delays every /verify by d (0: none).
func (f *front) setVerifyDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verifyDelay = d
}

// heal ends the outage, the barrier and the delay.
func (f *front) heal() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.barrier != nil {
		f.barrier.open()
		f.barrier = nil
	}
	f.verifyDelay = 0
	return f.setOutageLocked(false)
}

// callsOf returns how many calls of path named the authorization key.
func (f *front) callsOf(path, key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path][key]
}

// abandonedOf returns how many calls of path naming the authorization
// key the caller gave up on before the answer (its timeout), or may have
// (answered after slowAfter): on a loaded machine a /verify the server
// gave up on explains a 503, and its retry a second call.
func (f *front) abandonedOf(path, key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.abandoned[path][key]
}

// gaveUp notes a call its caller abandoned.
func (f *front) gaveUp(r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.abandoned[r.URL.Path] == nil {
		f.abandoned[r.URL.Path] = map[string]int{}
	}
	f.abandoned[r.URL.Path][authKey(body)]++
}

// handle forwards one call, applying the delay and the barrier.
func (f *front) handle(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		paymenttest.ResetConn(w)
		return
	}
	f.mu.Lock()
	if f.outage {
		// A call on a connection accepted before the outage began.
		f.mu.Unlock()
		paymenttest.ResetConn(w)
		return
	}
	if f.calls[r.URL.Path] == nil {
		f.calls[r.URL.Path] = map[string]int{}
	}
	f.calls[r.URL.Path][authKey(body)]++
	delay := f.verifyDelay
	var b *verifyBarrier
	if r.URL.Path == "/verify" {
		b = f.barrier
		if b != nil {
			b.arrived++
			if b.arrived >= b.n {
				f.releaseLocked(b)
			}
		}
	} else {
		delay = 0
	}
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			f.gaveUp(r, body)
			return
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, f.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		paymenttest.ResetConn(w)
		return
	}
	req.Header = r.Header.Clone()
	res, err := f.client.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			f.gaveUp(r, body)
		}
		paymenttest.ResetConn(w)
		return
	}
	out, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil {
		paymenttest.ResetConn(w)
		return
	}
	if b != nil {
		// Answered together with the rest of the burst, on a connection
		// that is not kept for the /settle that follows.
		select {
		case <-b.release:
		case <-r.Context().Done():
			f.gaveUp(r, body)
			return
		}
		w.Header().Set("Connection", "close")
	}
	for k, vs := range res.Header {
		if k == "Content-Length" || k == "Connection" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(out)
	f.mu.Lock()
	slow := f.slowAfter > 0 && time.Since(arrived) >= f.slowAfter
	f.mu.Unlock()
	if r.Context().Err() != nil || slow {
		f.gaveUp(r, body)
	}
}

// authKey names the EIP-3009 authorization of a /verify or /settle body:
// payer and nonce, lowercase ("" when the body carries none).
func authKey(body []byte) string {
	a, ok := paymenttest.AuthorizationIn(body)
	if !ok {
		return ""
	}
	return strings.ToLower(a.From + "/" + a.Nonce)
}
