package server

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/shapes"
)

// decodeBody reads the body of r into dst (a shapes type) and validates it
// exactly as FastAPI validates a required model body:
//
//   - a body over the limit: 413 {"detail":"Request body too large"};
//     another read failure, text that is not UTF-8, or nesting deeper than
//     shapes.MaxDepth: 400 {"detail":"There was an error parsing the body"};
//   - an empty body, or the JSON literal null: 422 missing at ["body"];
//   - the body is parsed as JSON when Content-Type is absent or empty, or
//     its media type is application/json or application/*+json (parameters
//     and case ignored); any other type makes the raw body the input, which
//     fails as model_attributes_type with the body text as input;
//   - malformed JSON: 422 json_invalid at ["body", <character offset>] with
//     Python's json message in ctx.error;
//   - validation errors: 422 with every loc prefixed "body".
//
// On failure it writes the answer and returns false.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, dst any) bool {
	_, ok := s.decodeBodyBytes(w, r, dst)
	return ok
}

// decodeBodyBytes is decodeBody that also returns the body it decoded.
func (s *Server) decodeBodyBytes(w http.ResponseWriter, r *http.Request, dst any) ([]byte, bool) {
	data, ok := httpjson.ReadBody(w, r)
	if !ok {
		return nil, false
	}
	var err error
	switch ct := r.Header.Get("Content-Type"); {
	case len(data) == 0:
		err = shapes.Decode(nil, dst)
	case ct != "" && !isJSONMediaType(ct):
		err = &shapes.ValidationError{Detail: []shapes.ErrorDetail{{Type: "model_attributes_type", Loc: []any{},
			Msg: "Input should be a valid dictionary or object to extract fields from", Input: strings.ToValidUTF8(string(data), "\uFFFD")}}}
	default:
		err = shapes.Decode(data, dst)
	}
	if err == nil {
		return data, true
	}
	var ve *shapes.ValidationError
	switch {
	case errors.Is(err, shapes.ErrUnreadable):
		httpjson.Detail(w, http.StatusBadRequest, "There was an error parsing the body")
	case errors.As(err, &ve):
		httpjson.Write(w, http.StatusUnprocessableEntity, ve.WithPrefix("body"))
	default:
		s.writeError(w, r, err)
	}
	return nil, false
}

// isJSONMediaType reports whether FastAPI parses a body of this
// Content-Type as JSON: the media type (before any ';', trimmed, lower
// case, exactly one '/') is application/json or application/<x>+json.
// A malformed type counts as text/plain, as Python's email.message has it.
func isJSONMediaType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if strings.Count(mt, "/") != 1 {
		return false
	}
	main, sub, _ := strings.Cut(mt, "/")
	return main == "application" && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// queryValues are the query parameters of r as Starlette reads them
// (shapes.ParseQuery): a malformed percent escape stays literal text
// instead of dropping its parameter, as URL.Query does.
func queryValues(r *http.Request) url.Values { return shapes.ParseQuery(r.URL.RawQuery) }

// decodeQuery reads the query parameters of r into dst (a shapes query
// type) with FastAPI's rules (Starlette's parsing, last occurrence wins,
// lax parsing of the strings). On failure it writes a 422 with loc
// prefixed "query" and returns false.
func (s *Server) decodeQuery(w http.ResponseWriter, r *http.Request, dst any) bool {
	if err := shapes.DecodeQuery(queryValues(r), dst); err != nil {
		var ve *shapes.ValidationError
		if errors.As(err, &ve) {
			httpjson.Write(w, http.StatusUnprocessableEntity, ve.WithPrefix("query"))
			return false
		}
		s.writeError(w, r, err)
		return false
	}
	return true
}
