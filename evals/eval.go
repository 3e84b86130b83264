package evals

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/agentvcr/agentvcr/pricing"
)

// Eval is one eval: an app, its cases, and how an attempt is set up,
// started and graded.
type Eval struct {
	// Name names the eval on the command line and its results
	// directory: letters, digits, '.', '_' and '-'.
	Name string
	// App is the app under test. Each attempt starts a fresh one.
	App fixture.App
	// Options are added to the fixture of each attempt (fixture.Allow,
	// fixture.Upstream...). The runner sets the model rules live
	// (passthrough: an eval calls the real model, and records nothing)
	// before them, and fixture.Prices after them.
	Options []fixture.Option
	// Cases loads the cases: FromJSONL or FromFS.
	Cases Cases
	// Preflight, if set, runs before each attempt's app starts: a
	// credential the attempt needs (ErrMissingCredential), an environment
	// that must answer. An error fails the attempt (class setup_error)
	// and starts nothing.
	Preflight func(ctx context.Context, c Case) error
	// Setup, if set, prepares an attempt's fresh app before its input
	// is sent: seeds the Slack mock, loads history. An error is the
	// attempt's, class setup_error.
	Setup func(ctx context.Context, f *fixture.Fixture, c Case) error
	// Teardown, if set, runs after the attempt's grade, also when the
	// attempt failed after its app started, before the app stops: it
	// removes what Setup made. An error fails the attempt (harness_error).
	Teardown func(ctx context.Context, f *fixture.Fixture, c Case) error
	// Input is what the attempt sends the app (required).
	Input func(c Case) fixture.Input
	// Grade scores an attempt from the end state the agent left behind:
	// one value for each of Metrics, by ID. An error, a missing or an
	// undeclared metric, or a value its Kind does not allow is the
	// attempt's, class grader_error.
	Grade func(ctx context.Context, r Result, c Case) (map[string]float64, error)
	// Judge, if set, also scores each attempt's transcript with a judge
	// model, as metric "judge" (a score from 0 to 1). Its model requests
	// go through the attempt's proxy like the agent's, and its cost is
	// counted apart, so that it cannot dampen a difference between
	// variants.
	Judge *Judge
	// Metrics are what Grade returns.
	Metrics []Metric
	// Prices price the model requests by model id. A model without a
	// price has no cost: its rows say so, and a cost ceiling cannot hold.
	Prices pricing.Table
	// Variants are changes to compare with the baseline (the Eval as
	// declared), by name.
	Variants []Variant
	// Fingerprint, if set, names the definition the results come from
	// (a catalog suite's fingerprint, which changes with anything the
	// suite measures): every row and the summary carry it, so that
	// results under one fingerprint are alike wherever they are read.
	Fingerprint string
}

// ErrMissingCredential is what a Preflight's error wraps (errors.Is)
// when the attempt lacks a credential that the user's setup must give,
// such as a model API key. It is the user's to fix, not the agent's
// failure: evalcmd asks before a run starts and stops it there, naming
// the variable, instead of failing every attempt on it.
var ErrMissingCredential = errors.New("missing credential")

// Result is what an attempt left behind, for Grade: the fixture, whose
// Slack mock, database (DatabaseURL) and app routes (AppURL) hold the end
// state, and the Conversation the input started.
type Result struct {
	Fixture      *fixture.Fixture
	Conversation *fixture.Conversation
	Variant      string
	Rep          int // from 1
	// TraceDir is the attempt's trace directory, where Grade may keep
	// evidence beside the fixture's report (secrets and people out).
	TraceDir string
}

// Judge scores an attempt's transcript with a rubric judge.
type Judge struct {
	// Rubric is the case's rubric.
	Rubric func(c Case) judge.Rubric
	// Model is the judge's model id (default judge.DefaultModel). It
	// should be another provider's than the agent's: a model grading
	// its own answers is lenient with them, and the summary says so.
	Model string
}

// Variant is a change to the app compared with the baseline.
type Variant struct {
	// Name names it on the command line (--variant) and its results
	// directory; "baseline" is the Eval as declared.
	Name        string
	Description string
	// Env is added to the app's environment: instructions, a model, a
	// tool switched on.
	Env map[string]string
	// Options are added to the fixture's after the Eval's.
	Options []fixture.Option
}

// Baseline is the name of the Eval as declared, which every variant is
// compared with.
const Baseline = "baseline"

// Kind is what a metric's values are.
type Kind string

// The kinds of Metric.
const (
	// Binary values are 0 or 1: the mean is a rate.
	Binary Kind = "binary"
	// Score values are any finite number, such as 0 to 1.
	Score Kind = "score"
	// Count values are whole numbers from 0, such as tool calls made.
	Count Kind = "count"
)

// Metric is one value Grade returns for each attempt.
type Metric struct {
	ID          string
	Kind        Kind
	Description string
}

// JudgeMetric is the ID of the judge's score.
const JudgeMetric = "judge"

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validate says what makes the Eval unable to run, all of it.
func (e *Eval) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !namePattern.MatchString(e.Name) {
		bad("the eval's name %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", e.Name)
	}
	if e.Cases == nil {
		bad("no Cases: evals.FromJSONL(path) loads them")
	}
	if e.Input == nil {
		bad("no Input: it says what each case sends the app")
	}
	if e.Grade == nil {
		bad("no Grade: it scores each attempt from the end state")
	}
	if len(e.Metrics) == 0 {
		bad("no Metrics: Grade returns one value for each")
	}
	if e.App.Handler == nil && len(e.App.Command) == 0 {
		bad("the app has neither a Handler nor a Command")
	}
	seen := map[string]bool{}
	for _, m := range e.Metrics {
		switch {
		case !namePattern.MatchString(m.ID):
			bad("metric %q: want letters, digits, '.', '_' and '-'", m.ID)
		case m.ID == JudgeMetric:
			bad("metric %q is the judge's: set Judge instead", m.ID)
		case seen[m.ID]:
			bad("metric %q is declared twice", m.ID)
		case !slices.Contains([]Kind{Binary, Score, Count}, m.Kind):
			bad("metric %q: kind %q; want binary, score or count", m.ID, m.Kind)
		}
		seen[m.ID] = true
	}
	if e.Judge != nil && e.Judge.Rubric == nil {
		bad("a Judge without a Rubric")
	}
	names := map[string]bool{Baseline: true}
	for _, v := range e.Variants {
		switch {
		case !namePattern.MatchString(v.Name):
			bad("variant %q: want letters, digits, '.', '_' and '-'", v.Name)
		case names[v.Name]:
			bad("variant %q is declared twice (or is the baseline's name)", v.Name)
		}
		names[v.Name] = true
	}
	if len(errs) > 0 {
		return fmt.Errorf("eval %s: %w", e.Name, errors.Join(errs...))
	}
	return nil
}

// AllMetrics are what each attempt is scored on: the Eval's Metrics
// and, with a Judge, the judge's.
func (e *Eval) AllMetrics() []Metric {
	ms := slices.Clone(e.Metrics)
	if e.Judge != nil {
		ms = append(ms, Metric{ID: JudgeMetric, Kind: Score, Description: "the judge's score of the transcript, 0 to 1"})
	}
	return ms
}

// variant returns the named variant; the baseline is the zero Variant
// with its name.
func (e *Eval) variant(name string) (Variant, bool) {
	if name == Baseline {
		return Variant{Name: Baseline}, true
	}
	for _, v := range e.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}
