package evalcmd_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
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

// casesFile writes lines as a cases file and returns its path.
func casesFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// answers is an eval of an app that a dry run and a list never start.
func answers(cases string) evals.Eval {
	return evals.Eval{
		Name:  "answers",
		App:   fixture.App{Name: "never-started", Command: []string{"false"}},
		Cases: evals.FromJSONL(cases),
		Input: func(c evals.Case) fixture.Input { return fixture.SlackMention(c.Text()) },
		Grade: func(context.Context, evals.Result, evals.Case) (map[string]float64, error) {
			return map[string]float64{"correct": 1}, nil
		},
		Metrics: []evals.Metric{{ID: "correct", Kind: evals.Binary}},
		Prices:  pricing.Table{"anthropic/claude-sonnet-4.5": {InputPerMTok: 3, OutputPerMTok: 15}},
		Variants: []evals.Variant{{Name: "haiku", Description: "the fast model",
			Env: map[string]string{"AGENT_MODEL": "anthropic/claude-haiku-4.5"}}},
	}
}

func TestTheCommandListsAndPlans(t *testing.T) {
	e := answers(casesFile(t, `{"id":"a","input":"x","expected":"y"}`, `{"id":"b","input":"z","expected":"w"}`))
	code, stdout, stderr := command(t, []string{"--list"}, e)
	if code != 0 || !strings.Contains(stdout, "answers  2      correct (binary)  haiku") {
		t.Fatalf("list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = command(t, []string{"--dry-run", "--variant", "haiku", "--reps", "2"}, e)
	if code != 0 || !strings.Contains(stdout, "dry run: 8 attempts would run") || strings.Count(stdout, "answers  haiku") != 4 {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestTheCommandsUsageErrors(t *testing.T) {
	good := answers(casesFile(t, `{"id":"a","input":"x","expected":"y"}`))
	bad := answers(casesFile(t, `{"id":"a","input":"x"}`, `{"id":"a","input":"y"}`))
	keyless := good
	keyless.Preflight = func(context.Context, evals.Case) error {
		return fmt.Errorf("%w: MODEL_API_KEY is not set", evals.ErrMissingCredential)
	}
	tests := []struct {
		name string
		args []string
		e    evals.Eval
		want string
	}{
		{"no such eval", []string{"nope", "--dry-run"}, good, `no eval "nope" (have: answers)`},
		{"no such variant", []string{"--variant", "nope", "--dry-run"}, good, `eval answers has no variant "nope" (it has: haiku)`},
		{"no repetitions", []string{"--reps", "0", "--dry-run"}, good, "--reps and --concurrency take 1 or more"},
		{"an unknown flag", []string{"--repz", "2"}, good, "unknown flag: --repz (eval --help lists its flags)"},
		{"a bad cases file", []string{"--dry-run"}, bad, `cases.jsonl:2: id "a" is that of line 1 too`},
		{"a ceiling without prices", []string{"--max-cost-usd", "1", "--dry-run"}, func() evals.Eval { e := good; e.Prices = nil; return e }(), "has no Prices"},
		{"a missing credential", []string{"--out", t.TempDir()}, keyless, "eval answers: missing credential: MODEL_API_KEY is not set"},
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

// A database server that does not answer is an operation that failed,
// not a usage error, said once, and nothing is written.
func TestAnUnreachableDatabaseFailsTheRun(t *testing.T) {
	e := answers(casesFile(t, `{"id":"a","input":"x","expected":"y"}`))
	out := filepath.Join(t.TempDir(), "results")
	code, _, stderr := command(t, []string{"--out", out, "--database-url", "postgres://nobody:hunter2hunter2@127.0.0.1:1/none"}, e)
	// pgx tries it with TLS and without: its dial error is said once.
	if code != 1 || !strings.Contains(stderr, "the database server (--database-url)") || strings.Contains(stderr, "hunter2") || strings.Count(stderr, "dial error") != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the results directory was made: %v", err)
	}
}
