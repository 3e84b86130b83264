package evals_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
)

// writeShard writes one shard's results of a run of one eval over two
// cases, once, as a shard's run writes them: its summary, and a row for
// its case that cost usd.
func writeShard(t *testing.T, dir string, index int, usd float64, ceiling *evals.Ceiling, stopped string) {
	t.Helper()
	d := filepath.Join(dir, "answers", "baseline")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	row := evals.Row{Eval: "answers", Variant: "baseline", Case: []string{"a", "b"}[index-1], Rep: 1, Attempt: index,
		Status: evals.Scored, Scores: map[string]float64{"correct": 1}, CostUSD: &usd, PricedCostUSD: usd}
	b, _ := json.Marshal(row)
	if err := os.WriteFile(filepath.Join(d, "rows.jsonl"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := evals.Summary{Eval: "answers", Variant: "baseline", Cases: 2, Reps: 1, Attempts: 1, Started: 1,
		Metrics: []evals.MetricSummary{{ID: "correct", Kind: evals.Binary}},
		Shard: &evals.ShardInfo{Run: "r1", Index: index, Of: 2, Definition: "sha256:d", Cases: "sha256:c", Sets: []string{"answers/baseline"},
			CeilingShareUSD: 0.5, Ceiling: ceiling, Stopped: stopped}}
	b, _ = json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(d, "summary.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The merged report's ceiling is the run's: a shard that stopped at its
// share says so, but the run's ceiling is reached only when the run's
// cost reaches it, and it held when the known cost stayed within it.
func TestTheMergedCeilingIsTheRunsOwn(t *testing.T) {
	for _, tc := range []struct {
		name          string
		costs         [2]float64
		reached, held bool
	}{
		{"a shard past its share, the run within", [2]float64{0.6, 0.1}, false, true},
		{"the run past its ceiling", [2]float64{0.6, 0.5}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shards := t.TempDir()
			writeShard(t, filepath.Join(shards, "1"), 1, tc.costs[0], &evals.Ceiling{MaxUSD: 0.5, ShareOfUSD: 1, Reached: true, Held: false}, "the cost so far reached the ceiling")
			writeShard(t, filepath.Join(shards, "2"), 2, tc.costs[1], &evals.Ceiling{MaxUSD: 0.5, ShareOfUSD: 1, Reached: tc.costs[1] >= 0.5, Held: tc.costs[1] <= 0.5}, "")
			rep, err := evals.Merge(context.Background(), evals.Config{Out: filepath.Join(t.TempDir(), "merged")}, shards)
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Ceiling
			if c == nil || c.MaxUSD != 1 || c.Reached != tc.reached || c.Held != tc.held || !strings.HasPrefix(rep.Stopped, "shard 1/2: the cost so far") {
				t.Fatalf("ceiling %+v, stopped %q", c, rep.Stopped)
			}
		})
	}
}
