package main

import (
	"context"
	"log/slog"
)

// Logging: every line goes to one stream (stderr) in one format (-log-format
// text or json), filtered by -log-level. The start-up announcements (the
// listening address, first, and "assay ready") are shown at every level:
// they are how a person or a script learns where the server is, also with
// -addr 127.0.0.1:0 and -log-level warn.

// announceKey marks a context whose log lines pass any level.
type announceKey struct{}

// announce returns ctx marked so that its log lines are always shown.
func announce(ctx context.Context) context.Context {
	return context.WithValue(ctx, announceKey{}, true)
}

// levelFilter passes records at or above level, and announcements.
type levelFilter struct {
	slog.Handler
	level slog.Level
}

func (f *levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.level || ctx.Value(announceKey{}) != nil
}

func (f *levelFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return &levelFilter{Handler: f.Handler.WithAttrs(as), level: f.level}
}

func (f *levelFilter) WithGroup(name string) slog.Handler {
	return &levelFilter{Handler: f.Handler.WithGroup(name), level: f.level}
}
