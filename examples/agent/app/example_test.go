package app_test

import (
	"fmt"

	"github.com/agentvcr/agentvcr/examples/agent/app"
)

// FromEnv names every variable that is missing or wrong.
func ExampleFromEnv() {
	env := map[string]string{"DATABASE_URL": "postgres://localhost/agent", "SLACK_SIGNING_SECRET": "dev-signing-secret",
		"SLACK_BOT_TOKEN": "xoxb-dev", "AGENT_TURN_SLICE": "soon"}
	_, err := app.FromEnv(func(k string) string { return env[k] })
	fmt.Println(err)
	// Output:
	// AI_GATEWAY_API_KEY is not set
	// AGENT_SCHEDULER_SECRET is not set
	// AGENT_TURN_SLICE="soon": want a positive duration such as 90s or 4m
}
