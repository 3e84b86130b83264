package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder vet keeps a module's ratchet, on a copy of vet's sample app:
// it fails (exit 1) on offences the ratchet does not list and on listed
// ones that were fixed, --write records today's offences, --prune drops
// the fixed ones and nothing else, --json prints one object per problem,
// and a pattern that names no package, a ratchet that is not one, or
// --prune with --write, is a usage error (exit 2).
func TestVetKeepsTheRatchet(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "vet", "testdata", "app"))); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(dir, "agentvcr-vet.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ratchet := func() string {
		t.Helper()
		b, err := os.ReadFile("agentvcr-vet.json")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lines := func(s string) int { return len(strings.Split(strings.TrimSpace(s), "\n")) }

	// The app's public package declared, no offence listed yet.
	write("agentvcr-vet.json", `{"public": ["example.com/bot/bottest"], "offences": []}`)
	r := recorder(t, "", "vet", "./...")
	if r.code != 1 || lines(r.stdout) != 21 || !strings.Contains(r.stdout, "modelfakes/modelfakes_test.go:16:8: model-fakes: fakeai.NewServer makes a model of the test's own") ||
		!strings.Contains(r.stderr, "vet failed: 21 new offences, 0 fixed offences still listed in agentvcr-vet.json") {
		t.Fatalf("vet with nothing listed: %+v", r)
	}

	r = recorder(t, "", "vet", "--write", "./...")
	if r.code != 0 || ratchet() != string(committed) || !strings.Contains(r.stderr, "vetted 6 agent tests: wrote 21 offences to agentvcr-vet.json") {
		t.Fatalf("vet --write: %+v; the ratchet:\n%s\nwant the sample's:\n%s", r, ratchet(), committed)
	}
	if r = recorder(t, "", "vet", "./..."); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "vetted 6 agent tests: 21 offences") {
		t.Fatalf("vet, everything listed: %+v", r)
	}

	// Fixed: the file with the model fakes is gone.
	if err := os.Remove(filepath.Join("modelfakes", "modelfakes_test.go")); err != nil {
		t.Fatal(err)
	}
	r = recorder(t, "", "vet", "./...")
	if r.code != 1 || lines(r.stdout) != 7 ||
		!strings.Contains(r.stdout, "modelfakes/modelfakes_test.go: model-fakes httptest.NewServer: fixed, still listed (the ratchet lists 4, found 0): recorder vet --prune drops it") {
		t.Fatalf("vet after a fix: %+v", r)
	}
	r = recorder(t, "", "vet", "--prune", "./...")
	if r.code != 0 || strings.Contains(ratchet(), "modelfakes") || !strings.Contains(ratchet(), `"what":"agent.Start"`) || !strings.Contains(r.stderr, "pruned 7 fixed") {
		t.Fatalf("vet --prune: %+v; the ratchet:\n%s", r, ratchet())
	}

	// A new offender, which --prune does not take in.
	write(filepath.Join("clean", "new_test.go"), "package clean_test\n\nimport (\n\t\"testing\"\n\n\t\"github.com/agentvcr/agentvcr/fakeai\"\n)\n\nfunc TestNew(t *testing.T) { fakeai.NewServer(t) }\n")
	before := ratchet()
	r = recorder(t, "", "vet", "--prune", "--json", "./...")
	var p problem
	if r.code != 1 || lines(r.stdout) != 1 || json.Unmarshal([]byte(r.stdout), &p) != nil || ratchet() != before {
		t.Fatalf("vet --json with a new offender: %+v", r)
	}
	if p.Problem != "new" || p.File != "clean/new_test.go" || p.Rule != "model-fakes" || p.What != "fakeai.NewServer" || p.Listed != 0 || p.Found != 1 ||
		len(p.Findings) != 1 || p.Findings[0].Line != 9 {
		t.Fatalf("vet --json: %+v", p)
	}

	if r = recorder(t, "", "vet", "./nothere"); r.code != 2 || !strings.Contains(r.stderr, "no package matches") {
		t.Fatalf("vet of a directory that is not there: %+v", r)
	}
	if r = recorder(t, "", "vet", "--prune", "--write", "./..."); r.code != 2 {
		t.Fatalf("vet --prune --write: %+v", r)
	}
	write("agentvcr-vet.json", `{"public": ["example.com/bot/bottest"], "offences": [{"file": "x_test.go"}]}`)
	if r = recorder(t, "", "vet", "./..."); r.code != 2 || !strings.Contains(r.stderr, "not a ratchet file") {
		t.Fatalf("vet with a bad ratchet: %+v", r)
	}
}
