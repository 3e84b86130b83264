package catalog

import (
	"github.com/agentvcr/agentvcr/fixture"
)

// Usage is what a cell's run used and cost, as the run reported it.
type Usage struct {
	// Available says the figures are known: the run reported tokens, or
	// a receipt proves them. Zero or missing usage is unavailable, never
	// free.
	Available    bool   `json:"available"`
	Reason       string `json:"reason,omitempty"` // why not
	InputTokens  int    `json:"inputTokens"`
	OutputTokens int    `json:"outputTokens"`
	// CostUSD is nil when a request is unpriced (Unpriced says why).
	CostUSD  *float64 `json:"costUsd"`
	Unpriced string   `json:"unpriced,omitempty"`
	// Source is where the figures came from: "proxy" (the responses'
	// usage) or "receipt".
	Source string `json:"source,omitempty"`
}

// Receipt is the provider's own account of what a run cost: the one
// thing that can prove a run was free.
type Receipt struct {
	ID           string  `json:"id"`
	Provider     string  `json:"provider"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
}

// UsageOf sums what the model requests reported, priced by prices. A
// run that reported no tokens at all, or a request without usage, makes
// the usage unavailable, unless a receipt says what it was.
func UsageOf(ms []fixture.ModelRequest, prices fixture.Pricing, receipt *Receipt) Usage {
	if receipt != nil {
		cost := receipt.CostUSD
		return Usage{Available: true, InputTokens: receipt.InputTokens, OutputTokens: receipt.OutputTokens, CostUSD: &cost, Source: "receipt"}
	}
	u := Usage{Source: "proxy"}
	if len(ms) == 0 {
		u.Reason = "the run made no model request the proxy saw"
		u.Source = ""
		return u
	}
	total := 0.0
	for _, m := range ms {
		if m.InputTokens+m.OutputTokens == 0 {
			u.Reason = "a model request reported no usage"
			if m.Error != "" {
				u.Reason += " (it failed: " + m.Error + ")"
			}
			return Usage{Reason: u.Reason}
		}
		u.InputTokens += m.InputTokens
		u.OutputTokens += m.OutputTokens
		usd, why := prices.Cost(m)
		if why != "" && u.Unpriced == "" {
			u.Unpriced = why
		}
		total += usd
	}
	u.Available = true
	if u.Unpriced == "" {
		u.CostUSD = &total
	}
	return u
}
