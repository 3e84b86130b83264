package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

var fingerprint = regexp.MustCompile(`sha256:[0-9a-f]{16}`)

// recorder catalog --list prints what the README shows, fingerprints
// aside (they change with the sources).
func TestTheREADMEsCatalogListing(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const before = "recorder eval --suite answers --profile haiku --reps 3\n```\n\n```\n"
	i := strings.Index(string(readme), before)
	if i < 0 {
		t.Fatal("the README has no catalog listing")
	}
	shown := string(readme[i+len(before):])
	shown = shown[:strings.Index(shown, "```")]
	r := recorder(t, "", "catalog", "--list")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	mask := func(s string) string { return fingerprint.ReplaceAllString(s, "sha256:…") }
	if mask(r.stdout) != mask(shown) {
		t.Fatalf("recorder catalog --list:\n%s\nthe README:\n%s", r.stdout, shown)
	}
	r = recorder(t, "", "catalog", "--json")
	var list []struct {
		ID, Fingerprint string
		Size            int
		Cells           []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 || list[0].Size != len(list[0].Cells) {
		t.Fatalf("--json: %v %+v", err, list)
	}
}

// recorder eval runs the catalog's cells --suite and --profile select;
// without the gateway's key each cell fails, naming it, and the run
// exits 1: no cell is skipped.
func TestEvalRunsTheCatalogsCells(t *testing.T) {
	t.Setenv("AI_GATEWAY_API_KEY", "")
	r := recorder(t, "", "eval", "--suite", "threads", "--profile", "sonnet-one-tool", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "dry run: 2 attempts would run") || !strings.Contains(r.stdout, "threads.sonnet-one-tool.in-process") {
		t.Fatalf("dry run: %+v", r)
	}
	r = recorder(t, "", "eval", "--suite", "nope", "--dry-run")
	if r.code != 2 || !strings.Contains(r.stderr, `no cell of suite "nope"`) {
		t.Fatalf("no such suite: %+v", r)
	}
	out := t.TempDir()
	r = recorder(t, "", "eval", "--suite", "threads", "--profile", "sonnet-one-tool", "--out", out)
	if r.code != 1 || !strings.Contains(r.stderr, "recorder: 2 attempts could not run") || !strings.Contains(r.stdout, "kept out of the means: setup_error 2") {
		t.Fatalf("without the key: %+v", r)
	}
	b, err := os.ReadFile(out + "/threads.sonnet-one-tool.in-process/baseline/failures.jsonl")
	if err != nil || strings.Count(string(b), "needs credential AI_GATEWAY_API_KEY") != 2 {
		t.Fatalf("failures: %v\n%s", err, b)
	}
}
