package payment_test

import (
	"testing"

	"github.com/assaykit/assay/payment"
)

func TestMicroUSD(t *testing.T) {
	for _, tc := range []struct {
		m            int64
		str, decimal string
	}{
		{0, "0.00", "0"},
		{1, "0.000001", "0.000001"},
		{20_000, "0.02", "0.02"},
		{50_000, "0.05", "0.05"},
		{250_000, "0.25", "0.25"},
		{500_000, "0.50", "0.5"},
		{1_000_000, "1.00", "1"},
		{9_990_000, "9.99", "9.99"},
		{12_345_678, "12.345678", "12.345678"},
		{-1_500_000, "-1.50", "-1.5"},
	} {
		if got := payment.MicroUSD(tc.m).String(); got != tc.str {
			t.Errorf("MicroUSD(%d).String() = %q, want %q", tc.m, got, tc.str)
		}
		if got := payment.MicroUSD(tc.m).Decimal(); got != tc.decimal {
			t.Errorf("MicroUSD(%d).Decimal() = %q, want %q", tc.m, got, tc.decimal)
		}
	}
}
