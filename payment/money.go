package payment

import (
	"strconv"
	"strings"
)

// MicroUSD is an amount of money in integer micro-USD (equal to USDC
// atomic units, 6 decimals). It is the one formatter of amounts: every
// price a payer or a document reads is written by String or Decimal.
type MicroUSD int64

// String writes m in US dollars with at least two decimals and no
// trailing zero beyond them: "0.25", "0.50", "1.00", "0.000001".
func (m MicroUSD) String() string { return m.format(2) }

// Decimal writes m in US dollars without trailing zeros: "0.25", "0.5",
// "1", "0.000001" (the form of the discovery documents' prices).
func (m MicroUSD) Decimal() string { return m.format(0) }

func (m MicroUSD) format(minDecimals int) string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	frac := strings.TrimRight(strconv.FormatInt(1_000_000+v%1_000_000, 10)[1:], "0")
	for len(frac) < minDecimals {
		frac += "0"
	}
	s := sign + strconv.FormatInt(v/1_000_000, 10)
	if frac != "" {
		s += "." + frac
	}
	return s
}
