package app

import (
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	required := map[string]string{"DATABASE_URL": "postgres://localhost/agent", "SLACK_SIGNING_SECRET": "s",
		"SLACK_BOT_TOKEN": "xoxb-1", "AI_GATEWAY_API_KEY": "k", "AGENT_SCHEDULER_SECRET": "x"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range required {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		env   map[string]string
		errs  []string // each must be in the error
		check func(Config) bool
	}{
		{"defaults", with(), nil, func(c Config) bool {
			return c.Addr == "127.0.0.1:3000" && c.ToolCallLimit == 20 && c.TurnSlice == 4*time.Minute &&
				c.ContextWindowTokens == 200000 && c.GatewayURL == "https://ai-gateway.vercel.sh" && c.PublicURL == "http://127.0.0.1:3000"
		}},
		{"limits", with("AGENT_TOOL_CALL_LIMIT", "3", "AGENT_TURN_SLICE", "90s", "HTTPS_PROXY", "http://127.0.0.1:8899"), nil, func(c Config) bool {
			return c.ToolCallLimit == 3 && c.TurnSlice == 90*time.Second && c.Proxy == "http://127.0.0.1:8899"
		}},
		{"nothing set", map[string]string{}, []string{"DATABASE_URL is not set", "SLACK_SIGNING_SECRET is not set",
			"SLACK_BOT_TOKEN is not set", "AI_GATEWAY_API_KEY is not set", "AGENT_SCHEDULER_SECRET is not set"}, nil},
		{"bad numbers", with("AGENT_TOOL_CALL_LIMIT", "many", "AGENT_CONTEXT_WINDOW_TOKENS", "-5", "AGENT_TURN_TIMEOUT", "10"),
			[]string{`AGENT_TOOL_CALL_LIMIT="many"`, `AGENT_CONTEXT_WINDOW_TOKENS="-5"`, `AGENT_TURN_TIMEOUT="10"`}, nil},
		{"bad proxy", with("HTTPS_PROXY", "not a url"), []string{`HTTPS_PROXY="not a url" is not a URL`}, nil},
		{"one secret for both", with("AGENT_ADMIN_SECRET", "x"), []string{"AGENT_ADMIN_SECRET must differ from AGENT_SCHEDULER_SECRET"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(func(k string) string { return tt.env[k] })
			for _, want := range tt.errs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v; want it to say %s", err, want)
				}
			}
			if tt.errs == nil && err != nil {
				t.Fatal(err)
			}
			if tt.check != nil && !tt.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}

func TestSSLCertFileMustHoldACertificate(t *testing.T) {
	c := Config{CACertFile: t.TempDir() + "/none.pem"}
	if _, err := c.httpClient(); err == nil || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
		t.Fatalf("a missing SSL_CERT_FILE: %v", err)
	}
}
