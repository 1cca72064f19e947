package snapshot

import (
	"errors"
	"time"
)

// ErrUnavailable: the store of snapshot content (or records) could not be
// reached or failed (an object store's network error, a 5xx, a refused
// credential). Nothing was stored by the failed call, so a capture is
// never reported stored without its content; the call may be repeated
// later. Servers answer 503 with Retry-After (RetryAfterUnavailable).
var ErrUnavailable = errors.New("snapshot: content store unavailable")

// RetryAfterUnavailable is the wait a server advises (Retry-After) after
// ErrUnavailable.
const RetryAfterUnavailable = 5 * time.Second
