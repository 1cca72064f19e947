package agents

import (
	"context"
	"log/slog"
)

// The MCP SDK logs the life of every session: in the stateless streamable
// transport that is three info lines per call ("server connecting",
// "server session connected", "server session ended"), with an empty
// session_id. mcpLogger folds them into the server's logger: the SDK's
// info and debug lines become debug lines, tagged component=mcp, without
// empty attributes; its warnings and errors keep their level.
func mcpLogger(l *slog.Logger) *slog.Logger {
	return slog.New(&mcpLogHandler{h: l.Handler()}).With("component", "mcp")
}

type mcpLogHandler struct{ h slog.Handler }

// mcpLevel is the level an SDK record is logged at.
func mcpLevel(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (m *mcpLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return m.h.Enabled(ctx, mcpLevel(l))
}

func (m *mcpLogHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, mcpLevel(r.Level), r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if !emptyAttr(a) {
			out.AddAttrs(a)
		}
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m *mcpLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var keep []slog.Attr
	for _, a := range as {
		if !emptyAttr(a) {
			keep = append(keep, a)
		}
	}
	return &mcpLogHandler{h: m.h.WithAttrs(keep)}
}

func (m *mcpLogHandler) WithGroup(name string) slog.Handler {
	return &mcpLogHandler{h: m.h.WithGroup(name)}
}

// emptyAttr reports an attribute that says nothing: an empty string.
func emptyAttr(a slog.Attr) bool {
	v := a.Value.Resolve()
	return v.Kind() == slog.KindString && v.String() == ""
}
