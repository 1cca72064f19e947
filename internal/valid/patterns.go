package valid

// Patterns is the registry of named pattern tags: one place for the
// validator (Struct), the shapes decoder and the JSON Schemas. Patterns
// stay in the RE2 subset so Go, Pydantic (Rust regex) and ECMA-262 agree.
func Patterns() map[string]string {
	return map[string]string{
		"tagkey":    `^[A-Za-z0-9_:.-]+$`,
		"stepid":    `^[a-zA-Z][a-zA-Z0-9_]{0,39}$`,
		"historyid": `^[A-Za-z0-9:_-]+$`,
		// domainname is a host name as RFC 1123 writes it, optionally
		// "*." first (subdomains are always included anyway) and a final
		// dot: labels of ASCII letters, digits and inner hyphens, at most
		// 63 characters each, the last one starting with a letter (so
		// that an IPv4 address is not a name). Internationalised names are
		// written in their ASCII (xn--) form.
		"domainname": `^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$`,
	}
}
