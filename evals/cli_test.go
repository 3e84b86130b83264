package evals_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/fakeai"
)

// command runs the eval command with args and returns its exit code,
// stdout and stderr.
func command(t *testing.T, args []string, es ...evals.Eval) (int, string, string) {
	t.Helper()
	cmd := evals.Command(es...)
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	code := evals.Execute(context.Background(), cmd, &stderr)
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

func TestTheCommandsUsageErrors(t *testing.T) {
	up := fakeai.NewServer(t)
	good := answers(up, casesFile(t, `{"id":"a","input":"x","expected":"y"}`))
	bad := answers(up, casesFile(t, `{"id":"a","input":"x"}`, `{"id":"a","input":"y"}`))
	tests := []struct {
		name string
		args []string
		e    evals.Eval
		want string
	}{
		{"no such eval", []string{"nope", "--dry-run"}, good, `no eval "nope" (have: answers)`},
		{"no such variant", []string{"--variant", "nope", "--dry-run"}, good, `eval answers has no variant "nope" (it has: haiku)`},
		{"no repetitions", []string{"--reps", "0", "--dry-run"}, good, "--reps and --concurrency take 1 or more"},
		{"an unknown flag", []string{"--repz", "2"}, good, "unknown flag: --repz"},
		{"a bad cases file", []string{"--dry-run"}, bad, `cases.jsonl:2: id "a" is that of line 1 too`},
		{"a ceiling without prices", []string{"--max-cost-usd", "1", "--dry-run"}, func() evals.Eval { e := good; e.Prices = nil; return e }(), "has no Prices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := command(t, tt.args, tt.e)
			if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and %q", code, stderr, stdout, tt.want)
			}
		})
	}
}
