package main

import "testing"

func TestUSD(t *testing.T) {
	for micro, want := range map[int64]string{0: "USD 0.00", 20_000: "USD 0.02", 120_000: "USD 0.12", 250_000: "USD 0.25",
		1_000_000: "USD 1.00", 1_234_567: "USD 1.234567", 500: "USD 0.0005", -50_000: "USD -0.05"} {
		if got := usd(micro); got != want {
			t.Errorf("usd(%d) = %q, want %q", micro, got, want)
		}
	}
}
