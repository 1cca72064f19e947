// Package shapes decodes and validates JSON into the request shapes of
// the two interface documents exactly as a FastAPI service with Pydantic
// v2 models would (Decode, DecodeQuery), reports failures as FastAPI's
// HTTPValidationError (ValidationError), and generates their JSON Schemas
// from the same tags (Schema, OpenAPISchemas). New makes a shape by its
// document name; Names lists them.
//
// A shape with a domain twin is the domain type itself, and its bounds
// are stated once, in its tags: ClaimVerificationRequest is
// claims.Request, NicheDraft niche.Draft, NicheListQuery and
// NicheSearchQuery niche.ListOptions and niche.SearchOptions,
// NicheModerationRequest niche.ModerationRequest, and the curator bodies
// embed niche.Op. The engines check the same tags on Go values with
// validator/v10 (through internal/valid, with Pydantic's messages), so a
// bound broken in Go and in JSON reads the same. shapes imports the
// domains, never the reverse: claims and niche link neither this package
// nor its JSON Schema library. The shapes that only exist on the wire
// (place-photo discovery, support, commerce, the ValidationError itself)
// are this package's own types.
//
// # Semantics
//
// Decode follows what FastAPI does with a JSON body: Python's json.loads
// parses the bytes, then Pydantic v2 validates the result in lax mode with
// from_attributes. So numeric strings become numbers (" 42 ", "1_000",
// "42.0"), whole floats and booleans become ints, "yes"/"off"/1/0 become
// booleans, dates accept exact-midnight datetimes and unix timestamps,
// and every error carries Pydantic's type, msg, input and ctx, in
// Pydantic's order (fields in declaration order, then unknown keys in
// input order), with loc relative to the document root. Missing, zero and
// null are distinct: a missing required key is "missing", null for a
// non-nullable field is a type error, 0 is a value. After a successful
// Decode the documents' defaults are applied: every field holds the
// input's value or its default; null is nil (a pointer, slice or map), the
// zero value, or Null (a field.Nullable).
//
// DecodeQuery validates query parameters the same way; ParseQuery reads a
// raw query string as Starlette does (a malformed percent escape such as
// "%ZZ" stays literal text, where URL.Query drops the whole pair).
//
// A JSON syntax error yields the single error FastAPI builds from
// json.JSONDecodeError: type json_invalid, loc [<character offset>], msg
// "JSON decode error", input {}, ctx {"error": <Python's message>}, with
// Python's messages and positions ("Expecting ',' delimiter", ...).
// The behaviour is checked against Pydantic 2.13 and Python 3.11 on tens
// of thousands of generated cases (testdata/gen/gen.py).
//
// # Tags
//
// Any struct can be decoded; its plan is compiled from the tags on first
// use and cached. Fields are named by `json:"name"` (bodies) or
// `query:"name"` (queries); `json:"-"` and `query:"-"` leave a field out
// (niche.SearchOptions.Full), and the fields of an embedded struct without
// a json name are the shape's own, in place, as encoding/json reads them.
// Constraints use go-playground/validator syntax in `validate:"..."`, and
// mean the same on both paths — validator/v10 checks a Go value, Decode a
// JSON document — with one convention where JSON says more than Go:
//
//   - Absent, null and zero. JSON tells them apart; a Go value cannot
//     (encoding/json leaves an absent key zero). So in the domain types
//     the zero value of a field means unset, and the engine applies the
//     documented default (claims.Request{Claim: "…"} is the body
//     {"claim": "…"}); Decode applies the defaults itself (SetDefaults,
//     which also gives the schema its defaults). A field whose zero value
//     is a meaningful explicit value is a pointer (nil: unset) or, when
//     null is a value of its own, a field.Nullable (unset, null or a
//     value).
//   - required: validator's meaning is a non-zero value (a non-nil
//     pointer); Decode reads it as Pydantic's, the key must be present.
//     They agree because a required field whose zero value is valid is a
//     pointer (niche.Draft's scores: nil is absent, new(0) a score of 0),
//     and the other required fields refuse their zero value anyway (a
//     claim of "" is too short). Wire-only shapes that no Go code builds
//     (ErrorDetail.type, PoiViewRequest.heading) keep plain types: only
//     Decode reads them, and the presence of the key is what it checks.
//   - omitempty: validator lets the zero value through (unset: the
//     default applies); Decode ignores it, since a key that is present
//     holds a value, so "minimumSources": 0 is refused with Pydantic's
//     greater_than_equal while MinimumSources 0 in Go is the default 2.
//   - omitnil: JSON null is accepted, and for validator a nil pointer or
//     an unset or null field.Nullable skips the other rules. A field
//     without omitnil refuses null (a pointer too: includeConflicts null
//     is a bool_type error; an any field holds every JSON value, null
//     included). Null leaves the zero value (nil), or Null in a
//     field.Nullable.
//   - min, max, len: length of strings (in characters) and slices
//     (items); on numbers, like gte and lte.
//   - gte, lte, gt, lt: numeric bounds (ge, le, gt, lt).
//   - oneof=a b c: a Literal.
//   - dive: the tags after it apply to slice elements.
//   - tagkey, stepid, historyid: named patterns (one registry, in
//     internal/valid, for the validator, the decoder and the JSON Schema).
//   - strint (an any element holding a string or an int) and object (an any
//     field holding an object): the unions of the ValidationError shape.
//
// TestValidatorAgreesWithDecode checks the convention on boundary fixtures
// derived from the domain shapes' schemas: both paths accept and refuse
// the same documents, with the same field, error type and message. Every
// shape's tags are read by validator/v10 in TestValidatorReadsEveryShape
// (an unknown tag would panic at first use).
//
// The shapes whose documents say "no extra properties" are listed in the
// registry (forbidsExtra); their unknown keys are extra_forbidden, the
// others ignore unknown keys. A `shapes:"deprecated"` tag marks a field
// deprecated in the schema. SetDefaults() (pointer receiver) sets the
// documented defaults; Decode calls it on every struct it fills, after
// zeroing it. Dates are field.Date.
//
// # Choices where the documents leave room
//
//   - ExploreRequest and SearchTaskRequest: the nullable fields are those
//     the document marks "or null" (route, searchProgram, photoStyles,
//     categories, selectedPoiIds, poiCatalogToken); the other arrays
//     default to [] and reject null, as Field(default_factory=list) would.
//     SearchParameters.searchProgram and every optional nested model
//     default to null. IntentRequest.categories is nullable.
//   - PoiViewRequest.framing values are strings ("90", not 90).
//   - Numeric bounds are the documents' integers; on float fields Pydantic
//     shows them as floats in ctx ({"le":85.0}) and as "85" in msg.
//   - ValidationError (ErrorDetail) declares type, loc, msg, input, ctx in
//     that order (the order FastAPI prints), so its own errors come in
//     that order; the document lists loc, msg, type.
//   - NicheSignalInput is a wire shape beside niche.SignalInput, not the
//     domain type: its observedAt and collectedAt are RFC 3339 text that
//     the route parses into time.Time (a parse error is the route's 422,
//     not a Pydantic one), so the signal's text bounds are stated in both
//     (niche checks them again after trimming, for Go callers).
//   - Free-text fields whose values the documents do not show (status,
//     severity, channel, priority, QuoteRequest.tier) accept any string.
//
// # Inputs outside Pydantic's agreement
//
//   - NaN, Infinity and -Infinity literals are rejected as "Expecting
//     value" at their position. Python accepts them, and FastAPI then fails
//     to render any error that echoes them (500).
//   - Duplicate keys: the last value wins and errors of earlier occurrences
//     are dropped, as with Python's dict; an unknown key is reported at its
//     first position with its last value.
//   - Integers beyond int64 (Python's ints have no size): when the field's
//     bounds already exclude the value (an upper bound for a big positive
//     number, a lower one for a big negative number), the answer is that
//     bound's error, as Pydantic's. Otherwise — a field with no bound, or
//     only the bound on the other side: HistoryItem.created (ge=0),
//     NicheReviseRequest and NicheTransitionRequest .expectedRevision
//     (ge=1), SearchStep.weights items and
//     NicheSignalInput.engagement values (no bound) — Pydantic accepts the
//     integer and Decode answers int_parsing_size, since the Go field (an
//     int) cannot hold it; this holds for JSON integers, numeric strings
//     ("100000000000000000000") and whole floats (1e20) alike. The golden
//     cases mark these "deviation": "int64". Numbers beyond float64 are
//     infinity, as in Python, and are echoed as written.
//   - Text that is not UTF-8, and nesting deeper than MaxDepth, give a
//     json_invalid error wrapping ErrUnreadable (FastAPI answers 400 for
//     both: UnicodeDecodeError, RecursionError). A UTF-8 byte order mark is
//     skipped, as json.loads does for bytes; UTF-16 and UTF-32 bodies, which
//     Python would transcode, are not supported.
//   - A lone surrogate escape ("\ud800"): Python keeps it in the str, and
//     Pydantic fails as soon as it must read that str as UTF-8 — a string
//     with a length, pattern or Literal constraint, a number, boolean or
//     date given as a string, an unknown key of a shape that forbids them
//     (one string_unicode at the object's loc then replaces all of that
//     object's errors) — with string_unicode, which Decode reports the
//     same way. Where Pydantic accepts it (an unconstrained str, a dict
//     key, an open object), the Go string holds U+FFFD instead. Echoed
//     inputs write a lone surrogate as its escape ("\ud800"), where
//     FastAPI would fail to encode its answer (500).
//   - Bounded answers. FastAPI lists every error and echoes every input, so
//     a 1 MB body of unknown keys makes a 10 MB answer. Decode keeps the
//     first MaxErrors errors in Pydantic's order (each list, dict and
//     object stops collecting there, so the cost stays linear in the
//     input), leaves out (OmittedInput) an input whose rendering exceeds
//     MaxEchoBytes, and ValidationError.MarshalJSON writes at most
//     MaxErrors errors with at most MaxEchoBytes of echoed inputs and locs
//     in all — no more than the input's own size when it is larger than
//     MinEchoBytes —, leaving out the input member (not required by the
//     ValidationError schema) of the errors past that. No golden case
//     reaches these limits.
//
// # Cost
//
// Decode and DecodeQuery take time linear in the input on every path:
// unknown and repeated keys are found through maps once they are many,
// errors are ordered per object with one pass over its fields, echoes are
// rendered once and cut at MaxEchoBytes, and nesting stops at MaxDepth.
// BenchmarkUnknownKeys and bench/hostile measure it.
//
// # Package state
//
// The only package-level state is a cache of compiled plans and a pool of
// decoder scratch buffers: memos of pure functions of the Go types, never
// configuration. Decoded strings share one copy of the input document, so
// a kept field keeps that copy alive.
package shapes
