package agentevals_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
)

// supportEval is an eval graded from the Slack thread, as docs/evals.md
// shows one (which go test ./docs compiles), here over the reference
// agent, a cases file of the test's and the model from up.
func supportEval(up *fakeai.Server, cases string) evals.Eval {
	supportApp := agentevals.App
	e := evals.Eval{
		Name:  "support",
		App:   supportApp("eval-test-key"), // a fixture.App: a fresh one per attempt
		Cases: evals.FromJSONL(cases),
		Input: func(c evals.Case) fixture.Input { return fixture.SlackMention(c.Text()) },
		// The end state the agent left behind, not its transcript: what it
		// posted in the thread (the Slack mock), what it stored (the
		// database at r.Fixture.DatabaseURL()), what its routes say.
		Grade: func(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
			correct := 0.0
			for _, m := range r.Fixture.Slack().Messages(fixture.Channel) {
				if m.BotID != "" && strings.Contains(m.Text, c.ExpectedText()) {
					correct = 1
				}
			}
			return map[string]float64{"correct": correct}, nil
		},
		Metrics: []evals.Metric{{ID: "correct", Kind: evals.Binary}},
		Prices: pricing.Table{ // the agent's models, its router's and titles' too
			"anthropic/claude-sonnet-4.5": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
			"anthropic/claude-haiku-4.5":  {InputPerMTok: 1, OutputPerMTok: 5, CacheReadPerMTok: 0.10, CacheWritePerMTok: 1.25},
		},
		Variants: []evals.Variant{{Name: "haiku", Env: map[string]string{"AGENT_MODEL": "anthropic/claude-haiku-4.5"}}},
	}
	e.Options = []fixture.Option{fixture.Upstream(up.Transport())}
	return e
}

// A graded eval with a variant runs end to end under a cost ceiling, and
// its means and difference are the answer key's.
func TestASupportEvalWithAVariant(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 4) // two cases, the baseline and the variant
	refund := fakeai.Agent{Name: "refund", Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), "refund") }}
	up.Respond(refund, fakeai.Text("They have 30 days."), fakeai.Text("Within 30 days."))
	up.Respond(loop, fakeai.Text("Billing handles it."), fakeai.Text("Billing does."))
	path := casesFile(t, `{"id":"refund-window","input":"How long do customers have to ask for a refund?","expected":"30 days"}`,
		`{"id":"escalation","input":"Who handles a chargeback?","expected":"billing","tags":["web"]}`)
	code, stdout, stderr := command(t, []string{"--out", t.TempDir(), "--variant", "haiku", "--concurrency", "1", "--max-cost-usd", "2"}, supportEval(up, path))
	if code != 0 || !strings.Contains(stdout, "support / haiku against the baseline:") ||
		!strings.Contains(stdout, "; ceiling $2.00 not reached") || strings.Contains(stdout, "unknown") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// "billing" is lower case in the case, "Billing" in the answers: the
	// grader is strict about it, and both variants score 0.5.
	if strings.Count(stdout, "correct  binary  0.500") != 2 || !strings.Contains(stdout, "correct  0.500     0.500    +0.000") {
		t.Fatalf("stdout:\n%s", stdout)
	}
}
