package app

import (
	"strings"
	"testing"
)

func TestFromEnvReadsTheEventSettings(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://localhost/agent", "SLACK_SIGNING_SECRET": "s",
		"SLACK_BOT_TOKEN": "xoxb-1", "AI_GATEWAY_API_KEY": "k", "AGENT_SCHEDULER_SECRET": "x", "AGENT_ADMIN_SECRET": "a"}
	c, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || c.AutomatedTurnLimit != 5 || c.GitHubWebhookSecret != "" || c.EventSecret != "" {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	env["AGENT_AUTOMATED_TURN_LIMIT"], env["GITHUB_WEBHOOK_SECRET"], env["AGENT_EVENT_SECRET"] = "2", "gh", "ev"
	if c, err := FromEnv(func(k string) string { return env[k] }); err != nil || c.AutomatedTurnLimit != 2 || c.GitHubWebhookSecret != "gh" || c.EventSecret != "ev" {
		t.Fatalf("set: %+v, %v", c, err)
	}
	for _, bad := range []struct{ k, v, want string }{
		{"AGENT_AUTOMATED_TURN_LIMIT", "0", `AGENT_AUTOMATED_TURN_LIMIT="0"`},
		{"AGENT_AUTOMATED_TURN_LIMIT", "many", `AGENT_AUTOMATED_TURN_LIMIT="many"`},
		{"AGENT_EVENT_SECRET", "a", "AGENT_EVENT_SECRET must differ from AGENT_ADMIN_SECRET"},
		{"AGENT_EVENT_SECRET", "x", "AGENT_EVENT_SECRET must differ"},
	} {
		e := map[string]string{bad.k: bad.v}
		if _, err := FromEnv(func(k string) string { return or(e[k], env[k]) }); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%s: %v; want it to say %s", bad.k, bad.v, err, bad.want)
		}
	}
}
