package claims

import "context"

// Stage names a step of a verification that is reported to a ProgressFunc
// while it runs. Transports turn stages into progress notifications (MCP)
// or task status updates (A2A).
type Stage string

// Stages reported by Engine.Verify, in order. StageSnapshotting is only
// reported when the tier captures sources and there are some to capture.
// Replays, cache hits and callers that joined an identical verification
// already in flight report no stage: their answer needs no new work.
const (
	// StageSearching: the provider call started.
	StageSearching Stage = "searching"
	// StageReconciling: the provider answered; its evidence is being
	// checked against its own search results and the request's policies.
	StageReconciling Stage = "reconciling"
	// StageSnapshotting: cited sources are being captured.
	StageSnapshotting Stage = "snapshotting"
)

// ProgressFunc receives the stages of one verification. It is called on the
// verification's goroutine and must return quickly.
type ProgressFunc func(Stage)

type progressKey struct{}

// WithProgress returns a context that makes Verify report its stages to f.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// reportStage calls the ProgressFunc of ctx, if any.
func reportStage(ctx context.Context, s Stage) {
	if f, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && f != nil {
		f(s)
	}
}
