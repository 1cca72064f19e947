package store

import (
	"context"
	"database/sql"
	"strings"
)

// Helpers for building statements and reading values, shared by every
// domain's SQL.

// Placeholders returns n '?' placeholders separated by commas (for IN
// lists and VALUES rows).
func Placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// Args returns the elements of ss as statement arguments.
func Args[T any](ss []T) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// NullIfEmpty passes "" to the database as NULL and any other string as is.
func NullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// StringPtr turns a scanned nullable string into nil or a pointer.
func StringPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return Ptr(n.String)
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// TextRows runs a query of one text column on the reader pool and returns
// its values.
func (db *DB) TextRows(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
