package shapes

import (
	"encoding/json"
	"testing"
)

func TestNullableFieldKeepsItsDefault(t *testing.T) {
	raw, ok := Schema("ClaimVerificationRequest")
	if !ok {
		t.Fatal("no schema")
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	props := s.Defs["ClaimVerificationRequest"].Properties
	if props["freshnessHours"]["default"] != float64(168) || props["freshnessHours"]["anyOf"] == nil {
		t.Fatalf("freshnessHours: %v", props["freshnessHours"])
	}
	if props["jurisdiction"]["anyOf"] == nil {
		t.Fatalf("jurisdiction is not nullable: %v", props["jurisdiction"])
	}
}
