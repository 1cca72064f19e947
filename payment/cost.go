package payment

// CostPrices are what the providers behind paid calls charge us, for the
// per-order cost accounting (admin views). Prices are integer micro-USD;
// token prices are per million tokens. The zero value records zero cost.
type CostPrices struct {
	// InputPerMillion is the price of one million uncached input tokens.
	InputPerMillion int64
	// CachedInputPerMillion is the price of one million cached input
	// tokens.
	CachedInputPerMillion int64
	// OutputPerMillion is the price of one million output tokens
	// (reasoning included).
	OutputPerMillion int64
	// PerSearchCall is the price of one web search tool call.
	PerSearchCall int64
}

// Cost returns the cost of u in micro-USD, rounded up to a whole micro-USD.
// Cached tokens are counted within InputTokens, as providers report them.
func (p CostPrices) Cost(u Usage) int64 {
	uncached := int64(u.InputTokens) - int64(u.CachedInputTokens)
	if uncached < 0 {
		uncached = 0
	}
	perMillion := uncached*p.InputPerMillion + int64(max(u.CachedInputTokens, 0))*p.CachedInputPerMillion +
		int64(max(u.OutputTokens, 0))*p.OutputPerMillion
	cost := (perMillion + 999_999) / 1_000_000
	return cost + int64(max(u.SearchCalls, 0))*p.PerSearchCall
}
