package evals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
	"github.com/agentvcr/agentvcr/internal/pgerr"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/agentvcr/agentvcr/pricing"
	"github.com/agentvcr/agentvcr/proxy"
)

// Config is how Run runs an eval: what the command line's flags set. The
// zero Config runs every case once, one at a time, with no ceiling.
type Config struct {
	// Reps runs each case this many times (default 1); the summary's
	// confidence intervals are over repetitions, so they need 2 or more.
	Reps int
	// Variants run beside the baseline, on the same cases.
	Variants []string
	// Cases runs a stable subset of this many cases (0: all): the same
	// ones in every run, chosen by a digest of each id.
	Cases int
	// Concurrency runs this many attempts at once (default 1).
	Concurrency int
	// MaxCostUSD is a soft ceiling on what the run spends, the judges'
	// model calls included: once the cost so far reaches it, no new
	// attempt starts; those running finish. 0 is none. It needs the
	// evals' Prices, and an unpriced model request makes it unable to
	// hold: no new attempt starts then either.
	MaxCostUSD float64
	// Out is the results directory (required unless DryRun).
	Out string
	// DryRun resolves the cases and says what would run: it starts no
	// app, calls no model and writes nothing.
	DryRun bool
	// Timeout bounds each fixture call (the agent must be idle by then),
	// and is the deadline of the context Preflight, Setup, Grade and the
	// judge get (default 5 minutes): code that ignores its context runs
	// as long as it runs.
	Timeout time.Duration
	// DatabaseURL is a PostgreSQL server (a URL of a user allowed to
	// create databases) on which each attempt gets a database of its own;
	// "" uses the test cluster, as go test does.
	DatabaseURL string
	// Progress gets a line as the run starts and as each attempt ends;
	// nil for none.
	Progress io.Writer
	// Reporter, if set, gets each row as its attempt ends and the report
	// once the results are written: for teams that send results
	// elsewhere (a dashboard, a database) as the run goes.
	Reporter Reporter
	// Shard, if set, makes this run one of Shard.Of, each making its
	// share of the attempts, on its own machine: Merge puts their
	// results together. Each shard gets its share of MaxCostUSD.
	Shard Shard
	// RunID names the run every shard is a part of, the same in each
	// (such as the CI's run id); a sharded run needs one.
	RunID string
}

// Reporter is told what a run does as it does it. The runner calls it
// from one goroutine at a time, and waits for it: a slow Reporter slows
// the run.
type Reporter interface {
	// Row is an attempt's row, as rows.jsonl has it, once it has ended.
	Row(Row)
	// Report is the run's report, once its results are written (also
	// when it stopped early).
	Report(*Report)
}

// The classes of an attempt: scored, or why it has no score.
const (
	Scored        = "scored"
	Truncated     = "truncated"      // an answer ended at a token limit
	ProviderError = "provider_error" // the model's provider failed the turn
	Unreachable   = "unreachable"    // the provider was never reached: DNS, a refused connection, the proxy's own error
	Timeout       = "timeout"        // the agent was not idle in time
	GraderError   = "grader_error"   // Grade or the judge failed
	SetupError    = "setup_error"    // Setup failed
	HarnessError  = "harness_error"  // the app or the fixture failed otherwise
	Interrupted   = "interrupted"    // the run was stopped under it
)

// Row is one attempt: a case, a variant and a repetition. A row holds
// all that the summary is made of, so that Merge makes from the rows of
// a sharded run's shards what one machine would have made.
type Row struct {
	Eval    string `json:"eval"`
	Variant string `json:"variant"`
	// Fingerprint is the eval's (Eval.Fingerprint), when it has one.
	Fingerprint string `json:"fingerprint,omitempty"`
	Case        string `json:"case"`
	Rep         int    `json:"rep"`
	// Attempt is the attempt's place in the run's plan, from 1: the same
	// in every shard of a sharded run, and the order of rows.jsonl.
	Attempt int `json:"attempt"`
	// Status is Scored or the class of why the attempt has no score.
	Status string             `json:"status"`
	Scores map[string]float64 `json:"scores,omitempty"`
	// Error says what failed, secrets redacted.
	Error string `json:"error,omitempty"`
	// CostUSD is what the agent's model requests cost, nil when one is
	// unpriced (UnpricedRequests, and Unpriced says why); PricedCostUSD
	// is what those of known cost cost: CostUSD, or a lower bound of it.
	CostUSD          *float64 `json:"costUsd"`
	PricedCostUSD    float64  `json:"pricedCostUsd"`
	UnpricedRequests int      `json:"unpricedRequests,omitempty"`
	Unpriced         []string `json:"unpriced,omitempty"`
	// FailedRequests counts the requests, the agent's and the judge's,
	// that failed before they reported their usage: of unknown cost,
	// they are among the unpriced.
	FailedRequests int      `json:"failedRequests,omitempty"`
	Tokens         Tokens   `json:"tokens"`
	ModelRequests  int      `json:"modelRequests"`
	Models         []string `json:"models,omitempty"`
	// Judged says a judge scored the attempt; its requests are counted
	// apart: JudgeCostUSD (nil when unpriced), JudgePricedCostUSD,
	// JudgeUnpricedRequests, JudgeTokens, JudgeRequests, JudgeModels.
	Judged                bool     `json:"judged,omitempty"`
	JudgeCostUSD          *float64 `json:"judgeCostUsd"`
	JudgePricedCostUSD    float64  `json:"judgePricedCostUsd,omitempty"`
	JudgeUnpricedRequests int      `json:"judgeUnpricedRequests,omitempty"`
	JudgeTokens           Tokens   `json:"judgeTokens"`
	JudgeRequests         int      `json:"judgeRequests,omitempty"`
	JudgeModels           []string `json:"judgeModels,omitempty"`
	DurationMs            float64  `json:"durationMs"`
	// Trace is the attempt's directory under the variant's: the
	// fixture's report and transcript.html, and attempt.log for an
	// attempt with no score.
	Trace string `json:"trace,omitempty"`

	cannotHold string // why the cost of a request that did not fail is unknown
}

// Tokens are the tokens of model requests, as the providers reported
// them (Input counts the cache reads and writes).
type Tokens struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
}

func tokensOf(t pricing.Total) Tokens {
	return Tokens{Input: t.InputTokens, Output: t.OutputTokens, CacheRead: t.CacheReadTokens, CacheWrite: t.CacheWriteTokens}
}

// attempt is one planned attempt.
type attempt struct {
	eval    *Eval
	variant Variant
	c       Case
	rep     int
	order   int
	group   int // the case and repetition's place in the plan: its variants share it
	set     *set
}

// set is the attempts of one eval and variant, and where they go. A
// merge's sets have no eval, only what the shards' summaries say of it.
type set struct {
	eval        *Eval
	name        string // the eval's
	fingerprint string
	metrics     []Metric
	variant     string
	cases       []Case
	ncases      int
	planned     map[int]int // attempts planned, by repetition
	dir         string      // the results directory, once written
	staging     string      // where the results are written first
	release     func()      // lets go of the staging directory's lock
	mu          sync.Mutex
	rows        []Row
}

func newSet(e *Eval, variant string, cases []Case) *set {
	return &set{eval: e, name: e.Name, fingerprint: e.Fingerprint, metrics: e.AllMetrics(), variant: variant, cases: cases, ncases: len(cases), planned: map[int]int{}}
}

// runner is one Run's shared state.
type runner struct {
	cfg       Config
	reporting sync.Mutex // one Reporter call at a time
	tmp       string     // the attempts' temporary directories
	start     time.Time
	attempts  []*attempt // those this process makes
	dbs       *databases // the attempts' databases, made ahead
	shard     *ShardInfo // a shard's, nil for a whole run

	mu         sync.Mutex
	spent      float64 // priced cost so far, agents' and judges'
	ceiling    float64 // what this process may spend: the run's ceiling, or a shard's share
	cannotHold string  // why the ceiling cannot hold, once known
	stopped    string  // why no new attempt starts, once one does not
	unknown    int     // requests of unknown cost so far
	done       int
	total      int // the attempts this process makes
	whole      int // the run's, every shard's
	running    map[*fixture.Fixture]bool
	halted     bool // ctx ended: running attempts' proxies take no new request
}

// started registers an attempt's fixture, so that an interruption can
// stop its proxy; it stops it at once if the run is halted already.
func (r *runner) started(f *fixture.Fixture) {
	r.mu.Lock()
	halted := r.halted
	if !halted {
		r.running[f] = true
	}
	r.mu.Unlock()
	if halted {
		halt(f)
	}
}

func (r *runner) ended(f *fixture.Fixture) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, f)
}

// haltAll makes every running attempt's proxy reject each new model
// request, as an outage would: an interrupted run spends nothing more,
// and its attempts' turns fail and end as soon as the requests in flight
// do, while Slack (the mock) still answers, so that the app can end its
// turns as it would.
func (r *runner) haltAll() {
	r.mu.Lock()
	r.halted = true
	fs := slices.Collect(maps.Keys(r.running))
	r.mu.Unlock()
	r.logf("evals: interrupted: no new attempt starts; the %d running refuse every new model request and end; what ran is written (interrupt again to quit at once)", len(fs))
	for _, f := range fs {
		halt(f)
	}
}

// halt makes f's proxy reject every new model request.
func halt(f *fixture.Fixture) {
	// The fault is valid, so AddFault cannot fail.
	f.Proxy().AddFault(proxy.Fault{Kind: proxy.FaultRejectModelRequest, Times: -1})
}

// ConfigError is a Run that cannot start as asked: no attempt ran.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Run runs evals as cfg says and returns what they scored and cost,
// with the results written under cfg.Out. An error means the run could
// not start (a *ConfigError: a bad eval, cases file or flag) or its
// results could not be written; a run stopped early (the ceiling, a
// cancelled ctx) returns its Report with Stopped set.
func Run(ctx context.Context, cfg Config, evals ...Eval) (*Report, error) {
	if cfg.Reps == 0 {
		cfg.Reps = 1
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	sets, err := plan(cfg, evals)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	r := &runner{cfg: cfg, start: time.Now(), running: map[*fixture.Fixture]bool{}, ceiling: cfg.MaxCostUSD}
	var all []*attempt
	// Repetition first, then case, then variant: a run stopped early has
	// its earlier repetitions whole (the one it stopped in is kept out of
	// the means), and each variant ran the cases the baseline did.
	groups := 0
	for rep := 1; rep <= cfg.Reps; rep++ {
		for _, byEval := range groupByEval(sets) {
			for i := range byEval[0].cases {
				for _, s := range byEval {
					v, _ := s.eval.variant(s.variant)
					all = append(all, &attempt{eval: s.eval, variant: v, c: s.cases[i], rep: rep, order: len(all), group: groups, set: s})
				}
				groups++
			}
		}
	}
	attempts := all
	if cfg.Shard.Of > 0 {
		attempts = shardOf(all, cfg.Shard)
		r.shard = &ShardInfo{Run: cfg.RunID, Index: cfg.Shard.Index, Of: cfg.Shard.Of, Definition: definition(cfg, sets), Cases: casesDigest(sets)}
		for _, s := range sets {
			r.shard.Sets = append(r.shard.Sets, s.name+"/"+s.variant)
		}
		if cfg.MaxCostUSD > 0 && len(all) > 0 {
			r.ceiling = cfg.MaxCostUSD * float64(len(attempts)) / float64(len(all))
			r.shard.CeilingShareUSD = r.ceiling
		}
	}
	for _, a := range attempts {
		a.set.planned[a.rep]++
	}
	r.attempts, r.total, r.whole = attempts, len(attempts), len(all)
	if cfg.DryRun {
		return r.report(sets), nil
	}
	if cfg.Out == "" {
		return nil, &ConfigError{Err: errors.New("no results directory: set Out (--out)")}
	}
	if cfg.DatabaseURL != "" {
		if err := reachable(ctx, cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	defer unstage(sets)
	if err := stage(sets, cfg.Out, r.dropDatabase()); err != nil {
		return nil, err
	}
	r.tmp, err = os.MkdirTemp("", "agentvcr-evals-")
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	defer os.RemoveAll(r.tmp)
	r.logf("evals: %s, %d at a time%s; results in %s", r.describe(sets), cfg.Concurrency, r.ceilingNote(), cfg.Out)

	// Listed in a lock file of the run's, so that a later run drops them
	// should this one be killed before it does.
	note := func(string) {}
	if cfg.DatabaseURL != "" {
		note = func(name string) { noteDatabase(sets[0].staging, name) }
	}
	r.dbs = newDatabases(cfg.DatabaseURL, len(attempts), cfg.Concurrency, note, r.logf)
	defer r.dbs.close()

	defer context.AfterFunc(ctx, r.haltAll)()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	take := func() *attempt {
		mu.Lock()
		defer mu.Unlock()
		if next == len(attempts) || r.stop(ctx) {
			return nil
		}
		a := attempts[next]
		next++
		return a
	}
	for range min(cfg.Concurrency, len(attempts)) {
		wg.Go(func() {
			for a := take(); a != nil; a = take() {
				row := r.run(ctx, a)
				a.set.mu.Lock()
				a.set.rows = append(a.set.rows, row)
				a.set.mu.Unlock()
				r.finished(row)
			}
		})
	}
	wg.Wait()
	// Interrupted once every attempt had started: the ones running then
	// were cut short, so the run is not whole either, and goes where an
	// interrupted run goes (it must not replace the last whole run).
	if ctx.Err() != nil {
		r.mu.Lock()
		if r.stopped == "" {
			r.stopped = "interrupted"
		}
		r.mu.Unlock()
	}
	rep := r.report(sets)
	if err := r.write(sets, rep); err != nil {
		return rep, err
	}
	if cfg.Reporter != nil {
		cfg.Reporter.Report(rep)
	}
	return rep, nil
}

// reachable checks that the server at url takes connections, before a
// run starts an app on it per attempt.
func reachable(ctx context.Context, url string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, url)
	if err != nil {
		// Not a bad config: a server that is down, or not yet up.
		return fmt.Errorf("the database server (--database-url): %w", pgerr.Once(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var create bool
	if err := conn.QueryRow(cctx, "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&create); err != nil {
		return fmt.Errorf("the database server (--database-url): %w", err)
	}
	if !create {
		return &ConfigError{Err: errors.New("the database server (--database-url): its user may not create databases, and each attempt needs its own (ALTER ROLE ... CREATEDB)")}
	}
	return nil
}

// plan validates the evals and the config and loads the cases: one set
// per eval and variant, the baseline first.
func plan(cfg Config, evals []Eval) ([]*set, error) {
	var errs []error
	switch {
	case cfg.Reps < 1 || cfg.Reps > maxReps:
		errs = append(errs, fmt.Errorf("reps %d: want 1 to %d", cfg.Reps, maxReps))
	case cfg.Concurrency < 1:
		errs = append(errs, fmt.Errorf("concurrency %d: want 1 or more", cfg.Concurrency))
	case cfg.Cases < 0:
		errs = append(errs, fmt.Errorf("cases %d: want 0 (all) or more", cfg.Cases))
	case cfg.MaxCostUSD < 0 || math.IsNaN(cfg.MaxCostUSD) || math.IsInf(cfg.MaxCostUSD, 0):
		errs = append(errs, fmt.Errorf("max cost %v: want a positive number of US dollars, or 0 for none", cfg.MaxCostUSD))
	case cfg.Timeout < 0:
		errs = append(errs, fmt.Errorf("timeout %s: want a positive duration", cfg.Timeout))
	case cfg.Shard != Shard{} && !cfg.Shard.valid():
		errs = append(errs, fmt.Errorf("shard %s: want i/n, from 1/n to n/n", cfg.Shard))
	case cfg.Shard.Of > 0 && cfg.RunID == "" && !cfg.DryRun:
		errs = append(errs, errors.New("a sharded run needs the id of the run its shards share, the same in each: --run-id or $AGENTVCR_RUN_ID (Config.RunID)"))
	case cfg.Shard.Of > 0 && cfg.RunID != "" && !namePattern.MatchString(cfg.RunID):
		errs = append(errs, fmt.Errorf("run id %q: want letters, digits, '.', '_' and '-'", cfg.RunID))
	}
	if len(evals) == 0 {
		errs = append(errs, errors.New("no eval to run"))
	}
	var sets []*set
	names := map[string]bool{}
	for i := range evals {
		e := &evals[i]
		if err := e.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if names[e.Name] {
			errs = append(errs, fmt.Errorf("two evals are named %s", e.Name))
			continue
		}
		names[e.Name] = true
		for _, v := range cfg.Variants {
			if _, ok := e.variant(v); !ok || v == Baseline {
				errs = append(errs, fmt.Errorf("eval %s has no variant %q (it has: %s)", e.Name, v, strings.Join(e.variantNames(), ", ")))
			}
		}
		if cfg.MaxCostUSD > 0 && len(e.Prices) == 0 {
			errs = append(errs, fmt.Errorf("eval %s has no Prices: a cost ceiling cannot hold without them", e.Name))
		}
		cases, err := e.Cases()
		if err != nil {
			errs = append(errs, fmt.Errorf("eval %s: %w", e.Name, err))
			continue
		}
		cases = subset(cases, cfg.Cases)
		sets = append(sets, newSet(e, Baseline, cases))
		seen := map[string]bool{}
		for _, v := range cfg.Variants {
			if !seen[v] {
				seen[v] = true
				sets = append(sets, newSet(e, v, cases))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sets, nil
}

func (e *Eval) variantNames() []string {
	var out []string
	for _, v := range e.Variants {
		out = append(out, v.Name)
	}
	if len(out) == 0 {
		return []string{"none declared"}
	}
	return out
}

// groupByEval groups the sets by eval, in order.
func groupByEval(sets []*set) [][]*set {
	var out [][]*set
	for _, s := range sets {
		if len(out) > 0 && out[len(out)-1][0].name == s.name {
			out[len(out)-1] = append(out[len(out)-1], s)
			continue
		}
		out = append(out, []*set{s})
	}
	return out
}

// dropDatabase drops a database a dead run left on the server of
// --database-url, or is nil without one: the throwaway cluster dies with
// the run that started it.
func (r *runner) dropDatabase() func(name string) {
	if r.cfg.DatabaseURL == "" {
		return nil
	}
	return func(name string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := pgcluster.DropDatabase(ctx, r.cfg.DatabaseURL, name); err != nil {
			r.logf("evals: a database a stopped run left: %v", err)
		}
	}
}

// stop says whether no new attempt may start, and remembers why.
func (r *runner) stop(ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopped != "":
	case ctx.Err() != nil:
		r.stopped = "interrupted"
	case r.cannotHold != "":
		r.stopped = fmt.Sprintf("the cost ceiling of %s cannot hold: %s", money(r.ceiling), r.cannotHold)
	case r.ceiling > 0 && r.spent >= r.ceiling:
		r.stopped = fmt.Sprintf("the cost so far, %s, reached the ceiling of %s%s", money(r.spent), money(r.ceiling), r.shareNote())
	}
	return r.stopped != ""
}

// finished counts a row's cost, says so on Progress and tells the
// Reporter.
func (r *runner) finished(row Row) {
	r.mu.Lock()
	r.done++
	r.spent += row.PricedCostUSD + row.JudgePricedCostUSD
	r.unknown += row.UnpricedRequests + row.JudgeUnpricedRequests
	if r.cfg.MaxCostUSD > 0 && r.cannotHold == "" && row.cannotHold != "" {
		r.cannotHold = row.cannotHold
	}
	done, spent, unknown := r.done, r.spent, r.unknown
	r.mu.Unlock()
	what := row.Status
	if row.Status == Scored {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(row.Scores)) {
			parts = append(parts, fmt.Sprintf("%s=%s", k, num(row.Scores[k])))
		}
		what += " (" + strings.Join(parts, " ") + ")"
	}
	cost := "running cost " + money(spent)
	if unknown > 0 {
		cost += fmt.Sprintf(" and %d requests of unknown cost", unknown)
	}
	r.logf("evals: [%d/%d] %s/%s %s r%d: %s · %s", done, r.total, row.Eval, row.Variant, row.Case, row.Rep, what, cost)
	if r.cfg.Reporter != nil {
		r.reporting.Lock()
		r.cfg.Reporter.Row(row)
		r.reporting.Unlock()
	}
}

func (r *runner) logf(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
	}
}

func (r *runner) describe(sets []*set) string {
	evals := len(groupByEval(sets))
	variants := len(sets) / max(evals, 1)
	cases := 0
	for _, g := range groupByEval(sets) {
		cases += len(g[0].cases)
	}
	out := fmt.Sprintf("%d eval(s) × %d variant(s) × %d case(s) × %d rep(s) = %d attempts", evals, variants, cases, r.cfg.Reps, r.whole)
	if r.shard != nil {
		out += fmt.Sprintf(", of which shard %d/%d makes %d", r.shard.Index, r.shard.Of, r.total)
	}
	return out
}

func (r *runner) ceilingNote() string {
	if r.cfg.MaxCostUSD == 0 {
		return ""
	}
	return ", no new attempt past " + money(r.ceiling) + r.shareNote()
}

// shareNote says, of a shard's ceiling, what it is a share of.
func (r *runner) shareNote() string {
	if r.shard == nil || r.cfg.MaxCostUSD == 0 {
		return ""
	}
	return fmt.Sprintf(" (shard %d/%d's share of the run's %s)", r.shard.Index, r.shard.Of, money(r.cfg.MaxCostUSD))
}

// run runs one attempt and returns its row.
func (r *runner) run(ctx context.Context, a *attempt) Row {
	row := Row{Eval: a.eval.Name, Variant: a.variant.Name, Fingerprint: a.eval.Fingerprint, Case: a.c.ID, Rep: a.rep, Attempt: a.order + 1}
	began := time.Now()
	name := fmt.Sprintf("%s-r%d", a.c.ID, a.rep)
	trace := filepath.Join(a.set.staging, "traces", name)
	dir := filepath.Join(r.tmp, fmt.Sprintf("%s-%s-%06d", a.eval.Name, a.variant.Name, a.order))
	t := newAttemptT(name, dir)
	app := a.eval.App
	app.Env = map[string]string{}
	for k, v := range a.eval.App.Env {
		app.Env[k] = v
	}
	for k, v := range a.variant.Env {
		app.Env[k] = v
	}
	opts := []fixture.Option{fixture.Recordings(filepath.Join(dir, "recordings"), proxy.ModePassthrough), fixture.IdleTimeout(r.cfg.Timeout)}
	opts = append(opts, a.eval.Options...)
	opts = append(opts, a.variant.Options...)
	opts = append(opts, fixture.Prices(a.eval.Prices), fixture.Reports(filepath.Join(a.set.staging, "traces")))

	// The eval's own code gets a context that an interruption does not
	// end: an interrupted run refuses the agent's model requests, and
	// what the attempts already did is still graded.
	bounded := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), r.cfg.Timeout)
	}
	var (
		f           *fixture.Fixture
		db          database
		conv        *fixture.Conversation
		judgeFrom   = -1 // the judge's model requests, [judgeFrom, judgeTo)
		judgeTo     = -1
		judgeFailed bool
		stage       = HarnessError
		err         error
	)
	t.do(func() {
		if a.eval.Preflight != nil {
			stage = SetupError
			pctx, cancel := bounded()
			err = a.eval.Preflight(pctx, a.c)
			cancel()
			if err != nil {
				return
			}
		}
		stage = HarnessError
		db = r.dbs.take()
		if db.err != nil {
			t.Fatalf("a database for the app: %v", db.err)
		}
		f = fixture.New(t, app, append(opts, fixture.Database(db.url))...)
		r.started(f)
		if a.eval.Setup != nil {
			stage = SetupError
			sctx, cancel := bounded()
			err = a.eval.Setup(sctx, f, a.c)
			cancel()
			if err != nil {
				return
			}
		}
		stage = HarnessError
		conv = f.Run(a.eval.Input(a.c))
		if truncated(conv.ModelRequests) || providerFailed(conv, false) || providerFailed(conv, true) {
			return
		}
		stage = GraderError
		gctx, cancel := bounded()
		defer cancel()
		res := Result{Fixture: f, Conversation: conv, Variant: a.variant.Name, Rep: a.rep, TraceDir: trace}
		var scores map[string]float64
		scores, err = a.eval.Grade(gctx, res, a.c)
		if err == nil {
			err = checkScores(a.eval.Metrics, scores)
		}
		if err != nil {
			return
		}
		// The eval's map is its own: the judge's score goes in a copy.
		scores = maps.Clone(scores)
		if a.eval.Judge != nil {
			judgeFrom = len(f.ModelRequests())
			var v judge.Verdict
			v, err = r.judge(gctx, a, f, conv)
			judgeTo = len(f.ModelRequests())
			if err != nil {
				judgeFailed = true
				err = fmt.Errorf("judge: %w", err)
				return
			}
			scores[JudgeMetric] = v.Score
		}
		row.Scores = scores
		stage = Scored
	})
	// The cost is counted once the cleanups have stopped the proxy, so
	// that a request still going then has ended, from every model
	// request the attempt made, whether or not it got as far as a score.
	// An attempt whose fixture never started spent nothing.
	if f != nil && a.eval.Teardown != nil {
		t.do(func() {
			tctx, cancel := bounded()
			defer cancel()
			if err := a.eval.Teardown(tctx, f, a.c); err != nil {
				t.Errorf("teardown: %v", err)
			}
		})
	}
	if f != nil {
		r.ended(f)
	}
	t.cleanup()
	r.dbs.release(db) // the app has stopped
	var all []fixture.ModelRequest
	if f != nil {
		all = f.ModelRequests()
	}
	r.cost(&row, all, a.eval.Prices, judgeFrom, judgeTo, a.eval.Judge != nil)
	row.DurationMs = float64(time.Since(began).Microseconds()) / 1000
	row.Status, row.Error = classify(ctx, t, stage, err, conv, all, judgeFailed)
	row.Error = redact(row.Error, credentials(app.Env))
	if row.Status != Scored {
		row.Scores = nil
		r.keepLog(trace, row, t, credentials(app.Env))
	}
	if _, err := os.Stat(trace); err == nil {
		row.Trace = filepath.ToSlash(filepath.Join("traces", name))
	}
	return row
}

// keepLog writes what an attempt with no score said (its failure, and
// what the fixture logged: a Command app's output) as attempt.log in its
// trace directory, secrets redacted.
func (r *runner) keepLog(dir string, row Row, t attemptT, known []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s r%d: %s\n%s\n", row.Variant, row.Case, row.Rep, row.Status, row.Error)
	for _, l := range t.logged() {
		b.WriteString(l)
		b.WriteString("\n")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.logf("evals: %s: %v", dir, err)
		return
	}
	if err := atomicfile.Write(filepath.Join(dir, "attempt.log"), 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, redact(b.String(), known))
		return err
	}); err != nil {
		r.logf("evals: %s: %v", dir, err)
	}
}

// classify says what became of an attempt. Definite outcomes first: a
// timeout, a truncated answer; then an interruption, which ends an
// attempt's turn with refused model requests; then what failed.
func classify(ctx context.Context, t attemptT, stage string, err error, conv *fixture.Conversation, all []fixture.ModelRequest, judgeFailed bool) (string, string) {
	failed := t.failure()
	var msg string
	switch {
	case err != nil && failed != "":
		msg = err.Error() + "; " + failed
	case err != nil:
		msg = err.Error()
	default:
		msg = failed
	}
	interrupted := ctx.Err() != nil
	switch {
	case t.timedOut():
		return Timeout, msg
	case conv != nil && truncated(conv.ModelRequests):
		return Truncated, "an answer ended at its token limit (" + truncatedReason(conv.ModelRequests) + ")"
	case interrupted && stage != Scored && (stage != GraderError || judgeFailed):
		return Interrupted, msg
	case conv != nil && providerFailed(conv, false):
		return ProviderError, "a turn failed after the model's provider answered with an error: " + providerErrors(conv.ModelRequests, false)
	case conv != nil && providerFailed(conv, true):
		return Unreachable, "a turn failed before its request reached the model's provider: " + providerErrors(conv.ModelRequests, true)
	case failed != "" && stage == Scored:
		// The attempt scored, but the fixture or its cleanup said
		// something went wrong: not a score to trust.
		return HarnessError, msg
	case failed != "" && conv == nil && providerErrors(all, false) != "":
		return ProviderError, msg + "; the model's provider answered with errors: " + providerErrors(all, false)
	case failed != "" && conv == nil && providerErrors(all, true) != "":
		return Unreachable, msg + "; requests did not reach the model's provider: " + providerErrors(all, true)
	case stage == Scored:
		return Scored, ""
	}
	return stage, msg
}

// judge asks the eval's judge about the attempt's transcript.
func (r *runner) judge(ctx context.Context, a *attempt, f *fixture.Fixture, conv *fixture.Conversation) (judge.Verdict, error) {
	j := f.RubricJudge(a.eval.Judge.Rubric(a.c))
	if a.eval.Judge.Model != "" {
		j.Model = a.eval.Judge.Model
	}
	return j.Assess(ctx, judge.Case{Earlier: conv.Earlier, Transcript: conv.Transcript})
}

// cost counts the attempt's model requests, priced by prices: the
// judge's are those of [judgeFrom, judgeTo), the agent's the rest (a
// Grade that continues the conversation makes the agent's).
func (r *runner) cost(row *Row, ms []fixture.ModelRequest, prices pricing.Table, judgeFrom, judgeTo int, judged bool) {
	var agent, judge pricing.Total
	row.Judged = judged && judgeFrom >= 0
	for i, m := range ms {
		usd, err := prices.Cost(m.Usage)
		if i >= judgeFrom && i < judgeTo {
			judge.Add(m.Usage, usd, err)
			if !slices.Contains(row.JudgeModels, m.Model) {
				row.JudgeModels = append(row.JudgeModels, m.Model)
			}
		} else {
			agent.Add(m.Usage, usd, err)
			if !slices.Contains(row.Models, m.Model) {
				row.Models = append(row.Models, m.Model)
			}
		}
		// A request that failed before it reported its usage is of
		// unknown cost; any other unpriced request (a model without a
		// price, usage the price cannot read, none reported) makes
		// every one like it unknown: a ceiling cannot hold then.
		if err != nil && !errors.Is(err, pricing.ErrIncomplete) && row.cannotHold == "" {
			row.cannotHold = err.Error()
		}
	}
	row.Tokens, row.ModelRequests, row.PricedCostUSD, row.UnpricedRequests = tokensOf(agent), agent.Requests, agent.PricedUSD, len(agent.Unpriced)
	row.JudgeTokens, row.JudgeRequests, row.JudgePricedCostUSD, row.JudgeUnpricedRequests = tokensOf(judge), judge.Requests, judge.PricedUSD, len(judge.Unpriced)
	row.FailedRequests = agent.Count(pricing.ErrIncomplete) + judge.Count(pricing.ErrIncomplete)
	row.Unpriced = pricing.Total{Unpriced: slices.Concat(agent.Unpriced, judge.Unpriced)}.Reasons()
	row.CostUSD = agent.USD()
	if row.Judged {
		row.JudgeCostUSD = judge.USD()
	}
}

// truncated says whether an answer ended at a token limit.
func truncated(ms []fixture.ModelRequest) bool {
	return slices.ContainsFunc(ms, func(m fixture.ModelRequest) bool { return m.Truncated })
}

func truncatedReason(ms []fixture.ModelRequest) string {
	var out []string
	for _, m := range ms {
		if m.Truncated {
			out = append(out, fmt.Sprintf("%s, %s: %s", m.Model, m.Purpose, m.FinishReason))
		}
	}
	return strings.Join(out, "; ")
}

// providerFailed says whether a turn failed where the provider answered
// with an error: the provider's failure, not the agent's.
func providerFailed(conv *fixture.Conversation, unreached bool) bool {
	failedTurn := slices.ContainsFunc(conv.Turns, func(t fixture.Turn) bool { return t.Status == "failed" })
	return failedTurn && providerErrors(conv.ModelRequests, unreached) != ""
}

// providerErrors lists the failed requests the provider answered, or
// with unreached those it never saw: the proxy answered them itself (an
// upstream it could not dial or resolve, a cassette miss), and its
// answers say so with the proxy's prefix.
func providerErrors(ms []fixture.ModelRequest, unreached bool) string {
	var out []string
	for _, m := range ms {
		if m.Error != "" && strings.HasPrefix(m.Error, "agentvcr proxy:") == unreached {
			out = append(out, fmt.Sprintf("%s: %d %s", m.Model, m.Status, m.Error))
		}
	}
	return strings.Join(out, "; ")
}

// checkScores says what is wrong with what Grade returned.
func checkScores(metrics []Metric, scores map[string]float64) error {
	var errs []error
	for _, m := range metrics {
		v, ok := scores[m.ID]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("no value for metric %q", m.ID))
		case math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, fmt.Errorf("metric %q is %v", m.ID, v))
		case m.Kind == Binary && v != 0 && v != 1:
			errs = append(errs, fmt.Errorf("metric %q is binary: %v is neither 0 nor 1", m.ID, v))
		case m.Kind == Count && (v < 0 || v != math.Trunc(v)):
			errs = append(errs, fmt.Errorf("metric %q is a count: %v is not a whole number from 0", m.ID, v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(scores)) {
		if !slices.ContainsFunc(metrics, func(m Metric) bool { return m.ID == k }) {
			errs = append(errs, fmt.Errorf("metric %q is not declared in Metrics", k))
		}
	}
	return errors.Join(errs...)
}

// sortRows orders rows as the plan did.
func sortRows(rows []Row) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Attempt < rows[j].Attempt })
}
