package evals_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// An eval of the reference agent on two cases, with the scripted model
// in place of the real one (a wiring test of the eval itself): it gets
// one case right, and the summary says so.
func ExampleRun() {
	e := evals.Eval{
		Name:    "arithmetic",
		App:     agentevals.App("no-key-needed"),
		Options: []fixture.Option{fixture.ScriptedModel()},
		Cases:   evals.FromJSONL("testdata/arithmetic.jsonl"),
		// Each attempt's fresh app gets its script: the router, the
		// title and the answer, "42" to both questions.
		Setup: func(_ context.Context, f *fixture.Fixture, c evals.Case) error {
			f.Model().Respond(fakeai.Agent{Name: "router", Purpose: "structured"},
				fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}))
			f.Model().Respond(fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }},
				fakeai.Text("Arithmetic"))
			f.Model().Respond(fakeai.Agent{Name: "agent", Purpose: "agent"}, fakeai.Text("42"))
			return nil
		},
		Input:   func(c evals.Case) fixture.Input { return fixture.SlackMention(c.Text()) },
		Grade:   agentevals.Grade,
		Metrics: agentevals.Answers("").Metrics,
	}
	out, err := os.MkdirTemp("", "evals-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	rep, err := evals.Run(context.Background(), evals.Config{Out: out, Reps: 2}, e)
	if err != nil {
		panic(err)
	}
	s := rep.Runs[0]
	fmt.Printf("%d of %d attempts scored\n", s.Scored, s.Attempts)
	for _, m := range s.Metrics {
		fmt.Printf("%s: %.2f\n", m.ID, *m.Mean)
	}
	// Output:
	// 4 of 4 attempts scored
	// correct: 0.50
	// replied: 1.00
	// tool_calls: 0.00
}

func ExampleFromJSONL() {
	cases, err := evals.FromJSONL("testdata/arithmetic.jsonl")()
	if err != nil {
		panic(err)
	}
	for _, c := range cases {
		fmt.Printf("%s (%s:%d): %q expects %q\n", c.ID, c.File, c.Line, c.Text(), c.ExpectedText())
	}
	// Output:
	// sum (testdata/arithmetic.jsonl:1): "What is 17 + 26?" expects "43"
	// product (testdata/arithmetic.jsonl:2): "What is 6 × 7?" expects "42"
}

// A program's cmd/evals/main.go: the command line of recorder eval, for
// its own evals.
func ExampleMain() {
	evals.Main(agentevals.Answers(os.Getenv("AI_GATEWAY_API_KEY")))
}
