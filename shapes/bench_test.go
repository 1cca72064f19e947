package shapes

import (
	"os"
	"testing"
)

// BenchmarkDecode decodes the realistic payloads of testdata/bench (the
// ones bench/shapes/run.sh also gives pydantic-core).
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"ClaimVerificationRequest", "NicheDraft", "ExploreRequest"} {
		data, err := os.ReadFile("testdata/bench/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			dst, _ := New(name)
			if err := Decode(data, dst); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(data, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
