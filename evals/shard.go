package evals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/pricing"
)

// Shard is one of a run's n equal parts: Index from 1 to Of. Every
// shard of a run computes the same plan and takes every Of-th case and
// repetition of it, from its Index-th, with all its variants: shards
// need not talk, each makes as many attempts as another, give or take a
// case's variants, and a variant and its baseline run each case and
// repetition on one machine, so that their comparison is not one of
// machines.
type Shard struct {
	Index, Of int
}

// ParseShard reads a shard as Playwright's and vitest's --shard write
// it: "2/3" is the second of three.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	of, err2 := strconv.Atoi(n)
	if sh := (Shard{Index: index, Of: of}); ok && err1 == nil && err2 == nil && sh.valid() {
		return sh, nil
	}
	return Shard{}, fmt.Errorf("shard %q: want i/n, from 1/n to n/n, such as 2/3", s)
}

// valid says whether s is one of its run's parts: 1/n to n/n.
func (s Shard) valid() bool { return s.Of >= 1 && s.Index >= 1 && s.Index <= s.Of }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Of) }

// ShardInfo is what a shard's results say of the run they are a part
// of, so that Merge can put the shards together, and refuse those that
// are not of one run.
type ShardInfo struct {
	// Run is the id every shard of the run was given (Config.RunID).
	Run   string `json:"run"`
	Index int    `json:"index"`
	Of    int    `json:"of"`
	// Definition is a digest of what the run measures: its evals, their
	// fingerprints, variants (and the environment each sets, credentials
	// aside), metrics, judges, prices and cases, the repetitions, --cases
	// and the cost ceiling. The evals' code (App, Grade, Setup) is not in
	// it: a change there is the eval's Fingerprint's to show.
	Definition string `json:"definition"`
	// Cases is a digest of the cases the run planned.
	Cases string `json:"cases"`
	// Sets are the run's evals and variants, as <eval>/<variant>, in the
	// run's order.
	Sets []string `json:"sets"`
	// CeilingShareUSD is this shard's share of the run's --max-cost-usd,
	// by its share of the attempts.
	CeilingShareUSD float64 `json:"ceilingShareUsd,omitempty"`
	// Stopped and Ceiling are the shard's own: why it left attempts
	// unstarted, and what became of its share of the ceiling.
	Stopped string   `json:"stopped,omitempty"`
	Ceiling *Ceiling `json:"ceiling,omitempty"`
}

// shardOf is the shard's part of the plan.
func shardOf(all []*attempt, s Shard) []*attempt {
	var out []*attempt
	for _, a := range all {
		if a.group%s.Of == s.Index-1 {
			out = append(out, a)
		}
	}
	return out
}

// definition is a digest of what a run of cfg over sets measures.
func definition(cfg Config, sets []*set) string {
	type variantDef struct {
		Name string
		Env  map[string]string // a credential's value is not what a run measures
	}
	type evalDef struct {
		Name, Fingerprint string
		Variants          []variantDef
		Metrics           []Metric
		Judge             string
		Cases             string
		Prices            pricing.Table
	}
	def := struct {
		Reps, Cases int
		MaxCostUSD  float64
		Evals       []evalDef
	}{Reps: cfg.Reps, Cases: cfg.Cases, MaxCostUSD: cfg.MaxCostUSD}
	for _, g := range groupByEval(sets) {
		e := g[0].eval
		d := evalDef{Name: e.Name, Fingerprint: e.Fingerprint, Metrics: g[0].metrics, Cases: casesDigest(g[:1]), Prices: e.Prices}
		if e.Judge != nil {
			d.Judge = "judge " + e.Judge.Model
		}
		for _, s := range g {
			v, _ := e.variant(s.variant)
			vd := variantDef{Name: v.Name, Env: map[string]string{}}
			for k, val := range v.Env {
				if secrets.Default().Named(k) {
					val = "(a credential)"
				}
				vd.Env[k] = val
			}
			d.Variants = append(d.Variants, vd)
		}
		def.Evals = append(def.Evals, d)
	}
	return digest(def)
}

// casesDigest is a digest of the sets' evals' cases, as planned.
func casesDigest(sets []*set) string {
	var all [][]Case
	for _, g := range groupByEval(sets) {
		all = append(all, g[0].cases)
	}
	return digest(all)
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain data: it always encodes
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// valid says what makes a shard's summary one a merge cannot trust: the
// names it gives become paths under the merge's --out.
func (sh *ShardInfo) valid(sum Summary) error {
	switch {
	case !namePattern.MatchString(sum.Eval) || !namePattern.MatchString(sum.Variant):
		return fmt.Errorf("eval %q, variant %q: want letters, digits, '.', '_' and '-'", sum.Eval, sum.Variant)
	case !namePattern.MatchString(sh.Run):
		return fmt.Errorf("run id %q: want letters, digits, '.', '_' and '-'", sh.Run)
	case !(Shard{Index: sh.Index, Of: sh.Of}).valid():
		return fmt.Errorf("shard %d/%d: want i/n, from 1/n to n/n", sh.Index, sh.Of)
	case sum.Reps < 1 || sum.Reps > maxReps:
		return fmt.Errorf("%d repetitions: a run makes 1 to %d", sum.Reps, maxReps)
	case sum.Cases < 0 || sum.Cases > maxCases:
		return fmt.Errorf("%d cases: an eval has 0 to %d", sum.Cases, maxCases)
	case !slices.Contains(sh.Sets, sum.Eval+"/"+sum.Variant):
		return fmt.Errorf("%s/%s is not among the run's results (%s)", sum.Eval, sum.Variant, strings.Join(sh.Sets, ", "))
	}
	for _, key := range sh.Sets {
		e, v, ok := strings.Cut(key, "/")
		if !ok || !namePattern.MatchString(e) || !namePattern.MatchString(v) {
			return fmt.Errorf("the run's results %q: want <eval>/<variant>", key)
		}
	}
	return nil
}
