package claims

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
	"golang.org/x/sync/singleflight"
)

// Defaults of Options.
const (
	DefaultIdempotencyWait = 10 * time.Second
	DefaultRetention       = 30 * 24 * time.Hour
	// MaxIdempotencyKeyLength bounds the Idempotency-Key header.
	MaxIdempotencyKeyLength = 255
)

// Options configure an Engine. A nil *Options means defaults.
type Options struct {
	// Logger receives provider failures and store problems. Nil discards.
	Logger *slog.Logger
	// Timeout is the deadline of one verification, provider and snapshots
	// included. Zero means DefaultTimeout (120 s).
	Timeout time.Duration
	// CheckGrace is how long the quote checks (page fetches, snapshots) of
	// a provider answer that arrived before the deadline may run past it:
	// the answer is never thrown away for lack of time to check it (see
	// "Deadline budget" in the package documentation). Zero means
	// DefaultCheckGrace (15 s); negative means none: the checks end at the
	// deadline and a verification whose checks did not finish fails with
	// ErrTimeout (the behaviour bench/deadline measures as its baseline).
	CheckGrace time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// OfficialDomains, NewsDomains, AcademicDomains and VendorDomains add
	// to the built-in classification lists (see classify in the package
	// documentation). Invalid entries are ignored.
	OfficialDomains []string
	NewsDomains     []string
	AcademicDomains []string
	VendorDomains   []string
	// ResultCache answers a request from a stored result of the same
	// tier, effective request and provider observed within the request's
	// freshnessHours (never when freshnessHours is null). The answer is a
	// new verification with cacheHit true and no provider call. Off by
	// default.
	ResultCache bool
	// IdempotencyWait is how long a duplicate of an in-flight idempotent
	// request waits for the first one before getting *InFlightError.
	// Zero means DefaultIdempotencyWait; negative means do not wait.
	IdempotencyWait time.Duration
	// Retention is how long results are kept (PurgeExpired). Zero means
	// DefaultRetention (30 days).
	Retention time.Duration
	// Observer, when set, is told about every finished Verify (metrics).
	Observer Observer
	// Providers are further search providers, after the one given to New
	// (the first of them stands in for it when that is nil; nil entries
	// are ignored). With more than one, the deep and research tiers ask
	// them all concurrently and merge their answers by the corroboration
	// rules (see the package documentation); quick and standard ask only
	// the first.
	Providers []SearchProvider
}

// Observer receives what Verify did, for metrics and monitoring. Its
// methods must be fast, must not block and must be safe for concurrent use.
type Observer interface {
	// Verified reports a result returned to a caller (cache hits and
	// idempotent replays included; Provenance.CacheHit tells them apart),
	// at the end of that caller's Verify.
	Verified(tier string, r *Result)
	// ProviderUsed reports every provider call exactly once, with the
	// usage the provider reported: also for a call that failed (a
	// truncated answer still cost its tokens; zero when the provider
	// reported nothing), and also when the caller that started a collapsed
	// call stopped waiting for it. It is called from the goroutine that
	// made the call, when the call's work ends and before the callers
	// waiting for it get the outcome.
	ProviderUsed(u ProviderUsage)
	// Failed reports a Verify that returned an error, at its end.
	Failed(tier string, err error)
}

// Call is what the caller's side knows about one verification: who is
// asking, and under which order. Verify fills the output fields.
type Call struct {
	// IdempotencyKey is the caller's Idempotency-Key ("" for none), at
	// most MaxIdempotencyKeyLength characters.
	IdempotencyKey string
	// Scope is who the key belongs to: "payer:<address>" or
	// "customer:<id>". Keys of different scopes never meet.
	Scope string

	// ProviderCalled is set by Verify when this call carries the usage of
	// a provider call, for the order's cost accounting: the call that
	// started it or, when that caller stopped waiting before the provider
	// call ended, the first caller that got its outcome. It is set when
	// Verify fails too, if the failed provider call was made (a truncated
	// answer still cost its tokens). False for replays, cache hits and
	// callers that joined a call another caller carries. A provider call is
	// carried by at most one Call (by none when every caller waiting for
	// it had gone); the Observer sees every one.
	ProviderCalled bool
	// Usage is the provider usage this call carries (zero unless
	// ProviderCalled).
	Usage ProviderUsage
}

// ProviderUsage is the cost-relevant work of one provider call.
type ProviderUsage struct {
	Provider          string
	Model             string
	InputTokens       int
	CachedInputTokens int
	OutputTokens      int
	SearchCalls       int // search actions (the calls with a per-call fee)
}

// Engine verifies claims. It is safe for concurrent use.
type Engine struct {
	providers []SearchProvider // the first answers quick and standard
	store     Store
	snaps     Snapshotter
	log       *slog.Logger
	now       func() time.Time
	timeout   time.Duration
	grace     time.Duration // CheckGrace; negative: none
	wait      time.Duration
	retention time.Duration
	cache     bool
	observer  Observer
	cls       *classifier
	flights   singleflight.Group
	// answered holds, by flight key, a channel closed once the flight's
	// provider answered (see collapse).
	answered sync.Map
	recent   recentResults
}

// recentResults keeps the last stored results in memory, by verification
// id, so that idempotent replays skip decoding the stored JSON. Results are
// immutable once stored, so a cached copy is never stale; purging clears it.
type recentResults struct {
	mu    sync.Mutex
	byID  map[string]*Result
	order []string
	next  int
}

const recentResultsSize = 1024

func (c *recentResults) put(r *Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]*Result{}
		c.order = make([]string, recentResultsSize)
	}
	if _, ok := c.byID[r.VerificationID]; ok {
		return
	}
	delete(c.byID, c.order[c.next])
	c.order[c.next] = r.VerificationID
	c.byID[r.VerificationID] = r
	c.next = (c.next + 1) % len(c.order)
}

func (c *recentResults) get(id string) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

func (c *recentResults) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byID, c.order, c.next = nil, nil, 0
}

// New returns an engine. provider may be nil (and Options.Providers
// empty): Verify then fails with
// ErrProviderNotConfigured (the HTTP layer answers 503) while Check and
// stored results keep working. snapshots may be nil: no snapshots are
// taken and results say so. store is required.
func New(provider SearchProvider, store Store, snapshots Snapshotter, opts *Options) (*Engine, error) {
	if store == nil {
		return nil, errors.New("claims: New: a Store is required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	var provs []SearchProvider
	for _, p := range append([]SearchProvider{provider}, o.Providers...) {
		if p != nil {
			provs = append(provs, p)
		}
	}
	e := &Engine{providers: provs, store: store, snaps: snapshots, log: o.Logger, now: o.Now,
		timeout: o.Timeout, grace: o.CheckGrace, wait: o.IdempotencyWait, retention: o.Retention, cache: o.ResultCache, cls: newClassifier(&o),
		observer: o.Observer}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.wait == 0 {
		e.wait = DefaultIdempotencyWait
	}
	if e.grace == 0 {
		e.grace = DefaultCheckGrace
	}
	if e.retention <= 0 {
		e.retention = DefaultRetention
	}
	return e, nil
}

// DefaultCheckGrace is Options.CheckGrace's default: a capture's budget
// (snapshot.DefaultCaptureTimeout).
const DefaultCheckGrace = 15 * time.Second

// CheckGrace returns how long the checks of an answer may run past the
// deadline (0 when they may not): a verification's work takes at most
// Timeout plus CheckGrace, and a host that sells it must give it that
// long (and its payment challenges must stay valid that long).
func (e *Engine) CheckGrace() time.Duration { return max(e.grace, 0) }

// Timeout returns the deadline of one verification.
func (e *Engine) Timeout() time.Duration { return e.timeout }

// Configured reports whether a provider is set (readiness checks).
func (e *Engine) Configured() bool { return len(e.providers) > 0 }

// Verification returns a stored verification with the order-token hashes
// allowed to read it, or ErrNotFound. Callers must check access.
func (e *Engine) Verification(ctx context.Context, id string) (*Record, error) {
	if !ids.Valid(ids.Verification, id) {
		return nil, ErrNotFound
	}
	rec, err := e.store.Verification(ctx, id)
	if err != nil {
		return nil, err
	}
	normalize(rec.Result)
	return rec, nil
}

// Purge deletes verifications created before before (and their grants and
// idempotency rows). It returns how many were deleted.
func (e *Engine) Purge(ctx context.Context, before time.Time) (int64, error) {
	defer e.recent.clear()
	return e.store.PurgeVerifications(ctx, before)
}

// PurgeExpired deletes verifications older than the retention period.
func (e *Engine) PurgeExpired(ctx context.Context) (int64, error) {
	return e.Purge(ctx, e.now().Add(-e.retention))
}

// ProviderNames names the search providers in order: the first answers
// every tier, the others corroborate on deep and research.
func (e *Engine) ProviderNames() []string {
	names := make([]string, len(e.providers))
	for i, p := range e.providers {
		names[i] = p.Name()
	}
	return names
}

// providersFor returns the providers a tier asks: all of them on deep and
// research, the first on quick and standard.
func (e *Engine) providersFor(tier string) []SearchProvider {
	if len(e.providers) > 1 && (tier == Deep || tier == Research) {
		return e.providers
	}
	return e.providers[:min(1, len(e.providers))]
}

// providerName names the providers a tier asks, joined by "+" (the key of
// the result cache and single-flight collapse, and Record.Provider).
func (e *Engine) providerName(tier string) string {
	var names []string
	for _, p := range e.providersFor(tier) {
		names = append(names, p.Name())
	}
	return strings.Join(names, "+")
}

// Verify runs one verification on tier: tier rules, idempotency, result
// cache, the (collapsed) provider call, reconciliation, snapshots,
// verdicts, and storage of the result in one transaction. call may be nil
// (no idempotency key, no order).
//
// Errors: *RequestError (nothing done), ErrIdempotencyConflict,
// *InFlightError, ErrTimeout, *ProviderError (see the ErrProvider*
// sentinels), or a store error. On any error nothing is stored except
// snapshot records already captured.
func (e *Engine) Verify(ctx context.Context, tier string, req *Request, call *Call) (*Result, error) {
	if call == nil {
		call = &Call{}
	}
	res, err := e.verify(ctx, tier, req, call)
	if e.observer != nil {
		// Provider usage was reported by the provider call itself
		// (collapse), whoever waited for it.
		if err != nil {
			e.observer.Failed(tier, err)
		} else {
			e.observer.Verified(tier, res)
		}
	}
	return res, err
}

func (e *Engine) verify(ctx context.Context, tier string, req *Request, call *Call) (*Result, error) {
	eff, err := check(tier, req)
	if err != nil {
		return nil, err
	}
	call.ProviderCalled, call.Usage = false, ProviderUsage{}
	if len(call.IdempotencyKey) > MaxIdempotencyKeyLength {
		return nil, reqErr("Idempotency-Key", "Idempotency-Key must be at most %d characters long", MaxIdempotencyKeyLength)
	}
	if len(e.providers) == 0 {
		return nil, &ProviderError{Kind: ProviderNotConfigured, Err: errors.New("no search provider is configured")}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	hash := eff.Hash()

	var lease *Lease
	if call.IdempotencyKey != "" {
		key := IdempotencyKey{Scope: call.Scope, Tier: eff.Tier.Name, Key: call.IdempotencyKey}
		var replayID string
		lease, replayID, err = e.acquire(ctx, key, hash)
		if err != nil {
			return nil, timeoutErr(ctx, err)
		}
		if replayID != "" {
			return e.replay(ctx, replayID, call)
		}
		res, err := e.produce(ctx, eff, hash, call, lease)
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if rerr := e.store.ReleaseIdempotency(rctx, lease.Key, lease.Token); rerr != nil {
				e.log.Warn("claims: releasing idempotency lease failed", "err", rerr)
			}
			return nil, err
		}
		return res, nil
	}
	return e.produce(ctx, eff, hash, call, nil)
}

// produce answers from the cache or a (collapsed) provider call, and stores
// the caller's own verification.
func (e *Engine) produce(ctx context.Context, eff *Effective, hash string, call *Call, lease *Lease) (*Result, error) {
	var res *Result
	var pages []string
	if e.cache && eff.FreshnessHours > 0 {
		since := e.now().Add(-time.Duration(eff.FreshnessHours) * time.Hour)
		rec, err := e.store.LatestVerification(ctx, eff.Tier.Name, hash, e.providerName(eff.Tier.Name), since)
		switch {
		case err == nil:
			res = cloneResult(rec.Result)
			pages = rec.Pages()
			res.Provenance.CacheHit = true
			res.Limitations = appendUnique(res.Limitations,
				fmt.Sprintf("Served from a stored result observed at %s (within the %d-hour freshness window); no new search was made.",
					rec.Result.ObservedAt.UTC().Format(time.RFC3339), eff.FreshnessHours))
		case !errors.Is(err, ErrNotFound):
			return nil, timeoutErr(ctx, err)
		}
	}
	if res == nil {
		shared, usage, carried, err := e.collapse(ctx, eff, hash)
		if carried {
			call.ProviderCalled = true
			call.Usage = usage
		}
		if err != nil {
			return nil, timeoutErr(ctx, err)
		}
		res = cloneResult(shared.result)
		pages = append([]string(nil), shared.pages...)
	}
	res.VerificationID = ids.New(ids.Verification)
	rec := &Record{Result: res, Tier: eff.Tier.Name, Scope: call.Scope, RequestHash: hash,
		Provider: e.providerName(eff.Tier.Name), PageIDs: pages,
		CreatedAt: e.now().UTC()}
	e.usePages(ctx, rec)
	if err := e.save(ctx, rec, lease); err != nil {
		return nil, fmt.Errorf("claims: storing the result: %w", err)
	}
	e.recent.put(cloneResult(res))
	return res, nil
}

// usePages tells a PageKeeper that rec's pages are used from its creation
// on, before rec is stored, so that no stored verification outlives the
// pages of its evidence bundle. A failure is logged: the result stands,
// and its pages fall back to their own retention.
func (e *Engine) usePages(ctx context.Context, rec *Record) {
	k, ok := e.snaps.(PageKeeper)
	if !ok || len(rec.PageIDs) == 0 {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeGrace)
	defer cancel()
	if err := k.Use(uctx, rec.PageIDs, rec.CreatedAt); err != nil {
		e.log.Warn("claims: marking the pages of a verification in use failed", "verification", rec.Result.VerificationID, "err", err)
	}
}

// storeGrace bounds the storage of a result the provider has delivered.
const storeGrace = 30 * time.Second

// save stores a finished result. The work (and the provider's cost) is
// done, so storing it is not cut short by the caller's deadline or
// cancellation, only by storeGrace; a save that reports an error is read
// back, since a commit cut short may have succeeded — a result is never
// stored for a caller that was told it failed.
func (e *Engine) save(ctx context.Context, rec *Record, lease *Lease) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeGrace)
	defer cancel()
	err := e.store.SaveVerification(sctx, rec, lease)
	if err == nil || errors.Is(err, ErrExists) {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeGrace)
	defer cancel()
	if _, rerr := e.store.Verification(rctx, rec.Result.VerificationID); rerr == nil {
		e.log.Warn("claims: storing a result reported an error but took effect", "verification", rec.Result.VerificationID, "err", err)
		return nil
	}
	return err
}

// timeoutErr turns a deadline into ErrTimeout.
func timeoutErr(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded)) {
		if errors.Is(err, ErrTimeout) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return err
}

// acquire takes the idempotency key, waiting (bounded) for an in-flight
// holder. It returns a lease to do the work, or the id of the completed
// verification to replay.
func (e *Engine) acquire(ctx context.Context, key IdempotencyKey, hash string) (*Lease, string, error) {
	ttl := e.timeout + 30*time.Second
	// Waiting is measured on the real clock, whatever Options.Now says.
	deadline := time.Now().Add(e.wait)
	pause := 20 * time.Millisecond
	for {
		st, err := e.store.AcquireIdempotency(ctx, key, hash, e.now(), ttl)
		if err != nil {
			return nil, "", err
		}
		switch {
		case st.Lease != nil:
			return st.Lease, "", nil
		case st.VerificationID != "":
			return nil, st.VerificationID, nil
		}
		now := time.Now()
		if e.wait < 0 || !now.Before(deadline) {
			left := st.InFlightUntil.Sub(e.now())
			return nil, "", &InFlightError{RetryAfter: min(max(left, time.Second), 10*time.Second).Round(time.Second)}
		}
		t := time.NewTimer(min(pause, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, "", ctx.Err()
		case <-t.C:
		}
		pause = min(pause*2, 250*time.Millisecond)
	}
}

// replay returns a completed verification again, with cacheHit true.
func (e *Engine) replay(ctx context.Context, id string, call *Call) (*Result, error) {
	var res *Result
	if cached := e.recent.get(id); cached != nil {
		res = cloneResult(cached)
	} else {
		rec, err := e.store.Verification(ctx, id)
		if err != nil {
			return nil, timeoutErr(ctx, err)
		}
		res = rec.Result
		normalize(res)
		e.recent.put(cloneResult(res))
	}
	res.Provenance.CacheHit = true
	return res, nil
}

// computed is the shared outcome of one provider call.
type computed struct {
	result *Result         // VerificationID empty; shared: clone before use; nil on failure
	pages  []string        // Record.PageIDs
	usage  *ProviderUsage  // nil when no provider was called; the sum over calls
	calls  []ProviderUsage // one per provider call, for the Observer
	flight *flight         // who carries the usage
}

// flight decides which caller of a collapsed call carries its usage in
// its Call: the caller that started it while it waits, else the first
// caller to get the outcome after it stopped waiting.
type flight struct {
	mu      sync.Mutex
	done    bool           // the work ended; usage is final
	usage   *ProviderUsage // nil when the provider was not called
	gone    bool           // the caller that started the work stopped waiting
	carried bool           // a caller's Call carries the usage
}

// finish records the usage when the work ends.
func (f *flight) finish(u *ProviderUsage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done, f.usage = true, u
}

// take gives the usage to a caller that got the outcome, if it is the one
// to carry it.
func (f *flight) take(started bool) (ProviderUsage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.carried || f.usage == nil || !(started || f.gone) {
		return ProviderUsage{}, false
	}
	f.carried = true
	return *f.usage, true
}

// leave records that the caller that started the work stopped waiting. If
// the work already ended and nobody carries its usage (the others saw the
// outcome while this caller still waited), this caller carries it.
func (f *flight) leave() (ProviderUsage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gone = true
	if !f.done || f.carried || f.usage == nil {
		return ProviderUsage{}, false
	}
	f.carried = true
	return *f.usage, true
}

// collapse runs compute once for all concurrent callers with the same
// tier, effective request and provider. The work runs under its own
// deadline (the engine timeout from its start), detached from the first
// caller's cancellation; each caller stops waiting when its own context
// ends. The provider usage is reported to the Observer by the work itself,
// and returned (carried true) to the one caller that carries it (see
// Call.ProviderCalled), also together with an error.
func (e *Engine) collapse(ctx context.Context, eff *Effective, hash string) (c *computed, usage ProviderUsage, carried bool, err error) {
	key := eff.Tier.Name + "|" + hash + "|" + e.providerName(eff.Tier.Name)
	// Only the closure of the caller that starts the work runs, so its
	// flight is the one the outcome points to.
	mine := &flight{}
	ch := e.flights.DoChan(key, func() (any, error) {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.timeout)
		defer cancel()
		dl, _ := wctx.Deadline()
		st := &flightState{answered: make(chan struct{}), deadline: dl}
		e.answered.Store(key, st)
		defer e.answered.Delete(key)
		var once sync.Once
		c, err := e.compute(wctx, eff, func() { once.Do(func() { close(st.answered) }) })
		if c == nil {
			c = &computed{}
		}
		c.flight = mine
		mine.finish(c.usage)
		if e.observer != nil {
			for _, u := range c.calls {
				e.observer.ProviderUsed(u)
			}
		}
		return c, err
	})
	result := func(r singleflight.Result) (*computed, ProviderUsage, bool, error) {
		c := r.Val.(*computed)
		usage, carried := c.flight.take(c.flight == mine)
		if r.Err != nil {
			return nil, usage, carried, r.Err
		}
		return c, usage, carried, nil
	}
	select {
	case r := <-ch:
		return result(r)
	case <-ctx.Done():
		// The deadline passed while the answer, which arrived before it,
		// is being checked: wait for the checks (bounded by the grace),
		// never throw the answer away. A caller that went away does not
		// wait.
		if e.grace > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && e.answeredInTime(key) {
			t := time.NewTimer(e.grace + time.Second)
			defer t.Stop()
			select {
			case r := <-ch:
				return result(r)
			case <-t.C:
			}
		}
		// Harmless when this caller did not start the work: nothing
		// points to its flight.
		usage, carried := mine.leave()
		return nil, usage, carried, ctx.Err()
	}
}

// answerSlack is how long past a flight's deadline a caller still waits
// for its provider's answer to be noticed.
const answerSlack = time.Second

// flightState is what a collapsed computation tells callers whose own
// deadline passed: whether its provider answered, and by when it must.
type flightState struct {
	answered chan struct{} // closed once a provider answered
	deadline time.Time     // the providers' deadline
}

// answeredInTime reports whether the flight of key has its provider
// answer, waiting for it until the flight's own deadline: a flight starts
// a little after its first caller, so its provider may answer in its time
// just after that caller's deadline. A flight no longer listed has
// finished (its result is on its way to the callers): true.
func (e *Engine) answeredInTime(key string) bool {
	v, ok := e.answered.Load(key)
	if !ok {
		return true
	}
	st := v.(*flightState)
	// A provider call that returned its answer just as the deadline
	// passed may be noticed a moment later on a busy machine: allow for
	// that (answerSlack).
	wait := time.Until(st.deadline.Add(answerSlack))
	if wait <= 0 {
		select {
		case <-st.answered:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-st.answered:
		return true
	case <-t.C:
		return false
	}
}

// providerQuery is what the provider is asked.
func (e *Engine) providerQuery(eff *Effective, caps ProviderCapabilities) (*ProviderQuery, []string) {
	var notes []string
	q := &ProviderQuery{
		Tier: eff.Tier.Name, Claim: eff.Claim, Now: e.now().UTC(), FreshnessHours: eff.FreshnessHours,
		SourcePolicy: eff.SourcePolicy, MinimumSources: eff.MinimumSources, MaxSources: eff.MaxSources,
		AllowedDomains: append([]string(nil), eff.AllowedDomains...), BlockedDomains: append([]string(nil), eff.BlockedDomains...),
		IncludeConflicts: eff.IncludeConflicts, Language: eff.Language,
		MaxToolActions: eff.Tier.MaxToolActions, MaxOutputTokens: eff.Tier.MaxOutputTokens,
	}
	if eff.AsOf != nil {
		t := eff.AsOf.Time()
		q.AsOf = &t
	}
	if eff.Jurisdiction != nil {
		q.Jurisdiction = *eff.Jurisdiction
	}
	if caps.MaxDomains > 0 && len(q.AllowedDomains) > caps.MaxDomains {
		notes = append(notes, fmt.Sprintf("The provider accepts %d allowed domains; the first %d of %d were sent and all are enforced locally.",
			caps.MaxDomains, caps.MaxDomains, len(q.AllowedDomains)))
		q.AllowedDomains = q.AllowedDomains[:caps.MaxDomains]
	}
	return q, notes
}

// compute asks the tier's providers, reconciles, snapshots and judges
// (merging by the corroboration rules when more than one answered);
// answered is called as soon as a provider has answered. The providers end at
// ctx's deadline; the captures (early ones included) and quote checks may
// run CheckGrace past it (checkContext).
func (e *Engine) compute(ctx context.Context, eff *Effective, answered func()) (*computed, error) {
	cctx, cancel := e.checkContext(ctx)
	defer cancel()
	early := e.newEarly(cctx, eff)
	defer early.stop()
	reportStage(ctx, StageSearching)
	answers := e.ask(ctx, eff, e.providersFor(eff.Tier.Name), early, answered)
	early.close()
	failed := &computed{}
	for _, a := range answers {
		failed.calls = append(failed.calls, *a.usage)
	}
	failed.usage = sumUsage(failed.calls)
	var ok []*answer
	for _, a := range answers {
		if a.err == nil {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		if ctx.Err() != nil {
			return failed, fmt.Errorf("%w: the provider did not answer in time", ErrTimeout)
		}
		return failed, answers[0].err
	}
	reportStage(ctx, StageReconciling)
	returnedAt := e.now().UTC()
	var drafts []*draft
	for i, a := range ok {
		resp := a.resp
		if i > 0 {
			resp = prefixed(resp, a.name)
		}
		d := reconcile(eff, resp, returnedAt, e.cls, a.sourceName)
		d.offline = a.caps.Offline
		for _, n := range a.notes {
			d.limit("%s", n)
		}
		for _, f := range answers {
			if f.err != nil {
				d.limit("Provider %s failed (%s); the result rests on %s alone and is not corroborated.", f.name, describe(f.err), answerNames(ok))
			}
		}
		d.ensureFacts()
		d.checkLimit = shareOf(eff.Tier.MaxSnapshots, i, len(ok))
		drafts = append(drafts, d)
	}
	if err := e.checkQuotes(cctx, drafts, early); err != nil {
		return failed, err
	}
	var res *Result
	if len(drafts) == 1 {
		res = drafts[0].finish(drafts[0].judge(), ok[0].name)
	} else {
		res = corroborate(eff, drafts, ok)
	}
	return &computed{result: res, pages: drafts[0].pageIDs, usage: failed.usage, calls: failed.calls}, nil
}

// checkContext is the context of the captures and quote checks of one
// computation: ctx's deadline plus the grace, detached from ctx's own
// end (ctx is the computation's, already detached from the callers). With
// no grace it is ctx.
func (e *Engine) checkContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if e.grace <= 0 || !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), dl.Add(e.grace))
}

// answer is one provider's outcome.
type answer struct {
	name       string // provenance name (the response's provider, else Name)
	caps       ProviderCapabilities
	sourceName string // ProviderSource.provider of its sources
	notes      []string
	resp       *ProviderResponse
	err        error // a *ProviderError, or ErrTimeout-wrapped
	usage      *ProviderUsage
}

// ask asks every provider concurrently under ctx; early hears the sources
// each reports before its answer.
// With several providers each call ends at three quarters of the time
// left (see providerShare), so that one provider that hangs cannot take
// the others' answer down with it.
func (e *Engine) ask(ctx context.Context, eff *Effective, provs []SearchProvider, early *early, answered func()) []*answer {
	out := make([]*answer, len(provs))
	if len(provs) > 1 {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)*providerShare/4))
			defer cancel()
		}
	}
	var wg sync.WaitGroup
	for i, p := range provs {
		wg.Go(func() {
			caps := p.Capabilities()
			q, notes := e.providerQuery(eff, caps)
			if early != nil {
				q.OnSearchCall = early.report
			}
			resp, err := p.Search(ctx, q)
			a := &answer{name: p.Name(), caps: caps, notes: notes, resp: resp, usage: e.usage(p, resp, caps)}
			a.err = e.providerErr(ctx, p, resp, err)
			if a.err == nil && answered != nil {
				// Said at once, from the goroutine the answer came back
				// on: callers whose deadline passes now wait for it.
				answered()
			}
			if a.err == nil && resp.Provider != "" {
				a.name = clean(resp.Provider)
			}
			a.sourceName = caps.SourceName
			if a.sourceName == "" {
				a.sourceName = a.name + "_web_search"
			}
			out[i] = a
		})
	}
	wg.Wait()
	return out
}

// providerShare is the part, in quarters, of the time left that the
// providers of a corroborating call get; the rest is for the quote checks,
// the verdicts and storage once one of them has answered.
const providerShare = 3

// providerErr classifies the outcome of one provider call (nil: usable).
func (e *Engine) providerErr(ctx context.Context, p SearchProvider, resp *ProviderResponse, err error) error {
	if err == nil && resp == nil {
		return &ProviderError{Kind: ProviderBadOutput, Err: errors.New("empty response")}
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return &ProviderError{Kind: ProviderTimeout, Err: ctx.Err()}
	}
	e.log.Warn("claims: provider failed", "provider", p.Name(), "err", err)
	var pe *ProviderError
	if errors.As(err, &pe) {
		return err
	}
	return &ProviderError{Kind: ProviderFailed, Err: err}
}

// shareOf is the i-th of n shares of limit, the first ones a page larger
// when it does not divide evenly: each answer's part of the tier's
// snapshot cap, so that together they stay within it.
func shareOf(limit, i, n int) int {
	if n <= 1 {
		return limit
	}
	s := limit / n
	if i < limit%n {
		s++
	}
	return s
}

// sumUsage adds up provider calls (names joined by "+").
func sumUsage(calls []ProviderUsage) *ProviderUsage {
	if len(calls) == 0 {
		return nil
	}
	var provs, models []string
	var u ProviderUsage
	for _, c := range calls {
		provs = append(provs, c.Provider)
		if c.Model != "" {
			models = append(models, c.Model)
		}
		u.InputTokens += c.InputTokens
		u.CachedInputTokens += c.CachedInputTokens
		u.OutputTokens += c.OutputTokens
		u.SearchCalls += c.SearchCalls
	}
	u.Provider, u.Model = strings.Join(provs, "+"), strings.Join(models, "+")
	return &u
}

// checkQuotes fetches the pages whose excerpts the tier checks (see
// planChecks; with several answers, the union of their plans, each within
// its share of the cap) and compares each excerpt with its page: captured
// as snapshots on tiers that take them (reusing the early captures of
// streamed sources), fetched and discarded on quick when the Snapshotter
// is a PageFetcher. Every draft sees every page. It fails only when ctx
// ended.
func (e *Engine) checkQuotes(ctx context.Context, drafts []*draft, early *early) error {
	var urls []string
	seen := map[string]bool{}
	for _, d := range drafts {
		for _, u := range d.planChecks(d.citedIDs()) {
			if k, err := urlnorm.Key(u); err == nil && !seen[k] {
				seen[k] = true
				urls = append(urls, u)
			}
		}
	}
	if len(urls) == 0 {
		return nil
	}
	eff := drafts[0].eff
	archived := eff.Tier.SnapshotMode != SnapshotNone
	each := func(f func(d *draft)) {
		for _, d := range drafts {
			f(d)
		}
	}
	capture := func(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
		return e.snaps.CaptureAll(ctx, urls)
	}
	if early.started() {
		capture = early.take
	}
	switch f, ok := e.snaps.(PageFetcher); {
	case e.snaps == nil && archived:
		each(func(d *draft) {
			d.uncheckable(urls, "no snapshotter is configured")
			d.limit("Snapshots are not configured; no source was captured and no excerpt could be checked.")
		})
		return nil
	case !archived && !ok:
		each(func(d *draft) {
			d.uncheckable(urls, "the quick tier keeps no snapshots and no page fetcher is configured")
			d.limit("Quotes were not checked: the quick tier keeps no snapshots and no page fetcher is configured.")
		})
		return nil
	case !archived:
		capture = f.FetchAll
	}
	if archived {
		reportStage(ctx, StageSnapshotting)
	}
	snaps, err := capture(ctx, urls)
	switch {
	case ctx.Err() != nil && e.grace <= 0:
		return fmt.Errorf("%w: snapshots did not finish in time", ErrTimeout)
	case ctx.Err() != nil && (err != nil || len(snaps) != len(urls)):
		// The grace ran out too: the answer stands, unchecked.
		each(func(d *draft) {
			d.uncheckable(urls, "the pages could not be fetched in time")
			d.limit("The cited pages could not be fetched within the time left after the answer (the deadline and its %s grace); no excerpt could be checked.", e.grace)
		})
	case errors.Is(err, snapshot.ErrUnavailable):
		// The captures could not be stored: the verification fails (503,
		// never charged) rather than cite snapshots that were not kept.
		return fmt.Errorf("claims: storing the snapshots: %w", err)
	case err != nil:
		e.log.Warn("claims: snapshots failed", "err", err)
		each(func(d *draft) {
			d.uncheckable(urls, "the pages could not be fetched ("+describe(err)+")")
			d.limit("Snapshots could not be taken (%s); no excerpt could be checked.", describe(err))
		})
	case len(snaps) != len(urls):
		e.log.Warn("claims: snapshotter returned a wrong number of records", "want", len(urls), "got", len(snaps))
		each(func(d *draft) {
			d.uncheckable(urls, "the fetched pages could not be matched to their URLs")
			d.limit("Snapshots could not be matched to their URLs; no excerpt could be checked.")
		})
	default:
		each(func(d *draft) {
			d.attachSnapshots(snaps, archived)
			if !archived {
				d.limit("On the quick tier quotes are checked on pages fetched for this verification; they are not listed as snapshots, only kept for the verification's evidence bundle.")
			}
		})
	}
	return nil
}

// usage is the cost-relevant work of one provider call, from its response
// (nil or partial when the call failed).
func (e *Engine) usage(p SearchProvider, resp *ProviderResponse, caps ProviderCapabilities) *ProviderUsage {
	u := &ProviderUsage{Provider: p.Name()}
	if resp == nil {
		return u
	}
	if p := clean(resp.Provider); p != "" {
		u.Provider = p
	}
	u.Model = clean(resp.Model)
	u.InputTokens = max(0, resp.Usage.InputTokens)
	u.CachedInputTokens = max(0, resp.Usage.CachedInputTokens)
	u.OutputTokens = max(0, resp.Usage.OutputTokens)
	if !caps.Offline {
		u.SearchCalls = searchActions(resp)
	}
	return u
}
