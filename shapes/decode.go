package shapes

import (
	"bytes"
	"encoding/json"
)

// Decode decodes data into dst (a pointer to a shape) and validates it.
//
// PROVISIONAL: this first version only applies defaults and decodes with
// encoding/json; the Pydantic-exact validator replaces it.
func Decode(data []byte, dst any) error {
	if d, ok := dst.(interface{ SetDefaults() }); ok {
		d.SetDefaults()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &ValidationError{Detail: []ErrorDetail{{Type: "json_invalid", Loc: []any{}, Msg: "Invalid JSON: " + err.Error(), Input: string(data)}}}
	}
	return nil
}
