// Package bottest describes the app to the fixture: the app's test
// support, declared public.
package bottest

import (
	"github.com/agentvcr/agentvcr/fixture"

	"example.com/bot/agent"
)

// App is the app as the fixture starts it.
func App() fixture.App { return fixture.App{Handler: agent.Start()} }

// Store hands out the app's store: a way into its runtime.
func Store(f *fixture.Fixture) *agent.Store { return &agent.Store{} }
