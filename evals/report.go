package evals

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/secrets"
)

// Report is what a Run scored and cost.
type Report struct {
	// Runs are the summaries, one per eval and variant, the baseline
	// first.
	Runs []Summary `json:"runs"`
	// Comparisons are each variant against its eval's baseline.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Planned are the attempts a dry run would make.
	Planned []Planned `json:"planned,omitempty"`
	// Stopped says why attempts were left unstarted: the cost ceiling,
	// or an interruption.
	Stopped string `json:"stopped,omitempty"`
	// CostUSD is what the run spent, judges included, nil when a model
	// request's cost is unknown; PricedCostUSD is what the requests of
	// known cost cost, a lower bound then.
	CostUSD       *float64 `json:"costUsd"`
	PricedCostUSD float64  `json:"pricedCostUsd"`
	// UnknownRequests counts the requests of unknown cost.
	UnknownRequests int `json:"unknownRequests"`
	// Ceiling is what became of --max-cost-usd, nil without one.
	Ceiling *Ceiling `json:"ceiling,omitempty"`
	// Shard says which shard of which run this report is of; Shards,
	// how many shards a merged report put together.
	Shard      *ShardInfo `json:"shard,omitempty"`
	Shards     int        `json:"shards,omitempty"`
	DryRun     bool       `json:"dryRun,omitempty"`
	DurationMs float64    `json:"durationMs"`
}

// Ceiling is what became of a soft cost ceiling.
type Ceiling struct {
	MaxUSD float64 `json:"maxUsd"`
	// ShareOfUSD is, for a shard, the run's ceiling: MaxUSD is the
	// shard's share of it.
	ShareOfUSD float64 `json:"shareOfUsd,omitempty"`
	// Held says the cost of the requests of known cost is within MaxUSD
	// and no request's cost was unknowable (CannotHold); FailedUnknown
	// requests are not in that cost.
	Held bool `json:"held"`
	// Reached says the cost reached it, so that no new attempt started;
	// those running then finished, which is why the cost may be over it.
	Reached bool `json:"reached"`
	// CannotHold says why the ceiling could not be kept: a request whose
	// cost cannot be known (an unpriced model). No attempt started after.
	CannotHold string `json:"cannotHold,omitempty"`
	// FailedUnknown counts requests that failed before they reported
	// their usage: their cost is unknown, and not counted in the total.
	FailedUnknown int `json:"failedUnknown,omitempty"`
}

// hold says whether the ceiling held for a run whose requests of known
// cost cost priced.
func (c *Ceiling) hold(priced float64) { c.Held = priced <= c.MaxUSD && c.CannotHold == "" }

// Planned is an attempt a dry run would make.
type Planned struct {
	Eval    string `json:"eval"`
	Variant string `json:"variant"`
	Case    string `json:"case"`
	Rep     int    `json:"rep"`
	// Source is where the case was read: file:line.
	Source string `json:"source"`
}

// Summary is one eval and variant's results.
type Summary struct {
	Eval    string `json:"eval"`
	Variant string `json:"variant"`
	// Fingerprint is the eval's (Eval.Fingerprint), when it has one.
	Fingerprint string `json:"fingerprint,omitempty"`
	Cases       int    `json:"cases"`
	Reps        int    `json:"reps"`
	// Attempts were planned; Started ran; Scored have scores.
	Attempts int `json:"attempts"`
	Started  int `json:"started"`
	Scored   int `json:"scored"`
	// Excluded counts the started attempts without a score, by class
	// (truncated, provider_error, timeout, ...): kept out of every mean.
	Excluded map[string]int `json:"excluded"`
	// Truncated counts the answers that ended at a token limit.
	Truncated int `json:"truncated"`
	// Unfinished counts the scored attempts of a repetition that did not
	// run every case (the run stopped in it): kept out of the means, so
	// that every case weighs the same. When no repetition ran every case,
	// the means are over what ran, and Partial says so.
	Unfinished int             `json:"unfinished"`
	Partial    bool            `json:"partial,omitempty"`
	Metrics    []MetricSummary `json:"metrics"`
	Cost       Cost            `json:"cost"`
	// JudgeModels are the judge's models; JudgeSharesProvider says one
	// is of a provider the agent used too.
	JudgeModels         []string `json:"judgeModels,omitempty"`
	JudgeSharesProvider bool     `json:"judgeSharesProvider,omitempty"`
	// Dir holds rows.jsonl, failures.jsonl, summary.json and traces/.
	Dir string `json:"dir,omitempty"`
	// Shard says which shard of which run these results are of; Shards,
	// how many shards a merge put together.
	Shard  *ShardInfo `json:"shard,omitempty"`
	Shards int        `json:"shards,omitempty"`
}

// MetricSummary is a metric's mean over the scored attempts.
type MetricSummary struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Mean is over the scored attempts (N), nil when none scored.
	Mean *float64 `json:"mean"`
	N    int      `json:"n"`
	// CI95 is the 95% confidence interval of Mean over repetitions:
	// Mean ± t × the standard error of RepMeans, a binary metric's within
	// 0 and 1. Nil with fewer than two repetitions that scored.
	CI95 *[2]float64 `json:"ci95"`
	// RepMeans are each repetition's mean, by repetition from 1; a
	// repetition with nothing scored has none (null).
	RepMeans []*float64 `json:"repMeans"`
	// Total is the sum, for a count.
	Total float64 `json:"total"`
}

// Cost is what the attempts' model requests cost and used: the agent's,
// and the judge's apart.
type Cost struct {
	// AgentUSD is the agent's model requests', nil when one's cost is
	// unknown; PricedAgentUSD is what the requests of known cost cost, a
	// lower bound then.
	AgentUSD         *float64 `json:"agentUsd"`
	PricedAgentUSD   float64  `json:"pricedAgentUsd"`
	UnpricedRequests int      `json:"unpricedRequests"`
	// Unpriced says why requests' costs are unknown, each reason once.
	Unpriced      []string `json:"unpriced,omitempty"`
	ModelRequests int      `json:"modelRequests"`
	Tokens        Tokens   `json:"tokens"`
	// Judged says a judge scored attempts; JudgeUSD is its requests'
	// cost, nil when unknown.
	Judged                bool     `json:"judged,omitempty"`
	JudgeUSD              *float64 `json:"judgeUsd"`
	JudgeUnpricedRequests int      `json:"judgeUnpricedRequests,omitempty"`
	JudgeRequests         int      `json:"judgeRequests,omitempty"`
	JudgeTokens           Tokens   `json:"judgeTokens"`
}

// Comparison is a variant against its eval's baseline, on the same
// cases and repetitions.
type Comparison struct {
	Eval    string       `json:"eval"`
	Variant string       `json:"variant"`
	Metrics []MetricDiff `json:"metrics"`
	// BaselineUSD and VariantUSD are what the agent cost in each, nil
	// when unknown.
	BaselineUSD *float64 `json:"baselineUsd"`
	VariantUSD  *float64 `json:"variantUsd"`
}

// MetricDiff is a metric's difference, variant minus baseline.
type MetricDiff struct {
	ID       string   `json:"id"`
	Baseline *float64 `json:"baseline"`
	Variant  *float64 `json:"variant"`
	Diff     *float64 `json:"diff"`
	// CI95 is the difference's 95% interval, from the paired differences
	// of the repetitions both scored; nil with fewer than two.
	CI95 *[2]float64 `json:"ci95"`
}

// report sums up the sets.
func (r *runner) report(sets []*set) *Report {
	rep, failedUnknown := assemble(sets, r.cfg.Reps, !r.cfg.DryRun)
	rep.Stopped, rep.DryRun, rep.DurationMs = r.stopped, r.cfg.DryRun, float64(time.Since(r.start).Microseconds())/1000
	if r.cfg.DryRun {
		rep.CostUSD = nil
		for _, a := range r.attempts {
			rep.Planned = append(rep.Planned, Planned{Eval: a.eval.Name, Variant: a.variant.Name, Case: a.c.ID, Rep: a.rep, Source: fmt.Sprintf("%s:%d", a.c.File, a.c.Line)})
		}
	}
	if r.cfg.MaxCostUSD > 0 && !r.cfg.DryRun {
		rep.Ceiling = &Ceiling{MaxUSD: r.ceiling, Reached: r.spent >= r.ceiling, CannotHold: r.cannotHold, FailedUnknown: failedUnknown}
		rep.Ceiling.hold(rep.PricedCostUSD)
		if r.shard != nil {
			rep.Ceiling.ShareOfUSD = r.cfg.MaxCostUSD
		}
	}
	if r.shard != nil {
		sh := *r.shard
		sh.Stopped, sh.Ceiling = rep.Stopped, rep.Ceiling
		rep.Shard = &sh
		for i := range rep.Runs {
			rep.Runs[i].Shard = &sh
		}
	}
	return rep
}

// assemble sums up the sets' rows, and compares each variant with its
// eval's baseline when compare is set; it also returns how many
// requests failed before they reported their usage.
func assemble(sets []*set, reps int, compare bool) (*Report, int) {
	rep := &Report{}
	failedUnknown := 0
	summaries := map[*set]Summary{}
	for _, s := range sets {
		summaries[s] = summary(s, reps)
		rep.Runs = append(rep.Runs, summaries[s])
		for _, row := range s.sorted() {
			rep.PricedCostUSD += row.PricedCostUSD + row.JudgePricedCostUSD
			rep.UnknownRequests += row.UnpricedRequests + row.JudgeUnpricedRequests
			failedUnknown += row.FailedRequests
		}
	}
	if rep.UnknownRequests == 0 {
		v := rep.PricedCostUSD
		rep.CostUSD = &v
	}
	for _, g := range groupByEval(sets) {
		if !compare {
			break
		}
		for _, s := range g[1:] {
			rep.Comparisons = append(rep.Comparisons, comparison(g[0], s, summaries[g[0]], summaries[s], reps))
		}
	}
	return rep, failedUnknown
}

// summary sums up one set.
func summary(s *set, reps int) Summary {
	rows := s.sorted()
	sum := Summary{Eval: s.name, Variant: s.variant, Fingerprint: s.fingerprint, Cases: s.ncases, Reps: reps,
		Started: len(rows), Excluded: map[string]int{}, Dir: s.dir}
	for _, n := range s.planned {
		sum.Attempts += n
	}
	agentKnown, judgeKnown := true, true
	var judgeUSD float64
	agentProviders := map[string]bool{}
	for _, row := range rows {
		if row.Status == Scored {
			sum.Scored++
		} else {
			sum.Excluded[row.Status]++
		}
		if row.Status == Truncated {
			sum.Truncated++
		}
		c := &sum.Cost
		c.ModelRequests += row.ModelRequests
		c.Tokens.addAll(row.Tokens)
		c.PricedAgentUSD += row.PricedCostUSD
		c.UnpricedRequests += row.UnpricedRequests
		for _, why := range row.Unpriced {
			if !slices.Contains(c.Unpriced, why) {
				c.Unpriced = append(c.Unpriced, why)
			}
		}
		if row.CostUSD == nil {
			agentKnown = false
		}
		if row.Judged {
			c.Judged = true
			c.JudgeRequests += row.JudgeRequests
			c.JudgeUnpricedRequests += row.JudgeUnpricedRequests
			c.JudgeTokens.addAll(row.JudgeTokens)
			judgeUSD += row.JudgePricedCostUSD
			if row.JudgeCostUSD == nil {
				judgeKnown = false
			}
		}
		for _, m := range row.Models {
			agentProviders[provider(m)] = true
		}
		for _, m := range row.JudgeModels {
			if !slices.Contains(sum.JudgeModels, m) {
				sum.JudgeModels = append(sum.JudgeModels, m)
			}
		}
	}
	for _, m := range sum.JudgeModels {
		if agentProviders[provider(m)] {
			sum.JudgeSharesProvider = true
		}
	}
	if agentKnown && len(rows) > 0 {
		v := sum.Cost.PricedAgentUSD
		sum.Cost.AgentUSD = &v
	}
	if sum.Cost.Judged && judgeKnown {
		sum.Cost.JudgeUSD = &judgeUSD
	}
	// The means are over the repetitions that ran every case.
	fin := finishedReps(rows, s.planned)
	anyFinished := len(fin) > 0
	var scored []*Row
	for i, row := range rows {
		if row.Status != Scored {
			continue
		}
		if anyFinished && !fin[row.Rep] {
			sum.Unfinished++
			continue
		}
		scored = append(scored, &rows[i])
	}
	sum.Partial = !anyFinished && len(rows) > 0
	for _, m := range s.metrics {
		sum.Metrics = append(sum.Metrics, metricSummary(m, scored, reps))
	}
	return sum
}

func (t *Tokens) addAll(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
}

// provider is a model id's provider: "anthropic" of
// "anthropic/claude-sonnet-4.5".
func provider(model string) string {
	p, _, ok := strings.Cut(model, "/")
	if !ok {
		return model
	}
	return p
}

// metricSummary is m's mean over rows (all scored), with its interval
// over repetitions.
func metricSummary(m Metric, rows []*Row, reps int) MetricSummary {
	ms := MetricSummary{ID: m.ID, Kind: m.Kind, RepMeans: make([]*float64, reps)}
	var all []float64
	byRep := make([][]float64, reps)
	for _, row := range rows {
		v := row.Scores[m.ID]
		all = append(all, v)
		byRep[row.Rep-1] = append(byRep[row.Rep-1], v)
	}
	ms.N = len(all)
	if ms.N == 0 {
		return ms
	}
	mu := mean(all)
	ms.Mean = &mu
	for _, v := range all {
		ms.Total += v
	}
	var means []float64
	for i, xs := range byRep {
		if len(xs) > 0 {
			v := mean(xs)
			ms.RepMeans[i] = &v
			means = append(means, v)
		}
	}
	if h, ok := halfWidth(means); ok {
		lo, hi := mu-h, mu+h
		if m.Kind == Binary {
			lo, hi = max(lo, 0), min(hi, 1)
		}
		ms.CI95 = &[2]float64{lo, hi}
	}
	return ms
}

// comparison compares variant v with the baseline b on the repetitions
// both finished (ran every case they planned), repetition by
// repetition: each ran the same cases in both. When neither finished
// one, on those both started.
func comparison(b, v *set, bs, vs Summary, reps int) Comparison {
	c := Comparison{Eval: v.name, Variant: v.variant, BaselineUSD: bs.Cost.AgentUSD, VariantUSD: vs.Cost.AgentUSD}
	bRows, vRows := b.sorted(), v.sorted()
	bFin, vFin := finishedReps(bRows, b.planned), finishedReps(vRows, v.planned)
	common := map[int]bool{}
	for rep := range bFin {
		if vFin[rep] {
			common[rep] = true
		}
	}
	if len(common) == 0 {
		for _, row := range bRows {
			if slices.ContainsFunc(vRows, func(x Row) bool { return x.Rep == row.Rep }) {
				common[row.Rep] = true
			}
		}
	}
	keep := func(rows []Row) []*Row {
		var out []*Row
		for i, row := range rows {
			if row.Status == Scored && common[row.Rep] {
				out = append(out, &rows[i])
			}
		}
		return out
	}
	bKept, vKept := keep(bRows), keep(vRows)
	for _, m := range v.metrics {
		bm, vm := metricSummary(m, bKept, reps), metricSummary(m, vKept, reps)
		d := MetricDiff{ID: m.ID, Baseline: bm.Mean, Variant: vm.Mean}
		if bm.Mean != nil && vm.Mean != nil {
			diff := *vm.Mean - *bm.Mean
			d.Diff = &diff
			var pairs []float64
			for rp := range reps {
				if bm.RepMeans[rp] != nil && vm.RepMeans[rp] != nil {
					pairs = append(pairs, *vm.RepMeans[rp]-*bm.RepMeans[rp])
				}
			}
			if h, ok := halfWidth(pairs); ok {
				d.CI95 = &[2]float64{diff - h, diff + h}
			}
		}
		c.Metrics = append(c.Metrics, d)
	}
	return c
}

// sorted is the set's rows in plan order, sorted in place: for reading
// once the attempts have ended (a merge holds many of them: a copy
// each time would hold them twice).
func (s *set) sorted() []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	sortRows(s.rows)
	return s.rows
}

// finishedReps are the repetitions in which every attempt planned was
// started.
func finishedReps(rows []Row, planned map[int]int) map[int]bool {
	started := map[int]int{}
	for _, row := range rows {
		started[row.Rep]++
	}
	out := map[int]bool{}
	for rep, n := range started {
		if n == planned[rep] {
			out[rep] = true
		}
	}
	return out
}

// write writes each set's results into its staging directory and then
// puts it in place of the last run's: <out>/<eval>/<variant>. An
// interrupted run's go to <variant>.interrupted instead, so that an
// interruption never takes the place of the last whole run.
func (r *runner) write(sets []*set, rep *Report) error {
	for i, s := range sets {
		rows := s.sorted()
		var failures []failure
		for _, row := range rows {
			if row.Status != Scored {
				failures = append(failures, failure{Case: row.Case, Rep: row.Rep, Class: row.Status, Error: row.Error, Trace: row.Trace})
			}
		}
		if rep.Stopped == "interrupted" {
			s.dir += ".interrupted"
			rep.Runs[i].Dir = s.dir
		}
		if err := writeJSONL(filepath.Join(s.staging, "rows.jsonl"), rows); err != nil {
			return err
		}
		if err := writeJSONL(filepath.Join(s.staging, "failures.jsonl"), failures); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(s.staging, "summary.json"), rep.Runs[i]); err != nil {
			return err
		}
		for _, c := range rep.Comparisons {
			if c.Eval == s.name && c.Variant == s.variant {
				if err := writeJSON(filepath.Join(s.staging, "comparison.json"), c); err != nil {
					return err
				}
			}
		}
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("evals: replace the last run's results: %w", err)
		}
		if err := os.Rename(s.staging, s.dir); err != nil {
			return fmt.Errorf("evals: %w", err)
		}
	}
	return nil
}

// failure is a line of failures.jsonl: an attempt without a score.
type failure struct {
	Case  string `json:"case"`
	Rep   int    `json:"rep"`
	Class string `json:"class"`
	Error string `json:"error,omitempty"`
	Trace string `json:"trace,omitempty"`
}

func writeJSONL[T any](path string, rows []T) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeJSON(path string, v any) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// redact replaces the secrets in a message: the values known to be
// secrets (the app's credentials), and whatever else the secret
// detectors find; an error may quote what the app or a tool said.
func redact(s string, known []string) string {
	for _, v := range known {
		s = strings.ReplaceAll(s, v, "<<redacted>>")
	}
	return secrets.Default().Redact(s, func(m secrets.Match) string { return "<<redacted " + m.Rule + ">>" })
}

// credentials are the values of env whose names say they hold a
// credential (API_KEY, TOKEN, SECRET...), longest first.
func credentials(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if len(v) >= 6 && secrets.Default().Named(k) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// num writes a value briefly: 1, 0.75, 3.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// money writes US dollars to a hundredth of a cent below a dollar, to
// the cent above.
func money(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
