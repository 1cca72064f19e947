package valid

// Patterns is the registry of named pattern tags: one place for the
// validator (Struct), the shapes decoder and the JSON Schemas. Patterns
// stay in the RE2 subset so Go, Pydantic (Rust regex) and ECMA-262 agree.
func Patterns() map[string]string {
	return map[string]string{
		"tagkey":    `^[A-Za-z0-9_:.-]+$`,
		"stepid":    `^[a-zA-Z][a-zA-Z0-9_]{0,39}$`,
		"historyid": `^[A-Za-z0-9:_-]+$`,
	}
}
