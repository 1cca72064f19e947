package analysis

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assaykit/assay/claims"
)

// Validator checks answers against the analysis schema, as answers are
// validated: timeSensitive may be missing (see optionalInAnswers).
type Validator struct{ schema *schemaNode }

// NewValidator parses the embedded schema.
func NewValidator() (*Validator, error) {
	n, err := answerSchema()
	if err != nil {
		return nil, err
	}
	return &Validator{schema: n}, nil
}

// wireAnalysis is the model's structured output, after schema validation.
type wireAnalysis struct {
	Status      string `json:"status"`
	Conclusion  string `json:"conclusion"`
	AtomicFacts []struct {
		Statement   string      `json:"statement"`
		Status      string      `json:"status"`
		Confidence  json.Number `json:"confidence"`
		Explanation string      `json:"explanation"`
		EvidenceIDs []string    `json:"evidenceIds"`
		// TimeSensitive is absent from answers of older models and from
		// recordings made before the field existed.
		TimeSensitive *bool `json:"timeSensitive"`
	} `json:"atomicFacts"`
	Evidence []struct {
		ID            string  `json:"id"`
		URL           string  `json:"url"`
		Title         string  `json:"title"`
		Publisher     string  `json:"publisher"`
		PublishedAt   *string `json:"publishedAt"`
		Excerpt       string  `json:"excerpt"`
		Relationship  string  `json:"relationship"`
		SourceType    string  `json:"sourceType"`
		QualityReason string  `json:"qualityReason"`
	} `json:"evidence"`
	Conflicts []struct {
		Summary     string   `json:"summary"`
		EvidenceIDs []string `json:"evidenceIds"`
	} `json:"conflicts"`
	Limitations []string `json:"limitations"`
}

// Parse decodes, validates against v and cleans the model's JSON analysis.
func (v *Validator) Parse(text string) (*claims.Analysis, error) {
	val, err := decodeStrict(text)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if err := v.schema.validate("$", val); err != nil {
		return nil, fmt.Errorf("schema violation at %v", err)
	}
	var w wireAnalysis
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("decode: %v", err)
	}
	a := &claims.Analysis{
		Status:      claims.Status(w.Status),
		Conclusion:  StripCites(w.Conclusion),
		AtomicFacts: make([]claims.ProviderFact, 0, len(w.AtomicFacts)),
		Evidence:    make([]claims.ProviderEvidence, 0, len(w.Evidence)),
		Conflicts:   make([]claims.Conflict, 0, len(w.Conflicts)),
		Limitations: make([]string, 0, len(w.Limitations)),
	}
	for i, f := range w.AtomicFacts {
		c, err := f.Confidence.Float64()
		if err != nil || c < 0 || c > 1 {
			return nil, fmt.Errorf("schema violation at $.atomicFacts[%d].confidence: %s is not between 0 and 1", i, f.Confidence)
		}
		a.AtomicFacts = append(a.AtomicFacts, claims.ProviderFact{
			Statement:     StripCites(f.Statement),
			Status:        claims.Status(f.Status),
			Confidence:    c,
			Explanation:   StripCites(f.Explanation),
			EvidenceIDs:   stripAll(f.EvidenceIDs),
			TimeSensitive: f.TimeSensitive,
		})
	}
	for _, e := range w.Evidence {
		pe := claims.ProviderEvidence{
			ID:            StripCites(e.ID),
			URL:           StripCites(e.URL),
			Title:         StripCites(e.Title),
			Publisher:     StripCites(e.Publisher),
			Excerpt:       StripCites(e.Excerpt),
			Relationship:  claims.Relationship(e.Relationship),
			SourceType:    StripCites(e.SourceType),
			QualityReason: StripCites(e.QualityReason),
		}
		if e.PublishedAt != nil {
			s := StripCites(*e.PublishedAt)
			pe.PublishedAt = &s
		}
		a.Evidence = append(a.Evidence, pe)
	}
	for _, c := range w.Conflicts {
		a.Conflicts = append(a.Conflicts, claims.Conflict{Summary: StripCites(c.Summary), EvidenceIDs: stripAll(c.EvidenceIDs)})
	}
	for _, l := range w.Limitations {
		if l = StripCites(l); l != "" {
			a.Limitations = append(a.Limitations, l)
		}
	}
	return a, nil
}

func stripAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, StripCites(s))
	}
	return out
}

// IsPrivateUse reports whether r is in the private-use area U+E000–U+F8FF
// that citation markers use.
func IsPrivateUse(r rune) bool { return r >= 0xE000 && r <= 0xF8FF }

// StripCites removes private-use citation markers (U+E000–U+F8FF, with the
// "cite…turnNsearchM" text between them) from a model string. Where a
// marker stood between words one space remains; before punctuation or at
// either end of the string none does.
func StripCites(s string) string {
	if !strings.ContainsFunc(s, IsPrivateUse) {
		return s
	}
	// Invalid bytes around a removed marker must not join into a new
	// character (JSON decoding never yields them anyway).
	s = markGaps(strings.ToValidUTF8(s, "\uFFFD"))

	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] != 0 && !isSpaceByte(s[i]) {
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		// A run of gaps and spaces: decide what it becomes.
		j, hadGap, hadSpace := i, false, false
		for j < len(s) && (s[j] == 0 || isSpaceByte(s[j])) {
			if s[j] == 0 {
				hadGap = true
			} else {
				hadSpace = true
			}
			j++
		}
		switch {
		case !hadGap:
			b.WriteString(s[i:j]) // ordinary whitespace is kept as is
		case b.Len() == 0 || j == len(s):
		case strings.ContainsRune(".,;:!?)]}", rune(s[j])):
		case hadSpace:
			b.WriteByte(' ')
		}
		i = j
	}
	return strings.TrimSpace(b.String())
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// markGaps replaces every citation marker and stray private-use character
// with a NUL byte (and drops NULs already present).
func markGaps(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0:
			i += n
		case r == 0xE200: // marker start: skip to its end, or over a stray tail
			b.WriteByte(0)
			i += n
			if end := markerEnd(s[i:]); end >= 0 {
				i += end
				continue
			}
			for i < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[i:])
				if r2 != 0xE202 && r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
					break
				}
				i += n2
			}
		case IsPrivateUse(r):
			b.WriteByte(0)
			i += n
		default:
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// markerEnd returns the offset just past the U+E201 that closes a marker
// whose start was just consumed, or -1 when none closes it within 256 bytes.
func markerEnd(rest string) int {
	for k, r := range rest {
		if k > 256 || r == 0xE200 {
			return -1
		}
		if r == 0xE201 {
			return k + utf8.RuneLen(r)
		}
	}
	return -1
}
