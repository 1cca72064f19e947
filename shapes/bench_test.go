package shapes

import (
	"github.com/assaykit/assay/claims"
	"os"
	"strconv"
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

// unknownKeys is a ClaimVerificationRequest body with n unknown keys
// (extra_forbidden each), the hostile body of issue 13: 95,000 keys make
// a body just under 1 MiB.
func unknownKeys(n int) []byte {
	b := []byte(`{"claim":"The Base mainnet chain ID is 8453."`)
	for i := range n {
		b = append(b, `,"k`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":0`...)
	}
	return append(b, '}')
}

// BenchmarkUnknownKeys decodes bodies with 1,000 to 95,000 unknown keys;
// ns/key must stay flat (bench/hostile prints the ratio).
func BenchmarkUnknownKeys(b *testing.B) {
	for _, n := range []int{1000, 10000, 95000} {
		data := unknownKeys(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var r claims.Request
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := Decode(data, &r); err == nil {
					b.Fatal("accepted")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
