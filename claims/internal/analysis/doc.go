// Package analysis holds what the agentic web-search providers
// (claims/openai, claims/anthropic) share: the system instructions and the
// user message that state the claim and its constraints, the tier budget,
// domain normalisation, the strict JSON Schema of the structured analysis
// the model returns, its validation and parsing into a claims.Analysis, and
// the removal of private-use citation markers from model strings.
//
// The schema subset is validated by a small hand-written walker rather than
// a general JSON Schema library because the error locations it reports
// ("$.evidence[1].relationship: ... is not one of ...") are part of the
// providers' tested error messages, and because one property
// (timeSensitive) is required when sent but optional in answers.
package analysis
