package store

import "database/sql"

// Helpers for optional values, shared by every domain's SQL.

// emptyAsNull passes "" to the database as NULL and any other string as is.
func emptyAsNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stringPtr turns a scanned nullable string into nil or a pointer.
func stringPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return ptrTo(n.String)
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
