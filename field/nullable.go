package field

import (
	"bytes"
	"encoding/json"
)

// Nullable is a field that may be unset (the zero value: the documented
// default applies), null, or a value. Build one with Value or Null, read
// it with Get and IsNull. JSON: a value is written as it is, null and
// unset as null (use omitzero to leave an unset field out); reading null
// gives Null, anything else a value.
type Nullable[T any] struct {
	// V is the value when Valid.
	V T
	// Valid reports that a value was given.
	Valid bool
	// Null reports that null was given (Valid is then false).
	Null bool
}

// Value returns a Nullable holding v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{V: v, Valid: true} }

// Null returns a Nullable holding null.
func Null[T any]() Nullable[T] { return Nullable[T]{Null: true} }

// Get returns the value and whether there is one (false when unset or
// null).
func (n Nullable[T]) Get() (T, bool) { return n.V, n.Valid }

// IsNull reports whether n holds null.
func (n Nullable[T]) IsNull() bool { return n.Null && !n.Valid }

// IsZero reports whether n is unset (for the omitzero JSON option).
func (n Nullable[T]) IsZero() bool { return !n.Valid && !n.Null }

// MarshalJSON writes the value, or null when there is none.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(n.V)
}

// UnmarshalJSON reads null as Null and any other JSON value as a value.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Value(v)
	return nil
}
