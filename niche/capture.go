package niche

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/assaykit/assay/snapshot"
)

// Capturer captures the source pages of evidence: *snapshot.Service
// satisfies it (SSRF-safe fetches, hashed and stored records, served by
// the snapshot routes), nichetest.Capturer fakes it. The engine never
// fetches a page itself and imports no HTTP code.
//
// When a curator creates, revises or publishes an evaluation, the engine
// captures the page of every linked signal that has no successful capture
// yet (one fetch per distinct URL), holds the records (Hold), and stores
// each signal's latest capture with the signal (Signal.Snapshot), failed
// ones included: a page that cannot be captured is reported in the
// evidence (captureStatus and captureReason), never dropped. The capture
// is kept for as long as an evaluation needs it, not for the snapshot
// service's retention: once the signal is rejected, or no draft or
// published evaluation links it, ReleaseEvidence (run after withdrawals,
// revisions and rejections) clears it and releases the hold, and the
// snapshot purger then removes the record like any other expired one.
type Capturer interface {
	// CaptureAll captures urls and returns one stored record per URL, in
	// order (failed captures included); the error is a storage failure.
	CaptureAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error)
	// Hold exempts records from the retention purge until Release.
	Hold(ctx context.Context, ids []string) error
	// Release hands records back to the retention purge.
	Release(ctx context.Context, ids []string) error
}

var _ Capturer = (*snapshot.Service)(nil)

// NotCaptured is Evidence.CaptureStatus of a signal whose page has not
// been captured (the engine has no Capturer, or never needed the page).
const NotCaptured = "not_captured"

// captureLinked captures the pages of the linked signals that have no
// successful capture yet, records the captures and updates signals.
func (e *Engine) captureLinked(ctx context.Context, signals map[string]Signal, signalIDs []string) error {
	c := e.opts.Capturer
	if c == nil {
		return nil
	}
	byURL := map[string][]string{}
	var urls, replaced []string
	for _, id := range signalIDs {
		s, ok := signals[id]
		if !ok || s.State == StateRejected || s.Snapshot.Captured() {
			continue
		}
		if _, seen := byURL[s.SourceURL]; !seen {
			urls = append(urls, s.SourceURL)
		}
		byURL[s.SourceURL] = append(byURL[s.SourceURL], id)
		if s.Snapshot != nil {
			replaced = append(replaced, s.Snapshot.ID)
		}
	}
	if len(urls) == 0 {
		return nil
	}
	snaps, err := c.CaptureAll(ctx, urls)
	if err == nil && len(snaps) != len(urls) {
		err = fmt.Errorf("%d records for %d pages", len(snaps), len(urls))
	}
	if err != nil {
		return fmt.Errorf("niche: capturing evidence pages: %w", err)
	}
	held := make([]string, 0, len(snaps))
	caps := make(map[string]*snapshot.Snapshot, len(signalIDs))
	for i, u := range urls {
		if snaps[i] == nil {
			return errors.New("niche: capturing evidence pages: a nil record")
		}
		held = append(held, snaps[i].ID)
		for _, id := range byURL[u] {
			caps[id] = snaps[i]
		}
		if !snaps[i].Captured() {
			reason := ""
			if snaps[i].FailureReason != nil {
				reason = *snaps[i].FailureReason
			}
			e.log.WarnContext(ctx, "niche: evidence page not captured", "url", u, "status", snaps[i].Status, "reason", reason)
		}
	}
	if err := c.Hold(ctx, held); err != nil {
		return fmt.Errorf("niche: holding evidence captures: %w", err)
	}
	if err := e.st.SetSignalSnapshots(ctx, caps); err != nil {
		return err
	}
	for id, snap := range caps {
		s := signals[id]
		s.Snapshot = snap
		signals[id] = s
	}
	if len(replaced) > 0 {
		if err := c.Release(ctx, replaced); err != nil {
			e.log.WarnContext(ctx, "niche: releasing replaced captures failed", "err", err)
		}
	}
	return nil
}

// releaseBatch is how many captures ReleaseEvidence clears per store call.
const releaseBatch = 500

// ReleaseEvidence clears the captures no evaluation needs any more (the
// signal is rejected, or no draft or published evaluation links it) and
// releases their holds, so that the snapshot purger removes them once
// they are older than its retention. It returns how many it released.
// After withdrawals, revisions and rejections the engine releases the
// captures of the signals concerned; ReleaseEvidence sweeps every signal,
// for a host to run on a schedule (it also catches what a failed release
// left). Without a Capturer it does nothing.
func (e *Engine) ReleaseEvidence(ctx context.Context) (int, error) {
	c := e.opts.Capturer
	if c == nil {
		return 0, nil
	}
	return e.release(ctx, nil)
}

// release releases the captures no evaluation needs among the signals of
// scope (nil: all; a scope is one evaluation's links, at most 100).
func (e *Engine) release(ctx context.Context, scope []string) (int, error) {
	c := e.opts.Capturer
	if c == nil || (scope != nil && len(scope) == 0) {
		return 0, nil
	}
	if scope != nil {
		scope = slices.Compact(slices.Sorted(slices.Values(scope)))
	}
	n := 0
	for {
		ids, err := e.st.ReleaseSignalSnapshots(ctx, scope, releaseBatch)
		if err != nil {
			return n, err
		}
		if len(ids) > 0 {
			if err := c.Release(ctx, ids); err != nil {
				return n, fmt.Errorf("niche: releasing evidence captures: %w", err)
			}
		}
		n += len(ids)
		if len(ids) < releaseBatch {
			return n, nil
		}
	}
}

// releaseEvidence releases, after a write, the captures of the signals
// it may have made unneeded (those it unlinked, or those of a withdrawn
// evaluation, or a rejected signal), logging a failure: the write stands,
// and ReleaseEvidence releases what this call could not.
func (e *Engine) releaseEvidence(ctx context.Context, signalIDs []string) {
	if n, err := e.release(ctx, signalIDs); err != nil {
		e.log.WarnContext(ctx, "niche: releasing evidence captures failed", "err", err)
	} else if n > 0 {
		e.log.DebugContext(ctx, "niche: evidence captures released", "count", n)
	}
}
