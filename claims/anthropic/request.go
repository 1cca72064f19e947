package anthropic

import (
	"fmt"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

// outputInstructions ask for the analysis as plain JSON: the Messages API's
// structured outputs cannot be combined with citations, which this
// provider reads as excerpts, so the schema is stated in the prompt and
// the answer is validated against it.
const outputInstructions = `

Search the web before answering; never answer from memory alone.

Output: answer with exactly one JSON object and nothing else (no text before or after it, no code fence). It must validate against this JSON Schema; every property is required, and publishedAt is a string or null:
`

// systemPrompt is the shared instructions plus the output contract.
func systemPrompt() string {
	return analysis.Instructions + outputInstructions + string(analysis.Schema())
}

// buildRequest makes the request parameters for q and returns the
// limitations the request itself implies.
func (p *Provider) buildRequest(q *claims.ProviderQuery, now time.Time) (sdk.MessageNewParams, []string, error) {
	allowed, sentAllowed, blocked, limits := analysis.Domains(q, MaxAllowedDomains)
	qq, toolCalls, outTokens, err := analysis.Budget(q)
	if err != nil {
		return sdk.MessageNewParams{}, nil, fmt.Errorf("anthropic: %w", err)
	}
	tool := sdk.WebSearchTool20250305Param{MaxUses: param.NewOpt(int64(toolCalls))}
	switch {
	case len(sentAllowed) > 0:
		tool.AllowedDomains = sentAllowed
		if len(blocked) > 0 {
			limits = append(limits, "The search provider accepts allowed or blocked domains, not both: it was given the allowed domains, and the blocked domains are enforced only locally.")
		}
	case len(blocked) > 0:
		tool.BlockedDomains = blocked
	}
	if u := p.opts.UserLocation; u != nil {
		tool.UserLocation = sdk.UserLocationParam{Country: opt(u.Country), Region: opt(u.Region), City: opt(u.City), Timezone: opt(u.Timezone)}
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(p.set.Model),
		MaxTokens: int64(outTokens),
		System:    []sdk.TextBlockParam{{Text: systemPrompt()}},
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock(analysis.UserMessage(&qq, now, allowed, blocked, toolCalls))),
		},
		Tools: []sdk.ToolUnionParam{{OfWebSearchTool20250305: &tool}},
	}
	return params, limits, nil
}

// opt is an optional string param, omitted when empty.
func opt(s string) param.Opt[string] {
	if s == "" {
		return param.Opt[string]{}
	}
	return param.NewOpt(s)
}
