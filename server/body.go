package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/shapes"
)

// decodeBody reads the JSON body of r into dst (a shapes type) and validates
// it. On failure it writes the FastAPI answer (413, 400 or 422 with loc
// prefixed "body") and returns false.
//
// PROVISIONAL: the shapes work replaces the body handling with FastAPI's
// exact behaviour (content types, empty bodies, JSON decode error positions).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, dst any) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpjson.Detail(w, http.StatusRequestEntityTooLarge, "Request body too large")
			return false
		}
		httpjson.Detail(w, http.StatusBadRequest, "There was an error parsing the body")
		return false
	}
	if len(data) == 0 {
		httpjson.Write(w, http.StatusUnprocessableEntity, &shapes.ValidationError{Detail: []shapes.ErrorDetail{
			{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: nil},
		}})
		return false
	}
	if err := shapes.Decode(data, dst); err != nil {
		var ve *shapes.ValidationError
		if errors.As(err, &ve) {
			httpjson.Write(w, http.StatusUnprocessableEntity, ve.WithPrefix("body"))
			return false
		}
		s.writeError(w, r, err)
		return false
	}
	return true
}

// decodeQuery reads the query parameters of r into dst (a shapes query
// type). On failure it writes a 422 with loc prefixed "query" and returns
// false.
//
// PROVISIONAL: replaced by shapes' FastAPI-exact query validation.
func (s *Server) decodeQuery(w http.ResponseWriter, r *http.Request, dst any) bool {
	if err := shapes.DecodeQuery(r.URL.Query(), dst); err != nil {
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
