package secrets

import (
	"slices"
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

// Redact leaves no part of any secret, however the secrets of different
// rules overlap (a token in a bearer header in a URL's password), and
// the text around them as it was.
func TestRedactLeavesNoPartOfASecret(t *testing.T) {
	slackToken := "xoxb-" + strings.Repeat("1", 12) + "-" + strings.Repeat("a", 24)
	github := "ghp_" + strings.Repeat("s", 36)
	anthropic := "sk-ant-api03-" + strings.Repeat("q", 40)
	texts := []string{
		"plain " + slackToken + " and " + github + " end",
		"Authorization: Bearer " + github,
		"https://bot:" + anthropic + "@api.example.com/v1",
		"token=" + slackToken + github,
		`{"api_key": "` + anthropic + `", "next": "` + slackToken + `"}`,
	}
	for _, text := range texts {
		got := Default().Redact(text, func(m Match) string { return "<<redacted " + m.Rule + ">>" })
		for _, secret := range []string{slackToken, github, anthropic} {
			for i := 0; i+12 <= len(secret); i++ {
				if strings.Contains(got, secret[i:i+12]) {
					t.Errorf("%q\nkeeps %q of a secret: %q", text, secret[i:i+12], got)
					break
				}
			}
		}
		if f := Default().Find(got); len(f) != 0 {
			t.Errorf("%q: the redacted text still holds %+v", got, f)
		}
	}
	if got := Default().Redact("before "+github+" after", func(Match) string { return "X" }); got != "before X after" {
		t.Errorf("the text around the secret: %q", got)
	}
	if got := Default().Redact("nothing here", func(Match) string { return "X" }); got != "nothing here" {
		t.Errorf("clean text: %q", got)
	}
}

// TestKeywordsAreTheRulesKeywords: Keywords, which compiles nothing, says
// what Rules say, rule by rule.
func TestKeywordsAreTheRulesKeywords(t *testing.T) {
	kw, rules := Keywords(), Rules()
	if len(kw) != len(rules) {
		t.Fatalf("%d keyword lists for %d rules", len(kw), len(rules))
	}
	for i, r := range rules {
		if !slices.Equal(kw[i], r.Keywords) {
			t.Errorf("rule %s: keywords %q; its rule has %q", r.Name, kw[i], r.Keywords)
		}
	}
}
