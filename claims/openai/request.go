package openai

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

// MaxAllowedDomains is the largest filters.allowed_domains list the API
// accepts.
const MaxAllowedDomains = 100

// SchemaName is the text.format name of the analysis schema.
const SchemaName = analysis.SchemaName

// AnalysisSchema returns a copy of the strict JSON Schema that the provider
// sends as the structured-output format and validates the model's output
// against.
func AnalysisSchema() []byte { return analysis.Schema() }

// NormalizeDomain returns the hostname form the web_search filter expects:
// lowercase, without scheme, userinfo, path, query, port, leading "*." or
// trailing dot, IDNA names in punycode. ok is false when nothing valid
// remains.
func NormalizeDomain(s string) (string, bool) { return analysis.NormalizeDomain(s) }

// buildRequest makes the request parameters for q and returns the
// limitations the request itself implies (trimmed or dropped domains).
func (p *Provider) buildRequest(q *claims.ProviderQuery, now time.Time) (responses.ResponseNewParams, []string, error) {
	allowed, sentAllowed, blocked, limits := analysis.Domains(q, MaxAllowedDomains)
	qq, toolCalls, outTokens, err := analysis.Budget(q)
	if err != nil {
		return responses.ResponseNewParams{}, nil, fmt.Errorf("openai: %w", err)
	}

	tool := responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}
	if len(sentAllowed) > 0 {
		tool.Filters.AllowedDomains = sentAllowed
	}
	if p.opts.SendBlockedDomains && len(blocked) > 0 {
		// Not typed in the SDK (see Options.SendBlockedDomains).
		tool.Filters.SetExtraFields(map[string]any{"blocked_domains": blocked})
	}
	loc := responses.WebSearchToolUserLocationParam{Type: "approximate"}
	if u := p.opts.UserLocation; u != nil {
		loc.Country = opt(u.Country)
		loc.Region = opt(u.Region)
		loc.City = opt(u.City)
		loc.Timezone = opt(u.Timezone)
	}
	tool.UserLocation = loc

	format := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: SchemaName, Strict: param.NewOpt(true)}
	// The typed Schema is a map, which would sort the properties; strict
	// mode answers in the schema's property order, so the document goes as
	// written.
	format.SetExtraFields(map[string]any{"schema": json.RawMessage(analysis.Schema())})
	params := responses.ResponseNewParams{
		Model:        p.set.Model,
		Instructions: param.NewOpt(analysis.Instructions),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfMessage: &responses.EasyInputMessageParam{
				Role:    responses.EasyInputMessageRoleUser,
				Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(analysis.UserMessage(&qq, now, allowed, blocked, toolCalls))},
			}},
		}},
		Tools:           []responses.ToolUnionParam{{OfWebSearch: &tool}},
		ToolChoice:      responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsRequired)},
		Include:         []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources},
		MaxToolCalls:    param.NewOpt(int64(toolCalls)),
		MaxOutputTokens: param.NewOpt(int64(outTokens)),
		Store:           param.NewOpt(false),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: format,
		}},
	}
	if !p.opts.OmitReasoning {
		params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(p.opts.ReasoningEffort)}
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
