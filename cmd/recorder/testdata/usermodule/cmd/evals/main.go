// Command evals is a user's evals program, in a module of its own: the
// agent is its binary, the model's key its own variable.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/fixture"
)

func main() {
	key := os.Getenv("MYAGENT_API_KEY")
	evalcmd.Main(evals.Eval{
		Name: "greetings",
		App: fixture.App{Name: "myagent", Command: []string{"./bin/myagent"}, AddrEnv: "PORT",
			Routes: fixture.JuniorRoutes(), Env: map[string]string{"MYAGENT_API_KEY": key}},
		Cases: evals.FromJSONL("cases.jsonl"),
		Input: func(c evals.Case) fixture.Input { return fixture.SlackMention(c.Text()) },
		Preflight: func(context.Context, evals.Case) error {
			if key == "" {
				return fmt.Errorf("%w: MYAGENT_API_KEY is not set", evals.ErrMissingCredential)
			}
			return nil
		},
		Grade: func(_ context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
			for _, m := range r.Fixture.Slack().Messages(fixture.Channel) {
				if m.BotID != "" && strings.Contains(strings.ToLower(m.Text), c.ExpectedText()) {
					return map[string]float64{"correct": 1}, nil
				}
			}
			return map[string]float64{"correct": 0}, nil
		},
		Metrics:  []evals.Metric{{ID: "correct", Kind: evals.Binary, Description: "the reply says it"}},
		Variants: []evals.Variant{{Name: "terse", Env: map[string]string{"MYAGENT_STYLE": "terse"}}},
	})
}
