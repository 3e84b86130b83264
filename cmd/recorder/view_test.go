package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestView(t *testing.T) {
	file := "../../history/testdata/launch-planning.json"
	r := recorder(t, "", "view", file)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "<!doctype html>") || !strings.Contains(r.stdout, "<b>tool updatePlan</b>") {
		t.Fatalf("view: %d %.200s %s", r.code, r.stdout, r.stderr)
	}
	raw, _ := os.ReadFile(file)
	if r := recorder(t, string(raw), "view", "-"); r.code != 0 || !strings.Contains(r.stdout, "Help me plan the Orbit launch") {
		t.Fatalf("view -: %d %s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "page.html")
	if r := recorder(t, "", "view", "-o", out, file); r.code != 0 || r.stdout != "" {
		t.Fatalf("view -o: %+v", r)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "updatePlan") {
		t.Fatalf("the page file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"version":1,"surface":"web","events":[{"seq":"x"}]}`), 0o644)
	for _, args := range [][]string{{"view", bad}, {"view", "no-such-file.json"}, {"view"}} {
		if r := recorder(t, "", args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a reason", args, r.code, r.stderr)
		}
	}
}
