package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

// parseMessage turns the accumulated turn into a ProviderResponse. When
// the answer stopped short or its output is unusable the partial response
// (search calls, citations, usage, raw payload) is returned with the
// error.
func (p *Provider) parseMessage(t turn) (*claims.ProviderResponse, error) {
	m := t.msg
	if m.ID == "" {
		return nil, badOutput("", "the message has no id")
	}
	u := m.Usage
	pr := &claims.ProviderResponse{
		Provider:    ProviderName,
		Model:       string(m.Model),
		ResponseID:  m.ID,
		SearchCalls: []claims.SearchCall{},
		Citations:   []claims.Citation{},
		Raw:         t.raw,
		Usage: claims.Usage{
			// input_tokens excludes the cached parts; the engine's input
			// count includes them, as OpenAI's does.
			InputTokens:       int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			CachedInputTokens: int(u.CacheReadInputTokens),
			OutputTokens:      int(u.OutputTokens),
		},
	}
	if pr.Model == "" {
		pr.Model = p.set.Model
	}

	var text strings.Builder
	var limits []string
	queries := map[string][]string{}
	citedText := map[string][]string{} // URL → cited_text, in order
	cited := map[string]bool{}
	for _, b := range m.Content {
		switch b.Type {
		case "server_tool_use":
			queries[b.ID] = toolQueries(b)
		case "web_search_tool_result":
			call, code := searchCall(b, queries)
			pr.SearchCalls = append(pr.SearchCalls, call)
			if code != "" {
				limits = append(limits, fmt.Sprintf("The provider's web search %s failed: %s.", call.ID, code))
			}
		case "text":
			text.WriteString(b.Text)
			for _, c := range b.Citations {
				if c.Type != "web_search_result_location" || c.URL == "" {
					continue
				}
				url := analysis.StripCites(c.URL)
				if t := strings.TrimSpace(analysis.StripCites(c.CitedText)); t != "" {
					citedText[url] = append(citedText[url], t)
				}
				if !cited[url] {
					cited[url] = true
					pr.Citations = append(pr.Citations, claims.Citation{URL: url, Title: analysis.StripCites(c.Title)})
				}
			}
		}
	}
	if n := int(u.ServerToolUse.WebSearchRequests); n > len(pr.SearchCalls) {
		limits = append(limits, fmt.Sprintf("The provider billed %d web searches but reported results for %d.", n, len(pr.SearchCalls)))
	}

	switch m.StopReason {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
	default:
		return pr, providerErr(claims.ProviderBadOutput, 0, &ResponseError{MessageID: m.ID, StopReason: string(m.StopReason)})
	}
	js, ok := jsonObject(text.String())
	if !ok {
		return pr, badOutput(m.ID, "the answer holds no JSON object")
	}
	a, err := p.validator.Parse(js)
	if err != nil {
		return pr, badOutput(m.ID, "analysis: %v", err)
	}
	a.Evidence = withCitations(a.Evidence, pr.Citations, citedText)
	a.Limitations = append(a.Limitations, limits...)
	pr.Analysis = *a
	return pr, nil
}

// withCitations applies the text citations to the evidence: an evidence
// item without an excerpt takes the first cited_text of its URL, and each
// cited URL that no evidence item names becomes a "context" item whose
// excerpt is its cited text (the answer cited it without saying how it
// bears on the claim, so it cannot count as support or contradiction).
func withCitations(ev []claims.ProviderEvidence, cites []claims.Citation, citedText map[string][]string) []claims.ProviderEvidence {
	named := map[string]bool{}
	for i := range ev {
		named[ev[i].URL] = true
		if strings.TrimSpace(ev[i].Excerpt) == "" && len(citedText[ev[i].URL]) > 0 {
			ev[i].Excerpt = citedText[ev[i].URL][0]
		}
	}
	n := 0
	for _, c := range cites {
		if named[c.URL] || len(citedText[c.URL]) == 0 {
			continue
		}
		n++
		ev = append(ev, claims.ProviderEvidence{
			ID: fmt.Sprintf("cite%d", n), URL: c.URL, Title: c.Title, Excerpt: citedText[c.URL][0],
			Relationship: claims.Context, SourceType: "web",
			QualityReason: "Cited in the provider's answer text; the answer did not say how it bears on the claim.",
		})
	}
	return ev
}

// jsonObject returns the JSON object in an answer: the text from its first
// "{" to its last "}", so that a code fence or a stray sentence around it
// does not matter (the schema check decides whether it is usable).
func jsonObject(s string) (string, bool) {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return "", false
	}
	return s[i : j+1], true
}

// toolQueries reads the query of a server_tool_use block.
func toolQueries(b sdk.ContentBlockUnion) []string {
	var in struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(b.Input, &in) != nil {
		return nil
	}
	if q := strings.TrimSpace(analysis.StripCites(in.Query)); q != "" {
		return []string{q}
	}
	return nil
}

// searchCall reports one web_search_tool_result block as a search action
// with its results as sources; code is the error_code of a failed search.
func searchCall(b sdk.ContentBlockUnion, queries map[string][]string) (call claims.SearchCall, code string) {
	call = claims.SearchCall{ID: b.ToolUseID, Action: claims.ActionSearch, Queries: queries[b.ToolUseID]}
	if c := string(b.Content.ErrorCode); c != "" {
		return call, c
	}
	for _, r := range b.Content.OfWebSearchResultBlockArray {
		if r.URL == "" {
			continue
		}
		call.Sources = append(call.Sources, claims.SourceRef{URL: analysis.StripCites(r.URL), Title: analysis.StripCites(r.Title)})
	}
	return call, ""
}
