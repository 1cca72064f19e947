package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assaykit/assay/claims"
)

// wireResponse is the part of a Responses API object that the provider reads.
type wireResponse struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Status string `json:"status"`
	Model  string `json:"model"`
	Error  *struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []json.RawMessage `json:"output"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

type wireItem struct {
	Type    string            `json:"type"`
	ID      string            `json:"id"`
	Status  string            `json:"status"`
	Role    string            `json:"role"`
	Action  *wireAction       `json:"action"`
	Content []json.RawMessage `json:"content"`
}

type wireAction struct {
	Type    *string           `json:"type"`
	Queries []string          `json:"queries"`
	Query   *string           `json:"query"`
	Sources []json.RawMessage `json:"sources"`
	URL     *string           `json:"url"`
	Pattern *string           `json:"pattern"`
}

type wireSource struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

type wireContent struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Refusal     string            `json:"refusal"`
	Annotations []json.RawMessage `json:"annotations"`
}

type wireAnnotation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
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

func badOutput(responseID, format string, args ...any) error {
	return providerErr(claims.ProviderBadOutput, 0, &OutputError{ResponseID: responseID, Reason: fmt.Sprintf(format, args...)})
}

// parseResponse turns a 2xx body into a ProviderResponse. On an in-band
// failure it returns the partial response (search calls, citations, usage,
// raw payload; empty analysis) together with the error.
func (p *Provider) parseResponse(body []byte, schema *schemaNode) (*claims.ProviderResponse, error) {
	var wr wireResponse
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, badOutput("", "response body is not a JSON object: %v", err)
	}
	if wr.ID == "" || wr.Status == "" {
		return nil, badOutput("", "response body has no id or status")
	}
	pr := &claims.ProviderResponse{
		Provider:    ProviderName,
		Model:       wr.Model,
		ResponseID:  wr.ID,
		SearchCalls: []claims.SearchCall{},
		Citations:   []claims.Citation{},
		Raw:         json.RawMessage(body),
	}
	if pr.Model == "" {
		pr.Model = p.opts.Model
	}
	if wr.Usage != nil {
		pr.Usage = claims.Usage{
			InputTokens:       wr.Usage.InputTokens,
			CachedInputTokens: wr.Usage.InputTokensDetails.CachedTokens,
			OutputTokens:      wr.Usage.OutputTokens,
		}
	}

	var text, refusal strings.Builder
	var limits []string
	cited := map[string]bool{}
	for i, raw := range wr.Output {
		var it wireItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return pr, badOutput(wr.ID, "output[%d] is not a valid item: %v", i, err)
		}
		switch it.Type {
		case "web_search_call":
			call := searchCall(it)
			pr.SearchCalls = append(pr.SearchCalls, call)
			if it.Status != "" && it.Status != "completed" {
				limits = append(limits, fmt.Sprintf("The provider's web search call %s ended with status %q.", it.ID, it.Status))
			}
		case "message":
			if it.Role != "" && it.Role != "assistant" {
				continue
			}
			for j, rc := range it.Content {
				var c wireContent
				if err := json.Unmarshal(rc, &c); err != nil {
					return pr, badOutput(wr.ID, "output[%d].content[%d] is not a valid part: %v", i, j, err)
				}
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
					for _, ra := range c.Annotations {
						var a wireAnnotation
						if json.Unmarshal(ra, &a) != nil || a.Type != "url_citation" || a.URL == "" {
							continue
						}
						u := stripCites(a.URL)
						if cited[u] {
							continue
						}
						cited[u] = true
						pr.Citations = append(pr.Citations, claims.Citation{URL: u, Title: stripCites(a.Title)})
					}
				case "refusal":
					refusal.WriteString(c.Refusal)
				}
			}
		}
	}

	if wr.Status != "completed" {
		re := &ResponseError{ResponseID: wr.ID, Status: wr.Status}
		if wr.IncompleteDetails != nil {
			re.Reason = wr.IncompleteDetails.Reason
		}
		if wr.Error != nil {
			re.Code = rawString(wr.Error.Code)
			re.Message = stripCites(wr.Error.Message)
		}
		return pr, classifyResponseError(re)
	}
	if strings.TrimSpace(text.String()) == "" {
		if r := strings.TrimSpace(refusal.String()); r != "" {
			return pr, badOutput(wr.ID, "the model refused: %s", stripCites(r))
		}
		return pr, badOutput(wr.ID, "the response has no output text")
	}
	a, err := parseAnalysis(text.String(), schema)
	if err != nil {
		return pr, badOutput(wr.ID, "analysis: %v", err)
	}
	a.Limitations = append(a.Limitations, limits...)
	pr.Analysis = *a
	return pr, nil
}

// searchCall reports one web_search_call faithfully: an absent action type
// is "search", the older "find" is "find_in_page", "queries" is preferred to
// the deprecated "query", non-URL sources are skipped, a null URL is "".
func searchCall(it wireItem) claims.SearchCall {
	call := claims.SearchCall{ID: it.ID, Action: claims.ActionSearch}
	a := it.Action
	if a == nil {
		return call
	}
	if a.Type != nil && *a.Type != "" {
		call.Action = *a.Type
	}
	if call.Action == "find" {
		call.Action = claims.ActionFindInPage
	}
	for _, q := range a.Queries {
		if q = strings.TrimSpace(stripCites(q)); q != "" {
			call.Queries = append(call.Queries, q)
		}
	}
	if len(call.Queries) == 0 && a.Query != nil {
		if q := strings.TrimSpace(stripCites(*a.Query)); q != "" {
			call.Queries = []string{q}
		}
	}
	if a.URL != nil {
		call.URL = stripCites(*a.URL)
	}
	if a.Pattern != nil {
		call.Pattern = stripCites(*a.Pattern)
	}
	for _, rs := range a.Sources {
		var s wireSource
		if json.Unmarshal(rs, &s) != nil || s.URL == "" || (s.Type != "" && s.Type != "url") {
			continue
		}
		call.Sources = append(call.Sources, claims.SourceRef{URL: stripCites(s.URL), Title: stripCites(s.Title)})
	}
	return call
}

// parseAnalysis decodes, validates and cleans the model's JSON analysis.
func parseAnalysis(text string, schema *schemaNode) (*claims.Analysis, error) {
	v, err := decodeStrict(text)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if err := schema.validate("$", v); err != nil {
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
		Conclusion:  stripCites(w.Conclusion),
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
			Statement:     stripCites(f.Statement),
			Status:        claims.Status(f.Status),
			Confidence:    c,
			Explanation:   stripCites(f.Explanation),
			EvidenceIDs:   stripAll(f.EvidenceIDs),
			TimeSensitive: f.TimeSensitive,
		})
	}
	for _, e := range w.Evidence {
		pe := claims.ProviderEvidence{
			ID:            stripCites(e.ID),
			URL:           stripCites(e.URL),
			Title:         stripCites(e.Title),
			Publisher:     stripCites(e.Publisher),
			Excerpt:       stripCites(e.Excerpt),
			Relationship:  claims.Relationship(e.Relationship),
			SourceType:    stripCites(e.SourceType),
			QualityReason: stripCites(e.QualityReason),
		}
		if e.PublishedAt != nil {
			s := stripCites(*e.PublishedAt)
			pe.PublishedAt = &s
		}
		a.Evidence = append(a.Evidence, pe)
	}
	for _, c := range w.Conflicts {
		a.Conflicts = append(a.Conflicts, claims.Conflict{Summary: stripCites(c.Summary), EvidenceIDs: stripAll(c.EvidenceIDs)})
	}
	for _, l := range w.Limitations {
		if l = stripCites(l); l != "" {
			a.Limitations = append(a.Limitations, l)
		}
	}
	return a, nil
}

func stripAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, stripCites(s))
	}
	return out
}

func isPrivateUse(r rune) bool { return r >= 0xE000 && r <= 0xF8FF }

// stripCites removes private-use citation markers (U+E000–U+F8FF, with the
// "cite…turnNsearchM" text between them) from a model string. Where a
// marker stood between words one space remains; before punctuation or at
// either end of the string none does.
func stripCites(s string) string {
	if !strings.ContainsFunc(s, isPrivateUse) {
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
		case isPrivateUse(r):
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
