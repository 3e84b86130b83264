package pricing_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/pricing"
)

var table = pricing.Table{
	"full": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75, PerKServerTool: map[string]float64{"web_search": 10}},
	"bare": {InputPerMTok: 1, OutputPerMTok: 5},
}

// Every rule of a request's cost: priced when its usage is reported and
// its price has a figure for all of it, otherwise unpriced with the
// reason, never zero.
func TestCost(t *testing.T) {
	tests := []struct {
		name string
		u    pricing.Usage
		want float64
		// is is the sentinel the reason must be, why a word of it
		// (empty: priced).
		is  error
		why string
	}{
		{name: "input and output", u: pricing.Usage{Model: "bare", InputTokens: 1000, OutputTokens: 100}, want: (1000*1 + 100*5) / 1e6},
		{name: "cache reads and writes out of the input, server tools per thousand",
			u:    pricing.Usage{Model: "full", InputTokens: 12000, OutputTokens: 800, CacheReadTokens: 8000, CacheWriteTokens: 1000, ServerTools: map[string]int{"web_search": 2}},
			want: (3000*3+800*15+8000*0.30+1000*3.75)/1e6 + 2*10.0/1000},
		{name: "a failure with usage is priced", u: pricing.Usage{Model: "bare", InputTokens: 1000, OutputTokens: 10, Error: "stream_cut"}, want: (1000*1 + 10*5) / 1e6},
		{name: "in flight", u: pricing.Usage{Model: "bare", InFlight: true}, is: pricing.ErrIncomplete, why: "still in flight"},
		{name: "failed before usage", u: pricing.Usage{Model: "bare", Error: "overloaded_error"}, is: pricing.ErrIncomplete, why: "failed before it reported its usage: overloaded_error"},
		{name: "failed before usage, model unpriced too", u: pricing.Usage{Model: "other", Error: "overloaded_error"}, is: pricing.ErrIncomplete, why: "failed before"},
		{name: "ended well with zero usage", u: pricing.Usage{Model: "bare"}, is: pricing.ErrNoUsage, why: "no usage reported"},
		{name: "no price for the model", u: pricing.Usage{Model: "other", InputTokens: 10, OutputTokens: 1}, why: `no price for model "other"`},
		{name: "cache reads without a price", u: pricing.Usage{Model: "bare", InputTokens: 10, OutputTokens: 1, CacheReadTokens: 5}, why: "no cache-read price"},
		{name: "cache writes without a price", u: pricing.Usage{Model: "bare", InputTokens: 10, OutputTokens: 1, CacheWriteTokens: 5}, why: "no cache-write price"},
		{name: "fewer input tokens than cache", u: pricing.Usage{Model: "full", InputTokens: 10, OutputTokens: 1, CacheReadTokens: 8, CacheWriteTokens: 8}, why: "fewer input tokens than cache tokens"},
		{name: "a server tool without a price", u: pricing.Usage{Model: "full", InputTokens: 10, OutputTokens: 1, ServerTools: map[string]int{"web_fetch": 1}}, why: `no price for server tool "web_fetch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			usd, err := table.Cost(tt.u)
			if tt.why == "" {
				if err != nil || usd != tt.want || usd == 0 {
					t.Fatalf("Cost = %g, %v; want %g", usd, err, tt.want)
				}
				return
			}
			if err == nil || usd != 0 || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Cost = %g, %v; want unpriced: %s", usd, err, tt.why)
			}
			for _, sentinel := range []error{pricing.ErrNoUsage, pricing.ErrIncomplete} {
				want := tt.is != nil && (sentinel == tt.is || sentinel == pricing.ErrNoUsage)
				if errors.Is(err, sentinel) != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", err, sentinel, !want, want)
				}
			}
			if tt.u.Reported() == errors.Is(err, pricing.ErrNoUsage) {
				t.Errorf("Reported() = %v, but the reason %v", tt.u.Reported(), err)
			}
		})
	}
}

// A request that reported no usage and that NotBilled says nothing was
// billed for (the proxy answered it, the provider refused it) is a known
// zero, whatever its model's price; one with usage is priced by it, and
// one in flight is still unknown.
func TestCostNotBilled(t *testing.T) {
	const proxied, refused = "the proxy answered it itself: it never reached the provider", "the provider refused it with HTTP 529: providers bill no request they refuse"
	tests := []struct {
		name string
		u    pricing.Usage
		want float64
		is   error // the sentinel of the reason; nil: priced
	}{
		{name: "answered by the proxy", u: pricing.Usage{Model: "bare", Error: "api_error: Internal server error", NotBilled: proxied}},
		{name: "refused by the provider", u: pricing.Usage{Model: "bare", Error: "overloaded_error: Overloaded", NotBilled: refused}},
		{name: "refused, model unpriced", u: pricing.Usage{Model: "other", Error: "overloaded_error: Overloaded", NotBilled: refused}},
		{name: "refused, ended without an error", u: pricing.Usage{Model: "bare", NotBilled: refused}},
		{name: "with usage, priced by it", u: pricing.Usage{Model: "bare", InputTokens: 1000, OutputTokens: 10, Error: "stream_cut", NotBilled: refused}, want: (1000*1 + 10*5) / 1e6},
		{name: "in flight", u: pricing.Usage{Model: "bare", InFlight: true, NotBilled: proxied}, is: pricing.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			usd, err := table.Cost(tt.u)
			if tt.is != nil {
				if !errors.Is(err, tt.is) || usd != 0 {
					t.Fatalf("Cost = %g, %v; want unpriced: %v", usd, err, tt.is)
				}
				return
			}
			if err != nil || usd != tt.want {
				t.Fatalf("Cost = %g, %v; want %g, nil", usd, err, tt.want)
			}
			total := table.Sum(pricing.Usage{Model: "bare", InputTokens: 1000, OutputTokens: 100}, tt.u)
			if got := total.USD(); got == nil || *got != (1000*1+100*5)/1e6+tt.want || total.Requests != 2 {
				t.Fatalf("Sum with a priced request: USD() = %v, %d requests, unpriced %v; want known", got, total.Requests, total.Reasons())
			}
		})
	}
}

// A sum with one unpriced request has no total, only the part known;
// its tokens, reasons and counts are still there.
func TestSum(t *testing.T) {
	tests := []struct {
		name       string
		us         []pricing.Usage
		usd        *float64
		priced     float64
		input      int
		reasons    []string
		incomplete int
	}{
		{name: "nothing costs nothing", usd: ptr(0)},
		{name: "every request priced", us: []pricing.Usage{{Model: "bare", InputTokens: 1000, OutputTokens: 100}, {Model: "bare", InputTokens: 2000, OutputTokens: 100}},
			usd: ptr((3000*1 + 200*5) / 1e6), priced: (3000*1 + 200*5) / 1e6, input: 3000},
		{name: "one unpriced", us: []pricing.Usage{{Model: "bare", InputTokens: 1000, OutputTokens: 100}, {Model: "other", InputTokens: 5, OutputTokens: 1}, {Model: "other", InputTokens: 5, OutputTokens: 1}},
			priced: (1000*1 + 100*5) / 1e6, input: 1010, reasons: []string{`no price for model "other"`}},
		{name: "failed and in flight", us: []pricing.Usage{{Model: "bare", InputTokens: 1000, OutputTokens: 100}, {Model: "bare", Error: "cut"}, {Model: "bare", InFlight: true}, {Model: "bare"}},
			priced: (1000*1 + 100*5) / 1e6, input: 1000, incomplete: 2,
			reasons: []string{"it failed before it reported its usage: cut", "still in flight: its usage is not known yet", "no usage reported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := table.Sum(tt.us...)
			usd := got.USD()
			if (usd == nil) != (tt.usd == nil) || usd != nil && *usd != *tt.usd {
				t.Errorf("USD() = %v, want %v", usd, tt.usd)
			}
			if got.Requests != len(tt.us) || got.PricedUSD != tt.priced || got.InputTokens != tt.input {
				t.Errorf("%d requests, %g priced, %d input tokens; want %d, %g, %d", got.Requests, got.PricedUSD, got.InputTokens, len(tt.us), tt.priced, tt.input)
			}
			if !slices.Equal(got.Reasons(), tt.reasons) {
				t.Errorf("Reasons() = %q, want %q", got.Reasons(), tt.reasons)
			}
			if n := got.Count(pricing.ErrIncomplete); n != tt.incomplete {
				t.Errorf("Count(ErrIncomplete) = %d, want %d", n, tt.incomplete)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }
