package agents

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/storetest"
)

// deadlineProvider answers at once and remembers, per claim, the context
// of the work, whose deadline the caller's own deadline precedes.
type deadlineProvider struct {
	*claimstest.Provider
	mu    sync.Mutex
	works map[string]context.Context
}

func (p *deadlineProvider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	p.mu.Lock()
	p.works[q.Claim] = ctx
	p.mu.Unlock()
	return p.Provider.Search(ctx, q)
}

// queuedStore is a claims store behind a queue: every save starts only
// once the deadline of the work of its call has passed — what a burst of
// paid calls in front of a busy database does to the calls whose provider
// answered just before their deadline.
type queuedStore struct {
	claims.Store
	prov *deadlineProvider
}

func (s *queuedStore) SaveVerification(ctx context.Context, rec *claims.Record, lease *claims.Lease) error {
	s.prov.mu.Lock()
	work := s.prov.works[rec.Result.Claim]
	s.prov.mu.Unlock()
	d, _ := work.Deadline()
	time.Sleep(time.Until(d) + time.Millisecond)
	return s.Store.SaveVerification(ctx, rec, lease)
}

// A burst of paid calls whose provider answers just before the deadline,
// and whose results reach the store only after it: every call is
// delivered (no 504 after the answer arrived), every stored verification
// has its completed order and every completed order its verification — on
// SQLite and on PostgreSQL.
func TestPaidBurstAtTheDeadlineKeepsFinishedWork(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres": func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const burst = 24
			// Long enough for the provider to answer before it even on a
			// loaded machine under -race; every save waits for it to pass.
			const deadline = 2 * time.Second
			ctx := context.Background()
			env := newDevEnvWith(t, devOptions{dsn: dsn(t), engine: func(db *store.DB) *claims.Engine {
				f, err := claimstest.LoadFixture("confirmed")
				if err != nil {
					t.Fatal(err)
				}
				prov := &deadlineProvider{Provider: f.Provider(), works: map[string]context.Context{}}
				eng, err := claims.New(prov, &queuedStore{Store: claimsstore.New(db), prov: prov}, f.Snapshotter(), &claims.Options{Timeout: deadline})
				if err != nil {
					t.Fatal(err)
				}
				return eng
			}})
			db, hs := env.db, env.hs
			const path = "/claim-verification/v1/claims/verify/quick"
			first, err := http.Post(hs.URL+path, "application/json", strings.NewReader(`{"claim":"`+testClaim+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			first.Body.Close()
			pr, _ := base64.StdEncoding.DecodeString(first.Header.Get(x402.HeaderPaymentRequired))
			ch := &payment.Challenge{PaymentRequired: pr}

			statuses := make([]int, burst)
			bodies := make([]string, burst)
			var wg sync.WaitGroup
			for i := range burst {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := fmt.Sprintf(`{"claim":"%s (call %d)"}`, strings.TrimSuffix(testClaim, "."), i)
					req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set(x402.HeaderPaymentSignature, paymenttest.X402V2(t, paymenttest.DevWallet(), ch, time.Now()))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					statuses[i], bodies[i] = resp.StatusCode, string(b)
				}()
			}
			wg.Wait()
			for i, st := range statuses {
				if st != http.StatusOK {
					t.Errorf("call %d: %d %s", i, st, bodies[i])
				}
			}
			// Every stored verification has its completed order, and every
			// completed order its verification.
			_, r := db.SQL()
			var verifications, orphans, completed, missing int
			q := func(dst *int, sql string) {
				if err := r.QueryRowContext(ctx, sql).Scan(dst); err != nil {
					t.Fatal(err)
				}
			}
			q(&verifications, `SELECT COUNT(*) FROM claim_verifications`)
			q(&orphans, `SELECT COUNT(*) FROM claim_verifications v LEFT JOIN payment_orders o ON o.result_id = v.id
				WHERE o.id IS NULL OR o.status <> 'completed'`)
			q(&completed, `SELECT COUNT(*) FROM payment_orders WHERE status = 'completed'`)
			q(&missing, `SELECT COUNT(*) FROM payment_orders o LEFT JOIN claim_verifications v ON v.id = o.result_id
				WHERE o.status = 'completed' AND v.id IS NULL`)
			if verifications != burst || completed != burst || orphans != 0 || missing != 0 {
				t.Fatalf("%d verifications (%d without a completed order), %d completed orders (%d without a verification); want %d, 0, %d, 0",
					verifications, orphans, completed, missing, burst, burst)
			}
		})
	}
}

// lyingClaimsStore commits every save and then reports an error, as a
// PostgreSQL COMMIT cut short does whatever it did.
type lyingClaimsStore struct{ claims.Store }

func (s lyingClaimsStore) SaveVerification(ctx context.Context, rec *claims.Record, lease *claims.Lease) error {
	if err := s.Store.SaveVerification(ctx, rec, lease); err != nil {
		return err
	}
	return fmt.Errorf("store: commit: %w", context.DeadlineExceeded)
}

// A stored result whose save reported an error is read back and
// delivered: never a verification stored for a call that was refused (the
// 355 verifications for 353 completed orders of the issue).
func TestSaveOfUnknownOutcomeIsReadBack(t *testing.T) {
	ctx := context.Background()
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	var eng *claims.Engine
	env := newDevEnvWith(t, devOptions{engine: func(db *store.DB) *claims.Engine {
		if eng, err = claims.New(f.Provider(), lyingClaimsStore{claimsstore.New(db)}, f.Snapshotter(), nil); err != nil {
			t.Fatal(err)
		}
		return eng
	}})
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Verify(ctx, claims.Standard, req, nil)
	if err != nil {
		t.Fatalf("a save that took effect was reported as %v", err)
	}
	if _, err := claimsstore.New(env.db).Verification(ctx, res.VerificationID); err != nil {
		t.Fatal(err)
	}
}
