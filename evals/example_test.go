package evals_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/fixture"
)

// An eval of a user's agent: a binary that serves Junior's routes, its
// answers graded from the Slack thread it replied in. (It needs
// PostgreSQL and the agent's model, so it is not run here.)
func ExampleRun() {
	e := evals.Eval{
		Name: "answers",
		App: fixture.App{Name: "my-agent", Command: []string{"./bin/agent"}, AddrEnv: "PORT",
			Routes: fixture.JuniorRoutes(), Env: map[string]string{"MODEL_API_KEY": os.Getenv("MODEL_API_KEY")}},
		Cases: evals.FromJSONL("testdata/arithmetic.jsonl"),
		Input: func(c evals.Case) fixture.Input { return fixture.SlackMention(c.Text()) },
		Grade: func(_ context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
			correct := 0.0
			for _, m := range r.Fixture.Slack().Messages(fixture.Channel) {
				if m.BotID != "" && strings.Contains(m.Text, c.ExpectedText()) {
					correct = 1
				}
			}
			return map[string]float64{"correct": correct}, nil
		},
		Metrics: []evals.Metric{{ID: "correct", Kind: evals.Binary, Description: "the reply holds the expected answer"}},
	}
	rep, err := evals.Run(context.Background(), evals.Config{Out: "eval-results", Reps: 3}, e)
	if err != nil {
		log.Fatal(err)
	}
	rep.WriteText(os.Stdout)
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

// The merge of a sharded run: each of three CI jobs ran
// evals.Run with Config{Shard: evals.Shard{Index: i, Of: 3}, RunID: id,
// Out: "shard-i"}, and a last job downloaded their results under
// "shards". (It needs the shards' results, so it is not run here.)
func ExampleMerge() {
	rep, err := evals.Merge(context.Background(), evals.Config{Out: "eval-results", Progress: os.Stderr}, "shards")
	if err != nil {
		log.Fatal(err) // a *evals.ConfigError names a missing, doubled or foreign shard
	}
	if c := rep.Ceiling; c != nil && !c.Held {
		fmt.Println("the run's cost ceiling did not hold")
	}
	rep.WriteText(os.Stdout)
}

func ExampleParseShard() {
	s, err := evals.ParseShard("2/3")
	fmt.Println(s.Index, s.Of, err)
	_, err = evals.ParseShard("4/3")
	fmt.Println(err)
	// Output:
	// 2 3 <nil>
	// shard "4/3": want i/n, from 1/n to n/n, such as 2/3
}
