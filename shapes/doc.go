// Package shapes holds every request shape of the two interface documents
// as Go types, decodes and validates JSON into them with Pydantic v2
// lax-mode semantics (Decode), reports failures as FastAPI's
// HTTPValidationError (ValidationError), and generates their JSON Schemas.
//
// After a successful Decode, the documents' defaults are applied: required
// fields and optional fields with defaults are plain values, and fields that
// may be null are pointers (nil means null).
package shapes
