package agent // want `internals: this agent test is compiled into the app's package example.com/bot/agent: put it in an external test package \(package agent_test\)`

import (
	"testing"

	"github.com/agentvcr/agentvcr/fixture"
)

// An agent test inside the app's package: the package's own functions
// are the app's runtime, the test's helpers are not.
func TestInside(t *testing.T) {
	f := fixture.New(t, fixture.App{Handler: Start()}) // want `internals: agent.Start is a call into the app's runtime \(example.com/bot/agent\)`
	helper(f)
}

func helper(f *fixture.Fixture) {}
