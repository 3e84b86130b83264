package app

import (
	"strings"
	"testing"
)

// The memory extraction is off unless AGENT_MEMORY_EXTRACTION=on: every
// completed turn would otherwise make a model call a scripted test did
// not script.
func TestMemoryExtractionIsOptIn(t *testing.T) {
	required := map[string]string{"DATABASE_URL": "postgres://localhost/agent", "SLACK_SIGNING_SECRET": "s",
		"SLACK_BOT_TOKEN": "xoxb-1", "AI_GATEWAY_API_KEY": "k", "AGENT_SCHEDULER_SECRET": "x"}
	for _, tt := range []struct {
		value string
		on    bool
		err   string
	}{{"", false, ""}, {"off", false, ""}, {"on", true, ""}, {"yes", false, `AGENT_MEMORY_EXTRACTION="yes": want on or off`}} {
		c, err := FromEnv(func(k string) string {
			if k == "AGENT_MEMORY_EXTRACTION" {
				return tt.value
			}
			return required[k]
		})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v; want %s", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || c.MemoryExtraction != tt.on {
			t.Errorf("%q: extraction %v, %v; want %v", tt.value, c.MemoryExtraction, err, tt.on)
		}
	}
}
