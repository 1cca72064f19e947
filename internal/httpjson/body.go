package httpjson

import (
	"errors"
	"io"
	"net/http"
)

// ReadBody reads the whole request body within the route's limit. On
// failure it answers as FastAPI does — 413 {"detail":"Request body too
// large"} over the limit, 400 {"detail":"There was an error parsing the
// body"} for other read errors — and returns false.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Body == nil {
		return nil, true
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			Detail(w, http.StatusRequestEntityTooLarge, "Request body too large")
			return nil, false
		}
		Detail(w, http.StatusBadRequest, "There was an error parsing the body")
		return nil, false
	}
	return data, true
}
