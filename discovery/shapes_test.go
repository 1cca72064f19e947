package discovery

import "testing"

func TestShapeSchemasPublishOnlyWhatIsNamed(t *testing.T) {
	got, err := shapeSchemas([]string{"ClaimVerificationRequest", "NicheSearchQuery"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ClaimVerificationRequest", "NicheSearchQuery", "HTTPValidationError", "ValidationError"} {
		if _, ok := got[want]; !ok {
			t.Errorf("missing component %s", want)
		}
	}
	for _, admin := range []string{"NicheSignalBatch", "NicheCreateRequest", "ExploreRequest"} {
		if _, ok := got[admin]; ok {
			t.Errorf("component %s published although no public route names it", admin)
		}
	}
}
