package app_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The reference agent's tests are tests a user can copy: they drive the
// agent through the public fixture and import nothing of agentvcr's
// internal packages, which a user's module cannot import.
func TestTheAgentsTestsUseOnlyThePublicAPI(t *testing.T) {
	const module = "github.com/agentvcr/agentvcr/"
	pkgs := []string{"examples/agent", "examples/agent/app", "examples/agent/agenttest", "examples/agent/junior",
		"examples/agent/llm", "examples/agent/slackio", "examples/agent/store", "examples/agent/turn", "examples/agent/fixturetest"}
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	fixtureUsers := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"internal/") {
				t.Errorf("%s imports %s", fields[0], imp)
			}
		}
		if slices.Contains(fields[1:], module+"fixture") {
			fixtureUsers++
		}
	}
	if fixtureUsers < 3 {
		t.Errorf("%d of the agent's packages drive it with the fixture; want the tests of its app, its store and fixturetest to", fixtureUsers)
	}
}
