package imports_test

import (
	"testing"

	"github.com/agentvcr/agentvcr/control" // want `imports: github.com/agentvcr/agentvcr/control is not one of agentvcr's packages for tests: use fixture, fakeai`
	"github.com/agentvcr/agentvcr/fixture"

	"example.com/bot/agent"           // want `imports: example.com/bot/agent is a package of the app \(module example.com/bot\): drive the app through the fixture`
	"example.com/bot/bottest"         // declared public
	"example.com/bot/internal/secret" // want `imports: example.com/bot/internal/secret is a package of the app`
)

func TestImports(t *testing.T) {
	f := fixture.New(t, bottest.App())
	_ = []string{control.Path, agent.Header, secret.Key, f.AppURL()}
}
