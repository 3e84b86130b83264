package pricing_test

import (
	"fmt"

	"github.com/agentvcr/agentvcr/pricing"
)

func ExampleTable_Sum() {
	prices := pricing.Table{"anthropic/claude-sonnet-4.5": {InputPerMTok: 3, OutputPerMTok: 15}}
	total := prices.Sum(
		pricing.Usage{Model: "anthropic/claude-sonnet-4.5", InputTokens: 10000, OutputTokens: 1000},
		pricing.Usage{Model: "anthropic/claude-sonnet-4.5", Error: "overloaded_error"},
	)
	fmt.Printf("known part $%.3f, total %v\n", total.PricedUSD, total.USD())
	fmt.Println(total.Reasons())
	// Output:
	// known part $0.045, total <nil>
	// [it failed before it reported its usage: overloaded_error]
}
