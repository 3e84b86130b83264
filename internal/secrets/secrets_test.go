package secrets

import (
	"strings"
	"testing"
)

func TestFindEachFamily(t *testing.T) {
	// Built from the shapes at test time: never a real token.
	tests := map[string]string{
		"slack-token":     "xoxb-" + strings.Repeat("1", 12) + "-" + strings.Repeat("a", 24),
		"slack-app-token": "xapp-1-A0" + strings.Repeat("B", 12),
		"slack-webhook":   "hooks.slack.com/services/T0" + strings.Repeat("X", 20),
		"anthropic-key":   "sk-ant-api03-" + strings.Repeat("q", 40),
		"openai-key":      "sk-proj-" + strings.Repeat("r", 40),
		"github-token":    "ghp_" + strings.Repeat("s", 36),
		"github-pat":      "github_pat_" + strings.Repeat("t", 30),
		"aws-access-key":  "AKIA" + strings.Repeat("U", 16),
		"jwt":             "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + strings.Repeat("v", 20),
		"private-key":     "-----BEGIN EC PRIVATE KEY-----\nMHc" + strings.Repeat("w", 20) + "\n-----END EC PRIVATE KEY-----",
	}
	for rule, token := range tests {
		text := "before " + token + " after"
		found := Find(text)
		if len(found) == 0 || found[0].Rule != rule || text[found[0].Start:found[0].End] != token {
			t.Errorf("%s: found %+v", rule, found)
		}
		if First(text) != rule {
			t.Errorf("%s: First = %q", rule, First(text))
		}
	}
	for _, clean := range []string{"task-force", "sk-short", "[redacted slack-token 1a2b3c4d]", "AKIAshort", "eyJ alone"} {
		if f := Find(clean); len(f) != 0 {
			t.Errorf("%q: found %+v", clean, f)
		}
	}
}
