package agentevals_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fakeai"
)

// command runs the eval command with args and returns its exit code,
// stdout and stderr.
func command(t *testing.T, args []string, es ...evals.Eval) (int, string, string) {
	t.Helper()
	cmd := evalcmd.Command(es...)
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	code := evalcmd.Execute(t.Context(), cmd, &stderr)
	return code, stdout.String(), stderr.String()
}

// The command line runs an eval, says what it does on stderr as it goes,
// and prints the report as JSON for a script.
func TestTheCommandRunsAndReportsJSON(t *testing.T) {
	up := fakeai.NewServer(t)
	scriptTurns(up, 4)
	up.Respond(loop, fakeai.Text("200"), fakeai.Text("43"), fakeai.Text("200"), fakeai.Text("41"))
	e := answers(up, casesFile(t, `{"id":"minutes","input":"How many minutes are in 3 hours and 20 minutes?","expected":"200"}`,
		`{"id":"sum","input":"What is 17 + 26?","expected":"43"}`))
	out := t.TempDir()
	code, stdout, stderr := command(t, []string{"--out", out, "--reps", "2", "--json"}, e)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep evals.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, stdout)
	}
	if m := rep.Runs[0].Metrics[0]; m.ID != "correct" || *m.Mean != 0.75 || m.CI95 == nil || m.N != 4 {
		t.Fatalf("correct: %+v", m)
	}
	if !strings.Contains(stderr, "evals: 1 eval(s) × 1 variant(s) × 2 case(s) × 2 rep(s) = 4 attempts") || strings.Count(stderr, "evals: [") != 4 ||
		!strings.Contains(stderr, "running cost $") {
		t.Fatalf("progress:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "answers", "baseline", "summary.json")); err != nil {
		t.Fatal(err)
	}
}

// Without the gateway's key the eval stops before it starts, naming the
// variable, with the exit code of a usage error; a dry run needs none.
func TestTheEvalWithoutItsKeyStopsBeforeItStarts(t *testing.T) {
	e := agentevals.Answers("")
	out := filepath.Join(t.TempDir(), "results")
	code, _, stderr := command(t, []string{"--out", out}, e)
	if code != 2 || !strings.Contains(stderr, "AI_GATEWAY_API_KEY is not set") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a run without its key wrote results: %v", err)
	}
	if code, stdout, stderr := command(t, []string{"--dry-run", "--cases", "2"}, e); code != 0 || !strings.Contains(stdout, "dry run: 2 attempts would run") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A shard without the run's id, or an Indexed Job's index past its
	// completions, stops before anything starts too.
	if code, _, stderr := command(t, []string{"--out", out, "--shard", "1/3"}, e); code != 2 || !strings.Contains(stderr, "shard 1/3 needs the id of the run its shards share") {
		t.Fatalf("a shard without a run id: exit %d: %s", code, stderr)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "3")
	t.Setenv("JOB_COMPLETIONS", "3")
	if code, _, stderr := command(t, []string{"--out", out, "--run-id", "r1"}, e); code != 2 || !strings.Contains(stderr, `$JOB_COMPLETION_INDEX "3" of $JOB_COMPLETIONS "3": want an index from 0 to completions - 1`) {
		t.Fatalf("an index past the completions: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused shard wrote results: %v", err)
	}
}
