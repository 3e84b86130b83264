package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/tbrun"
	"github.com/agentvcr/agentvcr/proxy"
)

// BenchmarkEvalRunner measures what the eval runner costs per attempt
// on the reference agent, with a stand-in gateway that answers at once
// (fakeai.NewServer: router, title, one agent step): each attempt gets
// a fresh database, a fresh app and proxy, the input and its grade.
//
// It reports the median attempt (attempt-ms) beside two baselines: the
// same input run again and again on one warm fixture (warm-run-ms: the
// agent's own work and the fixture's), and a fresh fixture per run
// without the runner, as a go test makes one per test (fresh-ms: a
// database made, the app started, fixture-new-ms of it, the run, the
// cleanup). overhead-ms, the attempt less the warm run, is what a fresh
// attempt costs (target: at most 100 ms); runner-ms, the attempt less
// the fresh fixture, is the runner's own part (the grade, the rows, the
// traces, less what making databases ahead saves). It reports attempts
// per second at 10 and 40 attempts (the cost must stay flat), one and
// two at a time.
func BenchmarkEvalRunner(b *testing.B) {
	for _, tc := range []struct{ attempts, concurrency int }{{10, 1}, {40, 1}, {40, 2}} {
		b.Run(fmt.Sprintf("attempts=%d/concurrency=%d", tc.attempts, tc.concurrency), func(b *testing.B) {
			for b.Loop() {
				benchEvalRunner(b, tc.attempts, tc.concurrency)
			}
		})
	}
}

func benchEvalRunner(b *testing.B, attempts, concurrency int) {
	up := fakeai.NewServer(b)
	script := func(n int) {
		for range n {
			up.Respond(benchRouter, fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}))
			up.Respond(benchTitler, fakeai.Text("A sum"))
			up.Respond(benchLoop, fakeai.Text("17 + 26 = 43."))
		}
	}
	cases := filepath.Join(b.TempDir(), "cases.jsonl")
	if err := os.WriteFile(cases, []byte(`{"id":"sum","input":"What is 17 + 26?","expected":"43","tags":["web"]}`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	e := agentevals.Answers("bench-key", fixture.Upstream(up.Transport()))
	e.Cases = evals.FromJSONL(cases)
	opts := func() []fixture.Option {
		// The model passed through, as an attempt's is.
		return []fixture.Option{fixture.Upstream(up.Transport()), fixture.Recordings(b.TempDir(), proxy.ModePassthrough)}
	}

	// The warm baseline: the same input, run on one fixture.
	f := fixture.New(b, e.App, opts()...)
	script(attempts + 1)
	f.Run(fixture.WebMessage("What is 17 + 26?")) // warm-up
	var warm []float64
	for range attempts {
		start := time.Now()
		c := f.Run(fixture.WebMessage("What is 17 + 26?"))
		warm = append(warm, ms(time.Since(start)))
		if len(c.Replies) != 1 {
			b.Fatalf("the warm run: %+v", c)
		}
	}

	// The fresh baseline: a fixture per run, as a go test makes one.
	script(attempts)
	var fresh, news []float64
	for i := range attempts {
		t := tbrun.New(fmt.Sprintf("fresh-%d", i), b.TempDir())
		start := time.Now()
		t.Do(func() {
			f := fixture.New(t, e.App, opts()...)
			news = append(news, ms(time.Since(start)))
			f.Run(fixture.WebMessage("What is 17 + 26?"))
		})
		t.RunCleanups()
		fresh = append(fresh, ms(time.Since(start)))
		if t.Failed() {
			b.Fatalf("a fresh fixture: %q", t.Failures())
		}
	}

	script(attempts)
	start := time.Now()
	rep, err := evals.Run(context.Background(), evals.Config{Reps: attempts, Concurrency: concurrency, Out: b.TempDir()}, e)
	wall := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if s := rep.Runs[0]; s.Scored != attempts {
		b.Fatalf("%d of %d attempts scored: %+v", s.Scored, attempts, s)
	}
	var took []float64
	for _, r := range readRows(b, filepath.Join(rep.Runs[0].Dir, "rows.jsonl")) {
		took = append(took, r.DurationMs)
	}
	b.ReportMetric(float64(attempts)/wall.Seconds(), "attempts/s")
	b.ReportMetric(median(took), "attempt-ms")
	b.ReportMetric(median(warm), "warm-run-ms")
	b.ReportMetric(median(fresh), "fresh-ms")
	b.ReportMetric(median(news), "fixture-new-ms")
	b.ReportMetric(median(took)-median(warm), "overhead-ms")
	b.ReportMetric(median(took)-median(fresh), "runner-ms")
}

func readRows(tb testing.TB, path string) []evals.Row {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var rows []evals.Row
	dec := json.NewDecoder(bytes.NewReader(raw))
	for dec.More() {
		var r evals.Row
		if err := dec.Decode(&r); err != nil {
			tb.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// BenchmarkMerge measures evals.Merge on 10 and 100 shards of 1,000
// rows each (an eval of 10,000 cases and 10 repetitions, split): its
// time, rows per second (flat as shards grow) and its peak heap, sampled
// as it runs. The rows are a scored binary metric with costs and tokens;
// the shards have no traces to copy.
func BenchmarkMerge(b *testing.B) {
	for _, shards := range []int{10, 100} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			dir := writeShards(b, shards, 1000)
			for b.Loop() {
				out := b.TempDir()
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				var peak atomic.Uint64
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					t := time.NewTicker(2 * time.Millisecond)
					defer t.Stop()
					for {
						var m runtime.MemStats
						runtime.ReadMemStats(&m)
						if m.HeapAlloc > peak.Load() {
							peak.Store(m.HeapAlloc)
						}
						select {
						case <-stop:
							return
						case <-t.C:
						}
					}
				}()
				start := time.Now()
				rep, err := evals.Merge(context.Background(), evals.Config{Out: out}, dir)
				took := time.Since(start)
				close(stop)
				<-sampled
				if err != nil {
					b.Fatal(err)
				}
				if s := rep.Runs[0]; s.Started != shards*1000 {
					b.Fatalf("merged %d rows, want %d", s.Started, shards*1000)
				}
				b.ReportMetric(ms(took), "merge-ms")
				b.ReportMetric(float64(shards*1000)/took.Seconds(), "rows/s")
				b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapAlloc))/(1<<20), "peak-heap-MB")
			}
		})
	}
}

// writeShards writes n shards' results of rows rows each, as shards of
// one run write them.
func writeShards(tb testing.TB, n, rows int) string {
	tb.Helper()
	dir := tb.TempDir()
	reps := 10
	cases := n * rows / reps
	sets := []string{"bench/baseline"}
	for i := 1; i <= n; i++ {
		sd := filepath.Join(dir, fmt.Sprintf("shard-%d", i), "bench", "baseline")
		if err := os.MkdirAll(sd, 0o755); err != nil {
			tb.Fatal(err)
		}
		f, err := os.Create(filepath.Join(sd, "rows.jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for a := i - 1; a < cases*reps; a += n {
			cost := 0.0123 + float64(a%7)/1000
			row := evals.Row{Eval: "bench", Variant: "baseline", Case: fmt.Sprintf("case-%05d", a%cases), Rep: a/cases + 1, Attempt: a + 1,
				Status: evals.Scored, Scores: map[string]float64{"correct": float64(a % 2)}, CostUSD: &cost, PricedCostUSD: cost,
				Tokens: evals.Tokens{Input: 1200, Output: 80}, ModelRequests: 3, Models: []string{"anthropic/claude-sonnet-4.5"},
				DurationMs: 250, Trace: fmt.Sprintf("traces/case-%05d-r%d", a%cases, a/cases+1)}
			if err := enc.Encode(row); err != nil {
				tb.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
		sum := evals.Summary{Eval: "bench", Variant: "baseline", Cases: cases, Reps: reps, Attempts: rows, Started: rows,
			Metrics: []evals.MetricSummary{{ID: "correct", Kind: evals.Binary}},
			Shard:   &evals.ShardInfo{Run: "bench-run", Index: i, Of: n, Definition: "sha256:bench", Cases: "sha256:cases", Sets: sets}}
		b, err := json.Marshal(sum)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sd, "summary.json"), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}
