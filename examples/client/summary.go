package main

import (
	"fmt"
	"io"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
)

// short abbreviates long hex identifiers and addresses for the summary.
func short(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:10] + "…" + s[len(s)-6:]
}

func printVerification(w io.Writer, tier string, v *verification) {
	r := &v.result
	fmt.Fprintf(w, "\nClaim verification, %s tier\n", tier)
	fmt.Fprintf(w, "  claim       %s\n", r.Claim)
	fmt.Fprintf(w, "  verdict     %s: %s\n", r.Status, r.Conclusion)
	for i, f := range r.AtomicFacts {
		fmt.Fprintf(w, "  fact %-6d %s (%s, confidence %.2f)\n", i+1, f.Statement, f.Status, f.Confidence)
	}
	rel := map[claims.Relationship]int{}
	for _, e := range r.Evidence {
		rel[e.Relationship]++
	}
	captured := 0
	for _, s := range r.Snapshots {
		if s.Captured() {
			captured++
		}
	}
	fmt.Fprintf(w, "  evidence    %d items (%d supporting, %d contradicting, %d context) from %d provider sources\n",
		len(r.Evidence), rel[claims.Supports], rel[claims.Contradicts], rel[claims.Context], len(r.ProviderSources))
	fmt.Fprintf(w, "  snapshots   %d of %d captured, each with its SHA-256 (GET /v1/url-snapshots/{id}/content)\n", captured, len(r.Snapshots))
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(w, "  conflicts   %s\n", r.Conflicts[0].Summary)
	}
	fmt.Fprintf(w, "  provider    %s / %s; %d limitation(s), the first: %s\n", r.Provenance.Provider, r.Provenance.Model, len(r.Limitations), first(r.Limitations))
	fmt.Fprintf(w, "  id          %s\n", r.VerificationID)
}

func printNiche(w io.Writer, n *nichePurchase) {
	e := &n.eval
	fmt.Fprintf(w, "\nNiche evaluation\n")
	fmt.Fprintf(w, "  niche       %s\n", e.Title)
	fmt.Fprintf(w, "  buyer       %s (%s)\n", e.Buyer, e.Category)
	fmt.Fprintf(w, "  score       %d/100 (%s, %s), confidence %s\n", e.Score, e.ScoreVersion, e.ScoreType, e.Confidence)
	fmt.Fprintf(w, "  evidence    %d signals from %d independent sources; trend %s\n",
		e.EvidenceSummary.SignalCount, e.EvidenceSummary.IndependentSourceCount, e.Trend.Direction)
	if n.unlocked {
		fmt.Fprintf(w, "  unlock      the x-niche-paid-call token re-opened GET /v1/niches/%s without paying again\n", e.ID)
	}
	fmt.Fprintf(w, "  id          %s\n", e.ID)
}

func printPurchase(w io.Writer, p *purchase) {
	if p.paid == nil {
		fmt.Fprintf(w, "  %s: not charged (the server serves it without payment)\n", p.what)
		return
	}
	i, rc := p.paid, p.receipt
	proto := i.Protocol
	if i.Version > 0 {
		proto = fmt.Sprintf("%s v%d", proto, i.Version)
	}
	fmt.Fprintf(w, "  %s\n", p.what)
	fmt.Fprintf(w, "    paid      %s by %s on %s to %s\n", "USD "+payment.MicroUSD(i.AmountMicroUSD).String(), proto, i.Network, i.PayTo)
	fmt.Fprintf(w, "    order     %s, receipt %s, settlement %s\n", i.OrderID, rc.ReceiptID, short(rc.SettlementReference))
	fmt.Fprintf(w, "    receipt   signature OK (Ed25519, key %s); resultSha256 matches the bytes received\n", short(rc.KeyID))
	if rc.Dev {
		fmt.Fprintf(w, "    DEV MODE  the server settled nothing on-chain: no funds moved\n")
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}
