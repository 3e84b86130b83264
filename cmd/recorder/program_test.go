package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userModule makes a module outside this repository, with
// testdata/usermodule's evals and catalog programs, that takes agentvcr
// from this checkout and nothing from the network; it becomes the
// working directory, and its path is returned.
func userModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go .*$`).Find(gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/usermodule")); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/myagent\n\n" + string(goLine) + "\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod -buildvcs=false")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(dir)
	return dir
}

// A user's evals and catalog, written in their own module against the
// library, run through recorder: it builds each program and runs it with
// the arguments after it, from the module's root, where the catalog reads
// its sources. No model key is needed to list and plan.
func TestRecorderRunsAUsersEvalsAndCatalog(t *testing.T) {
	userModule(t)
	r := recorder(t, "", "eval", "./cmd/evals", "--list")
	if r.code != 0 || !strings.Contains(r.stdout, "greetings  2      correct (binary)  terse") {
		t.Fatalf("eval --list: %+v", r)
	}
	r = recorder(t, "", "eval", "./cmd/evals", "--dry-run", "--variant", "terse")
	if r.code != 0 || !strings.Contains(r.stdout, "dry run: 4 attempts would run") || !strings.Contains(r.stdout, "greetings  terse     bye") {
		t.Fatalf("eval --dry-run: %+v", r)
	}
	r = recorder(t, "", "catalog", "./cmd/catalog", "--list")
	if r.code != 0 || !regexp.MustCompile(`^greetings \(smoke, rank 1\): 2 cells, fingerprint sha256:[0-9a-f]{16}\n  greetings.default.process.hello\n  greetings.default.process.bye\n$`).MatchString(r.stdout) {
		t.Fatalf("catalog --list: %+v", r)
	}
}

// The installed product links none of the reference agent and none of
// the model and Slack SDKs: users' programs bring their own.
func TestTheCommandsLinkNoExampleAndNoSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/...: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !strings.Contains(string(out), "github.com/spf13/cobra\n") {
		t.Fatalf("go list -deps listed %d packages:\n%s", len(deps), out)
	}
	for _, p := range deps {
		for _, bad := range []string{"github.com/agentvcr/agentvcr/examples/", "github.com/anthropics/", "github.com/openai/", "github.com/slack-go/"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("./cmd/... links %s", p)
			}
		}
	}
}
