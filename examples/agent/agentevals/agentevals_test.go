package agentevals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

func TestMain(m *testing.M) {
	if os.Getenv(childGateway) != "" {
		evalProgram() // the eval program a process test runs: it exits
	}
	os.Exit(fixture.Main(m))
}

// answerKey is what the scripted model answers each case: right on six,
// wrong on four; the thread question is answered after reading the
// thread with the agent's tool.
var answerKey = map[string]struct {
	answer string
	right  bool
}{
	"minutes":       {"200", true},
	"weekday":       {"It will be Thursday.", true},
	"capital":       {"Canberra", true},
	"sum":           {"42", false},
	"launch-date":   {"March 12", true},
	"owner":         {"payments", false},
	"kibibytes":     {"2000", false},
	"plural":        {"mice", true},
	"sort":          {"9, 7, 2", false},
	"thread-author": {"U0TESTUSER", true},
}

// script answers every attempt of every case from a stand-in gateway
// (fakeai.NewServer posing as it): the router and the title for every
// conversation, and each case's question by the case's own agent, so
// that attempts running at once each get their own answer.
func script(t *testing.T, cases []evals.Case, attempts int) *fakeai.Server {
	t.Helper()
	up := fakeai.NewServer(t)
	router := fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	titler := fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	routed := fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"})
	for range len(cases) * attempts {
		up.Respond(router, routed)
		up.Respond(titler, fakeai.Text("A question"))
	}
	for _, c := range cases {
		question := inPrompt(c.Text())
		agent := fakeai.Agent{Name: c.ID, Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), question) }}
		answer := fakeai.Text(answerKey[c.ID].answer)
		if c.HasTag("tool") {
			answer = fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(answer)
		}
		for range attempts {
			up.Respond(agent, answer)
		}
	}
	return up
}

// inPrompt is a question as the agent's prompt carries it: in its
// current-instruction block, XML-escaped as Junior escapes it (the
// "owner" case's "team's" is "team&apos;s" there).
func inPrompt(question string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(question)
}

func cases(t *testing.T) []evals.Case {
	t.Helper()
	cs, err := agentevals.Answers("").Cases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 10 {
		t.Fatalf("%d cases; the example has 10", len(cs))
	}
	return cs
}

// The summary's means are the answer key's, however the eval is run:
// once, three times over, beside a variant, four attempts at once.
func TestTheMeansAreTheAnswerKeys(t *testing.T) {
	cs := cases(t)
	right := 0
	for _, c := range cs {
		if answerKey[c.ID].right {
			right++
		}
	}
	want := map[string]float64{"correct": float64(right) / 10, "replied": 1, "tool_calls": 0.1}
	for _, tc := range []struct {
		name string
		cfg  evals.Config
	}{
		{"once", evals.Config{}},
		{"two reps, a variant, four at once", evals.Config{Reps: 2, Variants: []string{"haiku"}, Concurrency: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := max(tc.cfg.Reps, 1) * (1 + len(tc.cfg.Variants))
			up := script(t, cs, runs)
			cfg := tc.cfg
			cfg.Out = t.TempDir()
			rep, err := evals.Run(context.Background(), cfg, agentevals.Answers("eval-test-key", fixture.Upstream(up.Transport())))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Runs) != 1+len(cfg.Variants) {
				t.Fatalf("%d summaries", len(rep.Runs))
			}
			for _, s := range rep.Runs {
				if s.Scored != 10*max(cfg.Reps, 1) || len(s.Excluded) != 0 {
					t.Errorf("%s: %d scored, excluded %v", s.Variant, s.Scored, s.Excluded)
				}
				for _, m := range s.Metrics {
					if m.Mean == nil || *m.Mean != want[m.ID] {
						t.Errorf("%s: %s mean %v, want %v", s.Variant, m.ID, m.Mean, want[m.ID])
					}
					// Every repetition scored the same: the interval is
					// the mean itself.
					if cfg.Reps > 1 && (m.CI95 == nil || m.CI95[0] != want[m.ID] || m.CI95[1] != want[m.ID]) {
						t.Errorf("%s: %s interval %v", s.Variant, m.ID, m.CI95)
					}
				}
				// The stand-in gateway's usage is estimated from sizes and
				// its model ids are the agent's: every request is priced.
				if s.Cost.AgentUSD == nil || *s.Cost.AgentUSD <= 0 || s.Cost.UnpricedRequests != 0 {
					t.Errorf("%s: cost %+v", s.Variant, s.Cost)
				}
			}
			for _, c := range rep.Comparisons {
				for _, d := range c.Metrics {
					if d.Diff == nil || *d.Diff != 0 {
						t.Errorf("%s: %s differs by %v", c.Variant, d.ID, d.Diff)
					}
				}
			}
			// The files say what the report says.
			var sum evals.Summary
			b, err := os.ReadFile(filepath.Join(cfg.Out, "answers", "baseline", "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sum); err != nil || sum.Scored != rep.Runs[0].Scored {
				t.Fatalf("summary.json: %v %+v", err, sum)
			}
			rows, err := os.ReadFile(filepath.Join(cfg.Out, "answers", "baseline", "rows.jsonl"))
			if err != nil || strings.Count(string(rows), "\n") != 10*max(cfg.Reps, 1) {
				t.Fatalf("rows.jsonl: %v\n%s", err, rows)
			}
			if _, err := os.Stat(filepath.Join(cfg.Out, "answers", "baseline", "traces", "thread-author-r1", "transcript.html")); err != nil {
				t.Fatalf("no trace: %v", err)
			}
		})
	}
}

// An eval of the reference agent on two cases, with the scripted model
// in place of the real one (a wiring test of the eval itself): it gets
// one case right, and the summary says so.
func TestAWiringEvalWithTheScriptedModel(t *testing.T) {
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
	rep, err := evals.Run(t.Context(), evals.Config{Out: t.TempDir(), Reps: 2}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	got := fmt.Sprintf("%d of %d scored", s.Scored, s.Attempts)
	for _, m := range s.Metrics {
		got += fmt.Sprintf(", %s %.2f", m.ID, *m.Mean)
	}
	if want := "4 of 4 scored, correct 0.50, replied 1.00, tool_calls 0.00"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
