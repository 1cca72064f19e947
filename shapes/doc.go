// Package shapes holds every request shape of the two interface documents
// as Go types, decodes and validates JSON into them exactly as a FastAPI
// service with Pydantic v2 models would (Decode, DecodeQuery), reports
// failures as FastAPI's HTTPValidationError (ValidationError), and
// generates their JSON Schemas from the same tags (Schema,
// OpenAPISchemas). New makes a shape by its document name; Names lists
// them.
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
// Decode the documents' defaults are applied: required fields and
// optional fields with defaults are plain values, nullable fields are
// pointers (nil = null) or slices (nil = null).
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
// `query:"name"` (queries). Constraints use go-playground/validator
// syntax in `validate:"..."`, read with Pydantic's meaning:
//
//   - required: the key must be present (not "non-zero": 0, "" and false
//     are values). Fields without it are optional and keep the value
//     SetDefaults gave them.
//   - min, max, len: length of strings (in characters) and slices (items);
//     on numbers, like gte and lte.
//   - gte, lte, gt, lt: numeric bounds (ge, le, gt, lt).
//   - oneof=a b c: a Literal; omitempty is accepted and ignored.
//   - omitnil on a slice, map or any field: null is accepted (nil). Pointer
//     fields always accept null.
//   - dive: the tags after it apply to slice elements.
//   - tagkey, stepid, historyid: named patterns (see the registry in
//     plan.go; the same strings go to the JSON Schema).
//   - strint (an any element holding a string or an int) and object (an any
//     field holding an object): the unions of the ValidationError shape.
//
// A shape that forbids unknown keys (extra_forbidden) has the marker method
// extraForbidden(); the others ignore unknown keys. A `shapes:"deprecated"`
// tag marks a field deprecated in the schema. SetDefaults() (pointer
// receiver) sets the documented defaults; Decode calls it on every struct
// it fills, after zeroing it.
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
