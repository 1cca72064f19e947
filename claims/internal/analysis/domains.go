package analysis

import (
	"fmt"
	"strings"

	"golang.org/x/net/idna"

	"github.com/assaykit/assay/claims"
)

// NormalizeDomain returns the hostname form the web_search filter expects:
// lowercase, without scheme, userinfo, path, query, port, leading "*." or
// trailing dot, IDNA names in punycode. ok is false when nothing valid
// remains.
func NormalizeDomain(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "[") { // IPv6 literal: not a domain
		return "", false
	}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "*.")
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", false
	}
	a, err := idna.Lookup.ToASCII(s)
	if err != nil || a == "" || !strings.Contains(a, ".") {
		return "", false
	}
	return a, true
}

// NormalizeDomains normalises and deduplicates a list, returning the
// entries it had to drop.
func NormalizeDomains(in []string) (out, dropped []string) {
	seen := make(map[string]bool, len(in))
	for _, d := range in {
		n, ok := NormalizeDomain(d)
		if !ok {
			dropped = append(dropped, d)
			continue
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, dropped
}

// Domains normalises the query's allowed and blocked domains and trims the
// allowed list to max entries (0: no cap). It returns the lists, the
// allowed list to send, and the limitations this implies (invalid
// hostnames dropped, a trimmed list).
func Domains(q *claims.ProviderQuery, max int) (allowed, sentAllowed, blocked, limits []string) {
	allowed, droppedA := NormalizeDomains(q.AllowedDomains)
	blocked, droppedB := NormalizeDomains(q.BlockedDomains)
	for _, d := range append(droppedA, droppedB...) {
		limits = append(limits, fmt.Sprintf("The domain %q is not a valid hostname and was not passed to the search provider.", d))
	}
	sentAllowed = allowed
	if max > 0 && len(allowed) > max {
		sentAllowed = allowed[:max]
		limits = append(limits, fmt.Sprintf(
			"The search provider accepts at most %d allowed domains; it searched the first %d of %d, and the rest are enforced only locally.",
			max, max, len(allowed)))
	}
	return allowed, sentAllowed, blocked, limits
}
