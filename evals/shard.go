package evals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Shard is one of a run's n equal parts: Index from 1 to Of. Every
// shard of a run computes the same plan and takes every Of-th attempt
// of it, from its Index-th: shards need not talk, and each makes as many
// attempts as another, give or take one.
type Shard struct {
	Index, Of int
}

// ParseShard reads a shard as Playwright's and vitest's --shard write
// it: "2/3" is the second of three.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	of, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || of < 1 || index < 1 || index > of {
		return Shard{}, fmt.Errorf("shard %q: want i/n, from 1/n to n/n, such as 2/3", s)
	}
	return Shard{Index: index, Of: of}, nil
}

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
	// fingerprints, variants, metrics, judges and cases, the
	// repetitions, --cases and the cost ceiling. The evals' code (App,
	// Grade) is not in it: a change there is the eval's Fingerprint's
	// to show.
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
		if a.order%s.Of == s.Index-1 {
			out = append(out, a)
		}
	}
	return out
}

// definition is a digest of what a run of cfg over sets measures.
func definition(cfg Config, sets []*set) string {
	type evalDef struct {
		Name, Fingerprint string
		Variants          []string
		Metrics           []Metric
		Judge             string
		Cases             string
	}
	def := struct {
		Reps, Cases int
		MaxCostUSD  float64
		Evals       []evalDef
	}{Reps: cfg.Reps, Cases: cfg.Cases, MaxCostUSD: cfg.MaxCostUSD}
	for _, g := range groupByEval(sets) {
		e := g[0].eval
		d := evalDef{Name: e.Name, Fingerprint: e.Fingerprint, Metrics: g[0].metrics, Cases: casesDigest(g[:1])}
		if e.Judge != nil {
			d.Judge = "judge " + e.Judge.Model
		}
		for _, s := range g {
			d.Variants = append(d.Variants, s.variant)
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
