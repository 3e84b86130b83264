// Package agenttest describes the reference agent to agentvcr's fixture,
// as a user's own test support describes their app: App starts the agent
// in-process with the environment the fixture gives it (its database, the
// proxy's HTTPS_PROXY and SSL_CERT_FILE) and its own secrets, and names
// its routes.
package agenttest

import (
	"context"
	"net/http"
	"strconv"

	"github.com/agentvcr/agentvcr/examples/agent/app"
	"github.com/agentvcr/agentvcr/fixture"
)

// The agent's secrets in tests.
const (
	SigningSecret   = "test-signing-secret"
	SchedulerSecret = "test-scheduler-secret"
	AdminSecret     = "test-admin-secret"
	// GitHubWebhookSecret signs the GitHub webhooks; EventSecret is the
	// bearer of the event ingest route.
	GitHubWebhookSecret = "test-github-webhook-secret"
	EventSecret         = "test-event-secret"
)

// App is the reference agent as the fixture starts it, with env added to
// its configuration (secrets and settings such as AGENT_MODEL; a variable
// set to "" is unset). Its limits are typed agent options
// (fixture.Configure, Fixture.Agent), which App.Options maps.
func App(env map[string]string) fixture.App {
	vars := map[string]string{"SLACK_SIGNING_SECRET": SigningSecret, "SLACK_BOT_TOKEN": "xoxb-test",
		"AI_GATEWAY_API_KEY": "test-gateway-key", "AGENT_SCHEDULER_SECRET": SchedulerSecret, "AGENT_ADMIN_SECRET": AdminSecret}
	vars["GITHUB_WEBHOOK_SECRET"], vars["AGENT_EVENT_SECRET"] = GitHubWebhookSecret, EventSecret
	for k, v := range env {
		vars[k] = v
	}
	return fixture.App{
		Name: "examples/agent", Env: vars, Routes: Routes(),
		// Built history names the agent and its model as its own rows do.
		BotName: or(vars["AGENT_BOT_NAME"], app.DefaultBotName), Model: or(vars["AGENT_MODEL"], app.DefaultAgentModel),
		SlackSigningSecret: SigningSecret, SchedulerSecret: SchedulerSecret, AdminSecret: vars["AGENT_ADMIN_SECRET"],
		GitHubWebhookSecret: GitHubWebhookSecret, EventSecret: EventSecret,
		Options: options,
		Handler: func(ctx context.Context, env map[string]string) (http.Handler, func(), error) {
			cfg, err := app.FromEnv(func(k string) string { return env[k] })
			if err != nil {
				return nil, nil, err
			}
			a, err := app.New(ctx, cfg, nil)
			if err != nil {
				return nil, nil, err
			}
			return a.Handler(), a.Close, nil
		},
	}
}

// options maps the typed agent options onto the agent's environment
// (app.FromEnv reads it): its limits. The agent has no Slack cross-actor
// steering mode (a thread message waits for the running turn to end), so
// SlackCrossActorSteering is not mapped, and a test that sets it fails at
// once.
func options(o fixture.AgentOptions) (map[string]string, error) {
	env := map[string]string{}
	l := o.Limits
	if l.TurnTimeout != 0 {
		env["AGENT_TURN_TIMEOUT"] = l.TurnTimeout.String()
	}
	if l.ToolCalls != 0 {
		env["AGENT_TOOL_CALL_LIMIT"] = strconv.Itoa(l.ToolCalls)
	}
	if l.TurnSlice != 0 {
		env["AGENT_TURN_SLICE"] = l.TurnSlice.String()
	}
	if l.ContextWindowTokens != 0 {
		env["AGENT_CONTEXT_WINDOW_TOKENS"] = strconv.Itoa(l.ContextWindowTokens)
	}
	if l.AutomatedTurns != 0 {
		env["AGENT_AUTOMATED_TURN_LIMIT"] = strconv.Itoa(l.AutomatedTurns)
	}
	return env, nil
}

// Routes are the agent's: Junior's, and the internal routes Junior lacks,
// through which the fixture knows when the agent is idle (no queued
// input, running turn or background work), holds its queue so inputs
// meet in one turn, finds the conversation a heartbeat started, and
// inserts setup data: automations, memories and credentials.
func Routes() fixture.Routes {
	r := fixture.JuniorRoutes()
	r.Idle = "/api/internal/idle"
	r.Queue = "/api/internal/queue"
	r.QueueHold = "/api/internal/queue/hold"
	r.QueueRelease = "/api/internal/queue/release"
	r.QueueHoldPaused = "/api/internal/queue/hold?only=paused"
	r.Conversations = "/api/internal/conversations"
	r.Automations = "/api/internal/automations"
	r.GitHubWebhook, r.Events = "/api/webhooks/github", "/api/events"
	r.EventAutomations, r.Watches = "/api/internal/event-automations", "/api/internal/watches"
	r.Memories = "/api/internal/memories"
	r.Credentials = "/api/internal/credentials"
	return r
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
