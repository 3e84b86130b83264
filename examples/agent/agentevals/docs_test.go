package agentevals_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the example output in docs/evals.md")

// The example output in docs/evals.md is what the command prints: run
// with -update to rewrite it.
func TestTheDocsShowWhatTheCommandPrints(t *testing.T) {
	up := script(t, cases(t), 4)
	t.Cleanup(func() { up.DropUnused() })
	out := filepath.Join(t.TempDir(), "eval-results")
	code, stdout, stderr := command(t, []string{"--cases", "3", "--reps", "2", "--variant", "haiku", "--max-cost-usd", "2", "--out", out}, answers(up, ""))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	printed := strings.ReplaceAll(stderr+stdout, out, "eval-results")

	path := filepath.Join("..", "..", "..", "docs", "evals.md")
	doc := string(file(t, path))
	marker := "<!-- printed by TestTheDocsShowWhatTheCommandPrints -->\n```\n"
	start := strings.Index(doc, marker)
	if start < 0 {
		t.Fatalf("%s has no %q", path, marker)
	}
	start += len(marker)
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatalf("%s: the example output's block does not end", path)
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:start]+printed+doc[start+end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[start : start+end]; got != printed {
		t.Fatalf("docs/evals.md shows:\n%s\nthe command printed (go test ./examples/agent/agentevals -run %s -update rewrites it):\n%s", got, t.Name(), printed)
	}
}
