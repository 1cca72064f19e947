// Package memstore holds what the in-memory stores (claims/claimsmem,
// niche/nichemem, payment/paymentmem) share, so that they keep values the
// way the SQL stores over package store do: times in microseconds, UTC;
// documents as JSON, so that a caller never shares memory with the store.
package memstore

import (
	"encoding/json"
	"fmt"
	"time"
)

// Time returns t as a database returns it: UTC, truncated to the
// microsecond (the zero time stays zero).
func Time(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Clock returns now, or time.Now when now is nil.
func Clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Copy returns a deep copy of v made through its JSON form, as a store
// that keeps v as a JSON document returns it.
func Copy[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("encode %T: %w", v, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode %T: %w", v, err)
	}
	return out, nil
}
