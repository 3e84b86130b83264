package agentevals_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/agentvcr/agentvcr/pricing"
	"github.com/agentvcr/agentvcr/proxy"
)

var (
	router = fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	titler = fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	loop   = fakeai.Agent{Name: "agent", Purpose: "agent"}
	routed = fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"})
)

// casesFile writes lines as a cases file and returns its path.
func casesFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// answers is the example eval on the cases at path, with the model from
// up (a stand-in gateway).
func answers(up *fakeai.Server, path string) evals.Eval { return answersVia(up.Transport(), path) }

// answersVia is the example eval on the cases at path (the example's own
// when ""), with the model from the stand-in gateway rt reaches.
func answersVia(rt http.RoundTripper, path string) evals.Eval {
	e := agentevals.Answers("eval-test-key", fixture.Upstream(rt))
	if path != "" {
		e.Cases = evals.FromJSONL(path)
	}
	return e
}

// scriptTurns scripts n conversations' router and title answers.
func scriptTurns(up *fakeai.Server, n int) {
	for range n {
		up.Respond(router, routed)
		up.Respond(titler, fakeai.Text("A question"))
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// The cost is the priced usage the responses reported: plain input,
// cache reads, cache writes and output at their prices, and server-side
// searches per thousand, summed over the attempt's model requests.
func TestPricedUsageSumsToTheCost(t *testing.T) {
	up := fakeai.NewServer(t)
	up.Respond(router, routed.WithUsage(fakeai.Usage{Input: 1000, Output: 100}))
	up.Respond(titler, fakeai.Text("Minutes").WithUsage(fakeai.Usage{Input: 500, Output: 20}))
	up.Respond(loop, fakeai.Text("200").WithUsage(fakeai.Usage{Input: 12000, Output: 800, CacheRead: 8000, CacheWrite: 1000, WebSearches: 2}))
	e := answers(up, casesFile(t, `{"id":"minutes","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`))
	e.Prices = pricing.Table{
		agentevals.Sonnet: {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75, PerKServerTool: map[string]float64{"web_search": 10}},
		agentevals.Haiku:  {InputPerMTok: 1, OutputPerMTok: 5},
	}
	rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir()}, e)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: the agent's 3,000 plain input tokens at $3, 800 output at
	// $15, 8,000 cache reads at $0.30, 1,000 cache writes at $3.75, two
	// searches at $10 a thousand; the router's and the title's at the
	// fast model's $1 and $5.
	agent := (3000*3 + 800*15 + 8000*0.30 + 1000*3.75) / 1e6
	agent += 2 * 10.0 / 1000
	fast := (1000*1+100*5)/1e6 + (500*1+20*5)/1e6
	s := rep.Runs[0]
	if s.Scored != 1 || s.Cost.AgentUSD == nil || !near(*s.Cost.AgentUSD, agent+fast) {
		t.Fatalf("cost %+v (scored %d); want $%v", s.Cost, s.Scored, agent+fast)
	}
	if s.Cost.ModelRequests != 3 || s.Cost.Tokens != (evals.Tokens{Input: 13500, Output: 920, CacheRead: 8000, CacheWrite: 1000}) {
		t.Fatalf("usage %+v", s.Cost)
	}
	if rep.CostUSD == nil || !near(*rep.CostUSD, agent+fast) {
		t.Fatalf("the run's cost %v", rep.CostUSD)
	}
}

// A model with no price gives rows with no cost, not zero, and a cost
// ceiling says it cannot hold: no attempt starts after the first.
func TestAnUnpricedModelHasNoCostAndTheCeilingCannotHold(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 1)
	up.Respond(loop, fakeai.Text("200"))
	path := casesFile(t, `{"id":"a","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`,
		`{"id":"b","input":"What is 17 + 26?","expected":"43"}`, `{"id":"c","input":"What is 2 + 2?","expected":"4"}`)
	e := answers(up, path)
	e.Prices = pricing.Table{"some/other-model": {InputPerMTok: 1, OutputPerMTok: 1}}
	out := t.TempDir()
	rep, err := evals.Run(context.Background(), evals.Config{Out: out, MaxCostUSD: 5}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	if s.Started != 1 || s.Cost.AgentUSD != nil || s.Cost.UnpricedRequests != 3 || len(s.Cost.Unpriced) == 0 ||
		!strings.Contains(s.Cost.Unpriced[0], "no price for model") {
		t.Fatalf("summary %+v", s)
	}
	if rep.CostUSD != nil || rep.Ceiling == nil || !strings.Contains(rep.Ceiling.CannotHold, "no price for model") || !strings.Contains(rep.Stopped, "cannot hold") {
		t.Fatalf("report: cost %v ceiling %+v stopped %q", rep.CostUSD, rep.Ceiling, rep.Stopped)
	}
	rows := readLines(t, filepath.Join(out, "answers", "baseline", "rows.jsonl"))
	if len(rows) != 1 || !strings.Contains(rows[0], `"costUsd":null`) || !strings.Contains(rows[0], `"unpricedRequests":3`) {
		t.Fatalf("rows %q", rows)
	}
	// Without a ceiling the run goes on, and says the cost is unknown.
	up2 := fakeai.NewServer(t)
	scriptTurns(up2, 3)
	up2.Respond(loop, fakeai.Text("200"), fakeai.Text("43"), fakeai.Text("4"))
	e = answers(up2, path)
	e.Prices = nil
	rep, err = evals.Run(context.Background(), evals.Config{Out: t.TempDir()}, e)
	if err != nil || rep.Runs[0].Started != 3 || rep.Runs[0].Cost.AgentUSD != nil || rep.Stopped != "" {
		t.Fatalf("without a ceiling: %v %+v", err, rep)
	}
	// A ceiling on an eval without prices is refused before anything
	// starts.
	if _, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir(), MaxCostUSD: 1}, e); !errors.As(err, new(*evals.ConfigError)) ||
		!strings.Contains(err.Error(), "no Prices") {
		t.Fatalf("a ceiling without prices: %v", err)
	}
}

// Once the cost reaches the ceiling no new attempt starts; the attempts
// already running finish and are scored.
func TestTheCeilingStopsNewAttempts(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 2)
	usage := fakeai.Usage{Input: 1000, Output: 100}
	up.Respond(loop, fakeai.Text("200").WithUsage(usage), fakeai.Text("200").WithUsage(usage))
	var lines []string
	for i := range 10 {
		lines = append(lines, `{"id":"c`+string(rune('0'+i))+`","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`)
	}
	e := answers(up, casesFile(t, lines...))
	// Two attempts start together: each waits in Setup for the other, so
	// both are running before either can cost anything.
	var started sync.WaitGroup
	started.Add(2)
	e.Setup = func(ctx context.Context, _ *fixture.Fixture, _ evals.Case) error {
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-time.After(30 * time.Second):
			return errors.New("the other attempt never started")
		}
	}
	rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir(), Concurrency: 2, MaxCostUSD: 0.000001}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	if s.Started != 2 || s.Scored != 2 || s.Attempts != 10 || !strings.Contains(rep.Stopped, "reached the ceiling") ||
		rep.Ceiling == nil || !rep.Ceiling.Reached || rep.Ceiling.CannotHold != "" {
		t.Fatalf("summary %+v; stopped %q", s, rep.Stopped)
	}
}

// A truncated answer is kept out of the means and counted.
func TestATruncatedAnswerIsKeptOutOfTheMeans(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 3)
	first := "How many minutes are in 3 hours and 20 minutes?"
	byCase := fakeai.Agent{Name: "first", Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), first) }}
	up.Respond(byCase, fakeai.Truncated("20"))
	up.Respond(loop, fakeai.Text("43"), fakeai.Text("5"))
	out := t.TempDir()
	e := answers(up, casesFile(t, `{"id":"cut","input":"`+first+`","expected":"200"}`,
		`{"id":"right","input":"What is 17 + 26?","expected":"43"}`, `{"id":"wrong","input":"What is 2 + 2?","expected":"4"}`))
	rep, err := evals.Run(context.Background(), evals.Config{Out: out}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	correct := s.Metrics[0]
	// Had the truncated answer counted as wrong, the mean would be 1/3.
	if s.Scored != 2 || s.Truncated != 1 || s.Excluded[evals.Truncated] != 1 || correct.N != 2 || *correct.Mean != 0.5 {
		t.Fatalf("summary %+v, correct %+v", s, correct)
	}
	failures := readLines(t, filepath.Join(out, "answers", "baseline", "failures.jsonl"))
	if len(failures) != 1 || !strings.Contains(failures[0], `"class":"truncated"`) || !strings.Contains(failures[0], `"case":"cut"`) {
		t.Fatalf("failures %q", failures)
	}
}

// Attempts that produce nothing scorable are classed: the provider
// failed the turn, the agent was not idle in time, the grader failed,
// the setup failed.
func TestUnscorableAttemptsAreClassed(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 3)
	up.Respond(loop, fakeai.ProviderError(529), fakeai.Text("43"), fakeai.Text("4"))
	path := casesFile(t, `{"id":"overloaded","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`,
		`{"id":"slow","input":"What is 17 + 26?","expected":"43","tags":["slow"]}`,
		`{"id":"badgrade","input":"What is 2 + 2?","expected":"4","tags":["badgrade"]}`,
		`{"id":"nosetup","input":"What is 3 + 3?","expected":"6","tags":["nosetup"]}`)
	e := answers(up, path)
	e.Setup = func(ctx context.Context, f *fixture.Fixture, c evals.Case) error {
		switch {
		case c.HasTag("nosetup"):
			return errors.New("the seed data is missing")
		case c.HasTag("slow"):
			// The turn's first model request, the router's, is
			// answered after the attempt's timeout.
			_, err := f.Proxy().AddFault(proxy.Fault{Kind: proxy.FaultLatency, Route: "model", Path: "/language-model", DelayMs: 60000})
			return err
		}
		return nil
	}
	grade := e.Grade
	e.Grade = func(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
		s, err := grade(ctx, r, c)
		if c.HasTag("badgrade") {
			s["correct"] = 0.5
		}
		return s, err
	}
	out := t.TempDir()
	rep, err := evals.Run(context.Background(), evals.Config{Out: out, Timeout: 8 * time.Second, MaxCostUSD: 100}, e)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"overloaded": evals.ProviderError, "slow": evals.Timeout, "badgrade": evals.GraderError, "nosetup": evals.SetupError}
	for _, line := range readLines(t, filepath.Join(out, "answers", "baseline", "failures.jsonl")) {
		var f struct{ Case, Class, Error string }
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		if want[f.Case] != f.Class || f.Error == "" {
			t.Errorf("%s: class %s (%s); want %s", f.Case, f.Class, f.Error, want[f.Case])
		}
		delete(want, f.Case)
	}
	if len(want) > 0 || rep.Runs[0].Scored != 0 {
		t.Fatalf("not classed: %v; scored %d; stopped %q; %+v", want, rep.Runs[0].Scored, rep.Stopped, rep.Runs[0].Cost)
	}
	// The requests that failed before they reported usage (the timed-out
	// attempt's, cut when its proxy stopped) are of unknown cost, and say
	// so; they do not stop a ceiling, as an unpriced model would. The 529
	// cost nothing: providers bill no request they refuse.
	if c := rep.Ceiling; c == nil || c.FailedUnknown < 1 || c.CannotHold != "" || rep.Stopped != "" || rep.Runs[0].Started != 4 || rep.CostUSD != nil {
		t.Fatalf("ceiling %+v, stopped %q, started %d, cost %v", rep.Ceiling, rep.Stopped, rep.Runs[0].Started, rep.CostUSD)
	}
	for _, line := range readLines(t, filepath.Join(out, "answers", "baseline", "rows.jsonl")) {
		var row evals.Row
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.Case == "overloaded" && (row.CostUSD == nil || row.UnpricedRequests != 0 || row.FailedRequests != 0) {
			t.Errorf("the attempt the provider refused with a 529: cost %v, unpriced %d (%q), failed %d", row.CostUSD, row.UnpricedRequests, row.Unpriced, row.FailedRequests)
		}
	}
	// The attempt that timed out had its proxy shut down under it: how
	// far its turn got before that is a matter of timing.
	up.DropUnused()
}

// A dry run resolves the cases and says what would run; it starts no
// app, calls no model and writes nothing.
func TestADryRunCallsNothingAndWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	up := fakeai.NewServer(t)
	out := filepath.Join(t.TempDir(), "results")
	e := agentevals.Answers("eval-test-key", fixture.Upstream(up.Transport()))
	var progress strings.Builder
	rep, err := evals.Run(context.Background(), evals.Config{Out: out, DryRun: true, Reps: 2, Variants: []string{"haiku"}, Progress: &progress}, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Planned) != 40 || rep.Planned[0].Source != "cases.jsonl:1" {
		t.Fatalf("planned %d: %+v", len(rep.Planned), rep.Planned[:1])
	}
	if calls := up.AllCalls(); len(calls) != 0 {
		t.Fatalf("the model was called %d times", len(calls))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the results directory: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("temporary files: %v", left)
	}
	if rep.CostUSD != nil || progress.Len() != 0 {
		t.Fatalf("cost %v, progress %q", rep.CostUSD, progress.String())
	}
}

// The judge scores the transcript as metric "judge"; its model requests
// are priced apart from the agent's, so that they cannot move a
// variant's cost, and a Grade that continues the conversation makes the
// agent's requests, not the judge's.
func TestTheJudgesCostIsCountedApart(t *testing.T) {
	judgeAgent := fakeai.Agent{Name: "judge", SystemPrefix: judge.System[:40]}
	run := func(t *testing.T, judgePrice bool) evals.Summary {
		up := fakeai.NewServer(t)
		scriptTurns(up, 1)
		up.Respond(router, routed)
		up.Respond(loop, fakeai.Text("200").WithUsage(fakeai.Usage{Input: 1000, Output: 10}), fakeai.Text("You're welcome."))
		up.Respond(judgeAgent, fakeai.Text(`{"answer":"B","rationale":"Right, tersely."}`).WithUsage(fakeai.Usage{Input: 2000, Output: 50}))
		e := answers(up, casesFile(t, `{"id":"minutes","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`))
		e.Judge = &evals.Judge{Model: "openai/gpt-5.4", Rubric: func(c evals.Case) judge.Rubric {
			return judge.Rubric{Pass: []string{"answers " + c.ExpectedText()}}
		}}
		grade := e.Grade
		e.Grade = func(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
			r.Conversation.Continue(fixture.SlackThreadMessage("thanks"))
			return grade(ctx, r, c)
		}
		e.Prices = pricing.Table{agentevals.Sonnet: {InputPerMTok: 3, OutputPerMTok: 15}, agentevals.Haiku: {InputPerMTok: 1, OutputPerMTok: 5}}
		if judgePrice {
			e.Prices["openai/gpt-5.4"] = pricing.Price{InputPerMTok: 2, OutputPerMTok: 10}
		}
		rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir()}, e)
		if err != nil {
			t.Fatal(err)
		}
		s := rep.Runs[0]
		// The agent's: the router, the title and the answer, then the
		// router and the answer of the Grade's own turn; the judge's: one.
		if s.Scored != 1 || s.Cost.ModelRequests != 5 || s.Cost.JudgeRequests != 1 || s.Cost.JudgeTokens.Input != 2000 ||
			s.JudgeSharesProvider || len(s.JudgeModels) != 1 || s.JudgeModels[0] != "openai/gpt-5.4" {
			t.Fatalf("summary %+v", s)
		}
		if last := s.Metrics[len(s.Metrics)-1]; last.ID != evals.JudgeMetric || *last.Mean != 0.75 {
			t.Fatalf("judge metric %+v", last)
		}
		if judgePrice && !near(*rep.CostUSD, *s.Cost.AgentUSD+*s.Cost.JudgeUSD) {
			t.Fatalf("the run's cost %v is not the agent's %v and the judge's %v", *rep.CostUSD, *s.Cost.AgentUSD, *s.Cost.JudgeUSD)
		}
		return s
	}
	t.Run("priced", func(t *testing.T) {
		s := run(t, true)
		if s.Cost.JudgeUSD == nil || !near(*s.Cost.JudgeUSD, (2000*2+50*10)/1e6) || s.Cost.AgentUSD == nil {
			t.Fatalf("cost %+v", s.Cost)
		}
	})
	t.Run("an unpriced judge", func(t *testing.T) {
		// The judge's cost is unknown, and says so; the agent's is known.
		s := run(t, false)
		if !s.Cost.Judged || s.Cost.JudgeUSD != nil || s.Cost.JudgeUnpricedRequests != 1 || s.Cost.AgentUSD == nil ||
			!slices.ContainsFunc(s.Cost.Unpriced, func(why string) bool { return strings.Contains(why, "openai/gpt-5.4") }) {
			t.Fatalf("cost %+v", s.Cost)
		}
	})
}

// A run stopped in a repetition keeps that repetition's scores out of
// the means, so that every case weighs the same; the ceiling says it was
// reached, not that it held.
func TestAnUnfinishedRepetitionIsKeptOutOfTheMeans(t *testing.T) {
	up := fakeai.NewServer(t)
	small := fakeai.Usage{Input: 100, Output: 10}
	for range 7 {
		up.Respond(router, routed.WithUsage(small))
		up.Respond(titler, fakeai.Text("A question").WithUsage(small))
	}
	var lines []string
	for i := range 6 {
		q := fmt.Sprintf("What is %d + %d?", i, i)
		right := fmt.Sprint(2 * i)
		answer := right
		if i >= 3 {
			answer = "no idea"
		}
		lines = append(lines, fmt.Sprintf(`{"id":"c%d","input":%q,"expected":%q}`, i, q, right))
		times := 1
		if i == 0 {
			times = 2 // the first case runs again in the second repetition
		}
		for range times {
			up.Respond(fakeai.Agent{Name: "c" + right, Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), q) }},
				fakeai.Text(answer).WithUsage(fakeai.Usage{Input: 1000, Output: 100}))
		}
	}
	e := answers(up, casesFile(t, lines...))
	e.Prices = pricing.Table{agentevals.Sonnet: {InputPerMTok: 3, OutputPerMTok: 15}, agentevals.Haiku: {InputPerMTok: 1, OutputPerMTok: 5}}
	perAttempt := (1000*3+100*15)/1e6 + 2*(100*1+10*5)/1e6
	rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir(), Reps: 2, MaxCostUSD: 6.5 * perAttempt}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	correct := s.Metrics[0]
	// Had the second repetition's one case counted, the mean would be 4/7.
	if s.Started != 7 || s.Scored != 7 || s.Unfinished != 1 || correct.N != 6 || *correct.Mean != 0.5 || correct.CI95 != nil || s.Partial {
		t.Fatalf("summary %+v; correct %+v", s, correct)
	}
	if c := rep.Ceiling; c == nil || !c.Reached || c.CannotHold != "" || rep.CostUSD == nil || !near(*rep.CostUSD, 7*perAttempt) {
		t.Fatalf("ceiling %+v, cost %v", rep.Ceiling, rep.CostUSD)
	}
}

// A variant named twice runs once; so does an eval.
func TestAVariantNamedTwiceRunsOnce(t *testing.T) {
	e := agentevals.Answers("eval-test-key")
	rep, err := evals.Run(context.Background(), evals.Config{DryRun: true, Variants: []string{"haiku", "haiku"}}, e)
	if err != nil || len(rep.Runs) != 2 || len(rep.Planned) != 20 {
		t.Fatalf("%v: %d summaries, %d planned", err, len(rep.Runs), len(rep.Planned))
	}
}

// A database server the run cannot reach is said before anything starts:
// not as a bad config, as a failure.
func TestAnUnusableDatabaseServerStopsTheRunBeforeItStarts(t *testing.T) {
	up := fakeai.NewServer(t)
	out := filepath.Join(t.TempDir(), "results")
	_, err := evals.Run(context.Background(), evals.Config{Out: out, DatabaseURL: "postgres://nobody:hunter2hunter2@127.0.0.1:1/none"},
		answers(up, casesFile(t, `{"id":"a","input":"x","expected":"y"}`)))
	if errors.As(err, new(*evals.ConfigError)) || !strings.Contains(err.Error(), "the database server (--database-url)") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the results directory was made: %v", err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// An interrupted run starts no new attempt, its running attempts make no
// new model request and end, and what ran is written where an
// interrupted run's results go, the last whole run untouched: also when
// the interruption comes as the last attempt runs.
func TestAnInterruptedRunStopsAndWritesWhatRan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cases []string
	}{
		{"as the first of three attempts starts", []string{`{"id":"a","input":"What is 1 + 1?","expected":"2"}`,
			`{"id":"b","input":"What is 17 + 26?","expected":"43"}`, `{"id":"c","input":"What is 2 + 2?","expected":"4"}`}},
		{"as the last attempt starts", []string{`{"id":"only","input":"What is 1 + 1?","expected":"2"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := fakeai.NewServer(t)
			e := answers(up, casesFile(t, tc.cases...))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.Setup = func(context.Context, *fixture.Fixture, evals.Case) error {
				cancel() // Ctrl-C, as the first attempt starts
				return nil
			}
			out := t.TempDir()
			// The last whole run's results stay where they are.
			last := filepath.Join(out, "answers", "baseline")
			if err := os.MkdirAll(last, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(last, "summary.json"), []byte(`{"last":true}`), 0o644); err != nil {
				t.Fatal(err)
			}
			var progress strings.Builder
			began := time.Now()
			rep, err := evals.Run(ctx, evals.Config{Out: out, Progress: &progress}, e)
			if err != nil {
				t.Fatal(err)
			}
			s := rep.Runs[0]
			if rep.Stopped != "interrupted" || s.Started != 1 || s.Excluded[evals.Interrupted] != 1 || len(up.AllCalls()) != 0 {
				t.Fatalf("stopped %q, summary %+v, model calls %d", rep.Stopped, s, len(up.AllCalls()))
			}
			// The requests the proxy refused never left the machine: they
			// cost nothing, and the cost is known.
			if rep.CostUSD == nil || *rep.CostUSD != 0 || s.Cost.UnpricedRequests != 0 {
				t.Fatalf("cost %v, %+v", rep.CostUSD, s.Cost)
			}
			if took := time.Since(began); took > 30*time.Second {
				t.Fatalf("the interrupted attempt took %s to end", took)
			}
			if rows := readLines(t, filepath.Join(out, "answers", "baseline.interrupted", "rows.jsonl")); len(rows) != 1 || !strings.Contains(rows[0], `"status":"interrupted"`) {
				t.Fatalf("rows %q", rows)
			}
			if entries, err := os.ReadDir(last); err != nil || len(entries) != 1 {
				t.Fatalf("the last whole run's directory: %v %v", entries, err)
			}
			if b, err := os.ReadFile(filepath.Join(last, "summary.json")); err != nil || string(b) != `{"last":true}` {
				t.Fatalf("the last run's summary: %q %v", b, err)
			}
			if !strings.Contains(progress.String(), "evals: interrupted: no new attempt starts; the 1 running refuse every new model request") {
				t.Fatalf("progress:\n%s", progress.String())
			}
		})
	}
}

// A panic in an eval's own code fails its attempt, not the run.
func TestAPanicFailsTheAttemptOnly(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 2)
	up.Respond(loop, fakeai.Text("43"), fakeai.Text("4"))
	e := answers(up, casesFile(t, `{"id":"boom","input":"What is 17 + 26?","expected":"43"}`, `{"id":"fine","input":"What is 2 + 2?","expected":"4"}`))
	grade := e.Grade
	e.Grade = func(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
		if c.ID == "boom" {
			panic("the grader's own bug")
		}
		return grade(ctx, r, c)
	}
	out := t.TempDir()
	rep, err := evals.Run(context.Background(), evals.Config{Out: out}, e)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Runs[0]; s.Scored != 1 || s.Excluded[evals.GraderError] != 1 {
		t.Fatalf("summary %+v", s)
	}
	failures := readLines(t, filepath.Join(out, "answers", "baseline", "failures.jsonl"))
	if len(failures) != 1 || !strings.Contains(failures[0], "panic: the grader's own bug") {
		t.Fatalf("failures %q", failures)
	}
}

// A variant is compared with the baseline on the repetitions both
// finished: a run stopped after the baseline's third repetition and
// before the variant's compares the first two, pair by pair.
func TestAComparisonIsOverTheRepetitionsBothFinished(t *testing.T) {
	up := fakeai.NewServer(t)
	small := fakeai.Usage{Input: 100, Output: 10}
	for range 5 {
		up.Respond(router, routed.WithUsage(small))
		up.Respond(titler, fakeai.Text("A question").WithUsage(small))
	}
	usage := fakeai.Usage{Input: 1000, Output: 100}
	base := fakeai.Agent{Name: "base", Purpose: "agent", Model: agentevals.Sonnet}
	haiku := fakeai.Agent{Name: "haiku", Purpose: "agent", Model: agentevals.Haiku}
	up.Respond(base, fakeai.Text("2").WithUsage(usage), fakeai.Text("5").WithUsage(usage), fakeai.Text("2").WithUsage(usage))
	up.Respond(haiku, fakeai.Text("2").WithUsage(usage), fakeai.Text("5").WithUsage(usage))
	e := answers(up, casesFile(t, `{"id":"sum","input":"What is 1 + 1?","expected":"2"}`))
	e.Prices = pricing.Table{agentevals.Sonnet: {InputPerMTok: 1, OutputPerMTok: 1}, agentevals.Haiku: {InputPerMTok: 1, OutputPerMTok: 1}}
	perAttempt := (110 + 110 + 1100) / 1e6
	rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir(), Reps: 3, Variants: []string{"haiku"}, MaxCostUSD: 4.5 * perAttempt}, e)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Started != 3 || rep.Runs[1].Started != 2 || !rep.Ceiling.Reached {
		t.Fatalf("started %d and %d; ceiling %+v", rep.Runs[0].Started, rep.Runs[1].Started, rep.Ceiling)
	}
	// Over all it ran, the baseline's mean is 2/3 and the variant's 1/2;
	// on the repetitions both ran they agree exactly.
	d := rep.Comparisons[0].Metrics[0]
	if d.ID != "correct" || *d.Baseline != 0.5 || *d.Variant != 0.5 || *d.Diff != 0 || d.CI95 == nil || d.CI95[0] != 0 || d.CI95[1] != 0 {
		t.Fatalf("difference %+v (baseline %v, variant %v, ci %v)", d, *d.Baseline, *d.Variant, d.CI95)
	}
}

// A provider's error costs nothing, so that a variant whose attempt the
// provider refused with a 500 still has a cost to compare with the
// baseline's.
func TestAProviderErrorKeepsTheComparisonsCost(t *testing.T) {
	up := fakeai.NewServer(t)
	small := fakeai.Usage{Input: 100, Output: 10}
	for range 2 {
		up.Respond(router, routed.WithUsage(small))
		up.Respond(titler, fakeai.Text("A question").WithUsage(small))
	}
	base := fakeai.Agent{Name: "base", Purpose: "agent", Model: agentevals.Sonnet}
	haiku := fakeai.Agent{Name: "haiku", Purpose: "agent", Model: agentevals.Haiku}
	up.Respond(base, fakeai.Text("2").WithUsage(fakeai.Usage{Input: 1000, Output: 100}))
	up.Respond(haiku, fakeai.ProviderError(500))
	e := answers(up, casesFile(t, `{"id":"sum","input":"What is 1 + 1?","expected":"2"}`))
	e.Prices = pricing.Table{agentevals.Sonnet: {InputPerMTok: 1, OutputPerMTok: 1}, agentevals.Haiku: {InputPerMTok: 1, OutputPerMTok: 1}}
	rep, err := evals.Run(context.Background(), evals.Config{Out: t.TempDir(), Variants: []string{"haiku"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Runs[1].Excluded[evals.ProviderError]; got != 1 {
		t.Fatalf("the variant's attempt: %+v", rep.Runs[1])
	}
	c := rep.Comparisons[0]
	if c.BaselineUSD == nil || c.VariantUSD == nil || !near(*c.BaselineUSD, 1320/1e6) || !near(*c.VariantUSD, 220/1e6) || rep.CostUSD == nil {
		t.Fatalf("costs: baseline %v, variant %v, total %v", c.BaselineUSD, c.VariantUSD, rep.CostUSD)
	}
}

// The app's credentials never reach the results, whatever their shape,
// even when the app prints them as it fails.
func TestTheAppsCredentialsAreNotWritten(t *testing.T) {
	up := fakeai.NewServer(t)
	e := answers(up, casesFile(t, `{"id":"a","input":"What is 1 + 1?","expected":"2"}`))
	key := "vck_plainish_key_1234"
	e.App.Env["AI_GATEWAY_API_KEY"] = key
	e.App.Handler, e.App.Command, e.App.AddrEnv = nil, []string{"sh", "-c", "echo starting with $AI_GATEWAY_API_KEY; echo bad key $AI_GATEWAY_API_KEY >&2; exit 3"}, "AGENT_ADDR"
	out := t.TempDir()
	rep, err := evals.Run(context.Background(), evals.Config{Out: out}, e)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Excluded[evals.HarnessError] != 1 {
		t.Fatalf("summary %+v", rep.Runs[0])
	}
	err = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key:\n%s", path, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	log := readLines(t, filepath.Join(out, "answers", "baseline", "traces", "a-r1", "attempt.log"))
	if !strings.Contains(strings.Join(log, "\n"), "bad key <<redacted>>") {
		t.Fatalf("attempt.log: %q", log)
	}
}
