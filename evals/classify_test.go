package evals

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
)

// An attempt whose model requests never reached the provider (the
// proxy answered them itself: a name that did not resolve, a refused
// connection) is unreachable, not provider_error, which evals.md defines
// as the provider answering with an error.
func TestClassifyTellsUnreachableFromProviderError(t *testing.T) {
	request := func(status int, msg string) fixture.ModelRequest {
		return fixture.ModelRequest{Usage: pricing.Usage{Model: "m", Error: msg}, Status: status}
	}
	proxyDown := request(502, "agentvcr proxy: upstream https://api.example.com failed: dial tcp: lookup api.example.com: no such host")
	overloaded := request(529, "overloaded_error: Overloaded")
	failed := func(ms ...fixture.ModelRequest) *fixture.Conversation {
		return &fixture.Conversation{Turns: []fixture.Turn{{Status: "failed"}}, ModelRequests: ms}
	}
	tests := []struct {
		name  string
		err   error
		conv  *fixture.Conversation
		all   []fixture.ModelRequest
		class string
		says  string
	}{
		{"the provider answered an error", nil, failed(overloaded), nil, ProviderError, "after the model's provider answered with an error: m: 529 overloaded_error"},
		{"the provider was not reached", nil, failed(proxyDown), nil, Unreachable, "before its request reached the model's provider: m: 502 agentvcr proxy: upstream"},
		{"both: the provider's answer counts", nil, failed(proxyDown, overloaded), nil, ProviderError, "m: 529 overloaded_error"},
		{"no conversation, not reached", errors.New("the agent did not answer"), nil, []fixture.ModelRequest{proxyDown}, Unreachable, "the agent did not answer; requests did not reach the model's provider: m: 502 agentvcr proxy:"},
		{"no conversation, provider error", errors.New("the agent did not answer"), nil, []fixture.ModelRequest{overloaded}, ProviderError, "the model's provider answered with errors: m: 529"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := newAttemptT("classify", t.TempDir())
			if tt.err != nil {
				at.Errorf("%s", tt.err.Error())
			}
			class, msg := classify(t.Context(), at, HarnessError, tt.err, tt.conv, tt.all, false)
			if class != tt.class || !strings.Contains(msg, tt.says) {
				t.Fatalf("classify = %s, %q; want %s, containing %q", class, msg, tt.class, tt.says)
			}
		})
	}
}

// The cost summary names the others' cost only when there are others:
// "the others $0.0000" after every request of unknown cost says there
// were.
func TestCostSummaryNamesOthersOnlyWhenThereAreAny(t *testing.T) {
	run := func(c Cost) *Report {
		return &Report{Runs: []Summary{{Eval: "e", Variant: "baseline", Cost: c}}, UnknownRequests: c.UnpricedRequests, PricedCostUSD: c.PricedAgentUSD}
	}
	tests := []struct {
		name      string
		rep       *Report
		want, not []string
	}{
		{"every request unknown", run(Cost{UnpricedRequests: 2, ModelRequests: 2, Unpriced: []string{"it failed before it reported its usage: agentvcr proxy: upstream failed"}}),
			[]string{"agent unknown (2 requests: it failed before it reported its usage: agentvcr proxy: upstream failed)", "total cost: unknown (2 requests of unknown cost)"},
			[]string{"the others", ": :"}},
		{"some priced", run(Cost{UnpricedRequests: 1, ModelRequests: 3, PricedAgentUSD: 0.25, Unpriced: []string{"no usage reported"}}),
			[]string{"agent unknown (1 requests: no usage reported; the others $0.2500)", "total cost: unknown (1 requests of unknown cost; the others cost $0.2500)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.rep.WriteText(&b)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("the report does not say %q:\n%s", w, b.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("the report says %q:\n%s", n, b.String())
				}
			}
		})
	}
}
