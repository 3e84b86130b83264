// Package secrets knows the shapes of the credentials an agent's traffic
// and conversations carry (tokens pasted by people, found by tools, echoed
// by a model, or sent in headers), so that nothing written for git keeps
// one.
//
// Scanner is the full set, gitleaks' default rules and agentvcr's own:
// the sanitizer and sanitize check run it on every decoded string. Rules,
// Find and First are agentvcr's own token families only, which the
// recording proxy redacts in cassettes: gitleaks' generic rules would take
// a cassette's own keys and hashes for secrets.
package secrets

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Rule is one secret shape. Keywords are a cheap prefilter: a text without
// any of them cannot hold the shape.
type Rule struct {
	Name     string
	Keywords []string
	Re       *regexp.Regexp
}

// shape is a token family as written: its pattern is compiled by rules.
type shape struct {
	name     string
	keywords []string
	pattern  string
}

var shapes = []shape{
	{"slack-token", []string{"xox"}, `xox[abposre]-[0-9A-Za-z-]{10,}`},
	{"slack-app-token", []string{"xapp-"}, `xapp-\d-[0-9A-Za-z-]{10,}`},
	{"slack-webhook", []string{"hooks.slack.com"}, `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`},
	{"anthropic-key", []string{"sk-ant-"}, `sk-ant-[A-Za-z0-9_-]{20,}`},
	{"openai-key", []string{"sk-"}, `sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`},
	{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, `gh[pousr]_[A-Za-z0-9]{36,}`},
	{"github-pat", []string{"github_pat_"}, `github_pat_[A-Za-z0-9_]{22,}`},
	{"aws-access-key", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, `\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`},
	{"jwt", []string{"eyJ"}, `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`},
	{"private-key", []string{"PRIVATE KEY"}, `-----BEGIN[A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z ]*PRIVATE KEY-----|$)`},
	{"stripe-key", []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, `\b[sr]k_(?:live|test)_[A-Za-z0-9]{20,}`},
	{"huggingface-token", []string{"hf_"}, `\bhf_[A-Za-z0-9]{30,}`},
	{"gitlab-token", []string{"glpat-"}, `glpat-[A-Za-z0-9_-]{20,}`},
	{"telegram-bot-token", []string{":AA"}, `\d{8,10}:AA[A-Za-z0-9_-]{33}`},
	{"discord-webhook", []string{"/api/webhooks/"}, `discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}`},
}

// rules are compiled when first used: a process that never looks for a
// secret (a proxy that replays) does not pay for them.
var rules = sync.OnceValue(func() []Rule {
	out := make([]Rule, len(shapes))
	for i, sh := range shapes {
		out[i] = Rule{sh.name, sh.keywords, regexp.MustCompile(sh.pattern)}
	}
	return out
})

// Keywords returns the keywords of each of Rules, in order, without
// compiling their patterns: a text that holds none of them holds none of
// the shapes.
func Keywords() [][]string {
	out := make([][]string, len(shapes))
	for i, sh := range shapes {
		out[i] = slices.Clone(sh.keywords)
	}
	return out
}

// ownRule is one of agentvcr's shapes as the Scanner runs it: group is
// the capture group that holds the secret (0: the whole match).
type ownRule struct {
	Rule
	group int
}

// own are the shapes the Scanner adds to gitleaks' rule set: the token
// families above (some broader than gitleaks' rules for the same
// provider), passwords in URLs, AWS secret access keys next to their name,
// and Stripe webhook secrets.
var own = sync.OnceValue(func() []ownRule {
	families := rules()
	out := make([]ownRule, 0, len(families)+3)
	for _, r := range families {
		out = append(out, ownRule{Rule: r})
	}
	return append(out,
		ownRule{Rule{"url-credentials", []string{"://"}, regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@'"<>]{1,256}:([^\s/@'"<>]{1,256})@[a-zA-Z0-9.-]`)}, 1},
		ownRule{Rule{"aws-secret-key", []string{"aws"}, regexp.MustCompile(`(?i)aws.{0,20}?(?:secret|sk).{0,20}?['"\s:=]+([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`)}, 1},
		ownRule{Rule{"stripe-webhook-secret", []string{"whsec_"}, regexp.MustCompile(`whsec_[A-Za-z0-9]{24,}`)}, 0},
		ownRule{Rule{"authorization-credentials", []string{"Bearer", "Basic", "bearer", "basic"}, regexp.MustCompile(`\b(?:[Bb]earer|[Bb]asic)\s+([A-Za-z0-9._~+/-]{16,}=*)`)}, 1},
	)
})

// Rules returns the secret shapes, in order: where two match at one
// place, the earlier names it.
func Rules() []Rule { return slices.Clone(rules()) }

// Match is one secret in a text.
type Match struct {
	Rule       string
	Start, End int
}

// Find returns the secrets in s, by rule.
func Find(s string) []Match {
	var found []Match
	for _, r := range rules() {
		if !containsAny(s, r.Keywords) {
			continue
		}
		for _, loc := range r.Re.FindAllStringIndex(s, -1) {
			found = append(found, Match{r.Name, loc[0], loc[1]})
		}
	}
	return found
}

// Redact returns text with each secret found in it replaced by what
// with says of it. Secrets that overlap (a Slack token whose characters
// run on into a GitHub token's) are replaced as one span, named by the
// first, so that no part of either survives.
func Redact(text string, found []Match, with func(Match) string) string {
	if len(found) == 0 {
		return text
	}
	found = slices.Clone(found)
	slices.SortStableFunc(found, func(a, b Match) int { return a.Start - b.Start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(found); {
		m := found[i]
		end := m.End
		for i++; i < len(found) && found[i].Start < end; i++ {
			end = max(end, found[i].End)
		}
		b.WriteString(text[at:m.Start])
		b.WriteString(with(m))
		at = end
	}
	b.WriteString(text[at:])
	return b.String()
}

// First returns the name of the first rule that matches in s, or "".
func First(s string) string {
	for _, r := range rules() {
		if containsAny(s, r.Keywords) && r.Re.MatchString(s) {
			return r.Name
		}
	}
	return ""
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
