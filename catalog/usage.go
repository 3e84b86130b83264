package catalog

import (
	"errors"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
)

// Usage is what a cell's run used and cost, as the run reported it.
type Usage struct {
	// Available says the figures are known: the run reported tokens, or
	// a receipt proves them. Zero or missing usage is unavailable, never
	// free, but for a request nothing was billed for (one the proxy
	// answered itself, or the provider refused: pricing.Usage.NotBilled).
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
// run that made no model request the proxy saw, or a request without
// usage (pricing.ErrNoUsage), makes the usage unavailable, unless a
// receipt says what it was.
func UsageOf(ms []fixture.ModelRequest, prices pricing.Table, receipt *Receipt) Usage {
	if receipt != nil {
		cost := receipt.CostUSD
		return Usage{Available: true, InputTokens: receipt.InputTokens, OutputTokens: receipt.OutputTokens, CostUSD: &cost, Source: "receipt"}
	}
	if len(ms) == 0 {
		return Usage{Reason: "the run made no model request the proxy saw"}
	}
	var total pricing.Total
	for _, m := range ms {
		usd, err := prices.Cost(m.Usage)
		if errors.Is(err, pricing.ErrNoUsage) {
			return Usage{Reason: "a model request's usage is unknown: " + err.Error()}
		}
		total.Add(m.Usage, usd, err)
	}
	u := Usage{Available: true, InputTokens: total.InputTokens, OutputTokens: total.OutputTokens, CostUSD: total.USD(), Source: "proxy"}
	if len(total.Unpriced) > 0 {
		u.Unpriced = total.Unpriced[0].Error()
	}
	return u
}
