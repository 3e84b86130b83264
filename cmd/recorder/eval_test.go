package main

import (
	"strings"
	"testing"
)

// recorder eval runs the reference agent's evals: a dry run and the list
// need no key, a run does and says which.
func TestEvalNeedsTheGatewayKeyToRun(t *testing.T) {
	t.Setenv("AI_GATEWAY_API_KEY", "")
	out := t.TempDir()
	r := recorder(t, "", "eval", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, "AI_GATEWAY_API_KEY is not set") {
		t.Fatalf("without a key: %+v", r)
	}
	r = recorder(t, "", "eval", "--dry-run", "--variant", "haiku", "--cases", "3")
	if r.code != 0 || !strings.Contains(r.stdout, "dry run: 6 attempts would run") || strings.Count(r.stdout, "answers  haiku") != 3 {
		t.Fatalf("dry run: %+v", r)
	}
	r = recorder(t, "", "eval", "--list")
	if r.code != 0 || !strings.Contains(r.stdout, "answers  10") || !strings.Contains(r.stdout, "haiku") {
		t.Fatalf("list: %+v", r)
	}
}
