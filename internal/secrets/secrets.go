// Package secrets knows the shapes of the credentials an agent's traffic
// and conversations carry (tokens pasted by people, found by tools, echoed
// by a model, or sent in headers), so that nothing written for git keeps
// one. The sanitizer and the recording proxy share it.
package secrets

import (
	"regexp"
	"strings"
)

// Rule is one secret shape. Keywords are a cheap prefilter: a text without
// any of them cannot hold the shape.
type Rule struct {
	Name     string
	Keywords []string
	Re       *regexp.Regexp
}

var rules = []Rule{
	{"slack-token", []string{"xox"}, regexp.MustCompile(`xox[abposre]-[0-9A-Za-z-]{10,}`)},
	{"slack-app-token", []string{"xapp-"}, regexp.MustCompile(`xapp-\d-[0-9A-Za-z-]{10,}`)},
	{"slack-webhook", []string{"hooks.slack.com"}, regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`)},
	{"anthropic-key", []string{"sk-ant-"}, regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`)},
	{"openai-key", []string{"sk-"}, regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}`)},
	{"github-pat", []string{"github_pat_"}, regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`)},
	{"aws-access-key", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{"jwt", []string{"eyJ"}, regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"private-key", []string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN[A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z ]*PRIVATE KEY-----|$)`)},
}

// Rules returns the secret shapes, in order: where two match at one
// place, the earlier names it.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// Match is one secret in a text.
type Match struct {
	Rule       string
	Start, End int
}

// Find returns the secrets in s, by rule.
func Find(s string) []Match {
	var found []Match
	for _, r := range rules {
		if !containsAny(s, r.Keywords) {
			continue
		}
		for _, loc := range r.Re.FindAllStringIndex(s, -1) {
			found = append(found, Match{r.Name, loc[0], loc[1]})
		}
	}
	return found
}

// First returns the name of the first rule that matches in s, or "".
func First(s string) string {
	for _, r := range rules {
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
