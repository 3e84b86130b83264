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
	// Every package of the example, its programs and their tests.
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"examples/...").CombinedOutput()
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
	if fixtureUsers < 5 {
		t.Errorf("%d of the example's packages drive it with the fixture; want the tests of its app, its store, fixturetest, agentevals and agentcatalog to", fixtureUsers)
	}
}
