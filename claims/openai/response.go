package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

func badOutput(responseID, format string, args ...any) error {
	return providerErr(claims.ProviderBadOutput, 0, &OutputError{ResponseID: responseID, Reason: fmt.Sprintf(format, args...)})
}

// parseResponse turns the final Response of the stream into a
// ProviderResponse. On an in-band failure it returns the partial response
// (search calls, citations, usage, raw payload; empty analysis) together
// with the error.
func (p *Provider) parseResponse(r *responses.Response) (*claims.ProviderResponse, error) {
	if r.ID == "" || r.Status == "" {
		return nil, badOutput("", "the final response has no id or status")
	}
	pr := &claims.ProviderResponse{
		Provider:    ProviderName,
		Model:       string(r.Model),
		ResponseID:  r.ID,
		SearchCalls: []claims.SearchCall{},
		Citations:   []claims.Citation{},
		Raw:         json.RawMessage(r.RawJSON()),
		Usage: claims.Usage{
			InputTokens:       int(r.Usage.InputTokens),
			CachedInputTokens: int(r.Usage.InputTokensDetails.CachedTokens),
			OutputTokens:      int(r.Usage.OutputTokens),
		},
	}
	if pr.Model == "" {
		pr.Model = p.set.Model
	}

	var text, refusal strings.Builder
	var limits []string
	cited := map[string]bool{}
	for _, it := range r.Output {
		switch it.Type {
		case "web_search_call":
			ws := it.AsWebSearchCall()
			pr.SearchCalls = append(pr.SearchCalls, searchCall(ws))
			if ws.Status != "" && ws.Status != "completed" {
				limits = append(limits, fmt.Sprintf("The provider's web search call %s ended with status %q.", ws.ID, ws.Status))
			}
		case "message":
			if it.Role != "" && it.Role != "assistant" {
				continue
			}
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
					for _, a := range c.Annotations {
						if a.Type != "url_citation" || a.URL == "" {
							continue
						}
						u := analysis.StripCites(a.URL)
						if cited[u] {
							continue
						}
						cited[u] = true
						pr.Citations = append(pr.Citations, claims.Citation{URL: u, Title: analysis.StripCites(a.Title)})
					}
				case "refusal":
					refusal.WriteString(c.Refusal)
				}
			}
		}
	}

	if r.Status != responses.ResponseStatusCompleted {
		re := &ResponseError{ResponseID: r.ID, Status: string(r.Status), Reason: string(r.IncompleteDetails.Reason),
			Code: string(r.Error.Code), Message: analysis.StripCites(r.Error.Message)}
		return pr, classifyResponseError(re)
	}
	if strings.TrimSpace(text.String()) == "" {
		if s := strings.TrimSpace(refusal.String()); s != "" {
			return pr, badOutput(r.ID, "the model refused: %s", analysis.StripCites(s))
		}
		return pr, badOutput(r.ID, "the response has no output text")
	}
	a, err := p.validator.Parse(text.String())
	if err != nil {
		return pr, badOutput(r.ID, "analysis: %v", err)
	}
	a.Limitations = append(a.Limitations, limits...)
	pr.Analysis = *a
	return pr, nil
}

// searchCall reports one web_search_call faithfully: an absent action type
// is "search", the older "find" is "find_in_page", "queries" is preferred to
// the deprecated "query", non-URL sources are skipped, a null URL is "".
func searchCall(ws responses.ResponseFunctionWebSearch) claims.SearchCall {
	call := claims.SearchCall{ID: ws.ID, Action: claims.ActionSearch}
	a := ws.Action
	if a.Type != "" {
		call.Action = a.Type
	}
	if call.Action == "find" {
		call.Action = claims.ActionFindInPage
	}
	for _, q := range a.Queries {
		if q = strings.TrimSpace(analysis.StripCites(q)); q != "" {
			call.Queries = append(call.Queries, q)
		}
	}
	if len(call.Queries) == 0 {
		if q := strings.TrimSpace(analysis.StripCites(a.Query)); q != "" {
			call.Queries = []string{q}
		}
	}
	call.URL = analysis.StripCites(a.URL)
	call.Pattern = analysis.StripCites(a.Pattern)
	for _, s := range a.Sources {
		if s.URL == "" || (s.Type != "" && s.Type != "url") {
			continue
		}
		call.Sources = append(call.Sources, claims.SourceRef{URL: analysis.StripCites(s.URL)})
	}
	return call
}
