package sanitize

import (
	"regexp"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// span is one replacement in a string: bytes [start, end) become repl.
type span struct {
	start, end int
	repl       string
	kind       Kind
	detector   string // what found it, for the report
}

// secretRules are the shapes of credentials, as the rest of agentvcr knows
// them.
var secretRules = secrets.Rules()

// The triggers of the detectors that need a keyword in the text: the
// secret rules by their index, then these.
const (
	trigWorkspace = 1000 + iota // .slack.com
	trigDashboard               // dashboard:
	trigLocalID                 // local:
)

// triggerNeedles are the keywords that switch detectors on.
func triggerNeedles() []needle {
	var n []needle
	for i, rule := range secretRules {
		for _, kw := range rule.Keywords {
			n = append(n, needle{text: kw, payload: i, trigger: true})
		}
	}
	return append(n,
		needle{text: ".slack.com", payload: trigWorkspace, trigger: true},
		needle{text: "dashboard:", payload: trigDashboard, trigger: true},
		needle{text: "local:", payload: trigLocalID, trigger: true})
}

// secretSpans finds secrets where their rules' keywords are. A token
// starts at or shortly before its keyword (a private key block starts
// before PRIVATE KEY) and is at most 64 KiB long.
func secretSpans(s string, trig map[int][]int, f *faker, out []span) []span {
	for i, rule := range secretRules {
		for _, w := range windows(trig[i], 40, 64<<10, len(s)) {
			for _, loc := range rule.Re.FindAllStringIndex(s[w[0]:w[1]], -1) {
				start, end := w[0]+loc[0], w[0]+loc[1]
				out = append(out, span{start, end, f.secret(rule.Name, s[start:end]), KindSecret, "secret:" + rule.Name})
			}
		}
	}
	return out
}

// windows returns the merged ranges [p-before, p+after) of positions p, in
// order, within [0, n).
func windows(pos []int, before, after, n int) [][2]int {
	var w [][2]int
	for _, p := range pos {
		lo, hi := max(p-before, 0), min(p+after, n)
		if len(w) > 0 && lo <= w[len(w)-1][1] {
			w[len(w)-1][1] = max(w[len(w)-1][1], hi)
			continue
		}
		w = append(w, [2]int{lo, hi})
	}
	return w
}

// emailSpans finds the email addresses around each @, outside the reserved
// domains.
func emailSpans(s string, ats []int, f *faker, out []span) []span {
	for _, at := range ats {
		if start, end, ok := emailAt(s, at); ok && !reservedEmail(s[start:end]) {
			out = append(out, span{start, end, f.fake(KindEmail, strings.ToLower(s[start:end])), KindEmail, "email"})
		}
	}
	return out
}

// findEmails returns the [start, end) of each email address in s.
func findEmails(s string) [][2]int {
	var found [][2]int
	for i := 0; i < len(s); {
		at := strings.IndexByte(s[i:], '@')
		if at < 0 {
			break
		}
		at += i
		i = at + 1
		if start, end, ok := emailAt(s, at); ok {
			found = append(found, [2]int{start, end})
			i = end
		}
	}
	return found
}

// emailAt returns the email address whose @ is s[at], if there is one.
func emailAt(s string, at int) (start, end int, ok bool) {
	start = at
	for start > 0 && isLocalByte(s[start-1]) {
		start--
	}
	// In raw JSON the letter of an escape such as \n is not part of it.
	if splitsEscape(s, start) {
		start++
	}
	end = at + 1
	for end < len(s) && isDomainByte(s[end]) {
		end++
	}
	for end > at+1 && (s[end-1] == '.' || s[end-1] == '-') {
		end--
	}
	domain := s[at+1 : end]
	dot := strings.LastIndexByte(domain, '.')
	if start >= at || dot <= 0 || !isLetters(domain[dot+1:]) {
		return 0, 0, false
	}
	return start, end, true
}

func isLocalByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._%+-", c) >= 0
}

func isDomainByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-'
}

func isLetters(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// reservedEmail reports whether an address is on a domain reserved for
// examples and tests (RFC 2606), which no person can own.
func reservedEmail(addr string) bool {
	domain := strings.ToLower(addr[strings.LastIndexByte(addr, '@')+1:])
	switch domain {
	case "example.com", "example.org", "example.net":
		return true
	}
	for _, suffix := range []string{".example", ".test", ".invalid", ".localhost", ".example.com", ".example.org", ".example.net"} {
		if strings.HasSuffix(domain, suffix) || domain == suffix[1:] {
			return true
		}
	}
	return false
}

const slackIDPrefixes = "UWTECGDBFAS"

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isSlackID reports whether a whole value is shaped like a Slack id.
func isSlackID(v string) bool {
	if len(v) < 3 || len(v) > 16 || strings.IndexByte(slackIDPrefixes, v[0]) < 0 {
		return false
	}
	for i := 1; i < len(v); i++ {
		if !isUpper(v[i]) && !isDigit(v[i]) {
			return false
		}
	}
	return true
}

var (
	// Slack markup with a label: <@U1|name>, <#C1|channel>,
	// <!subteam^S1|@group>, raw or HTML-escaped.
	markupRe     = regexp.MustCompile(`(?:<|&lt;|\\u003[cC])([@#]|!subteam\^)[A-Z0-9]+\|([^<>|&\\]+)(?:>|&gt;|\\u003[eE])`)
	dashboardRe  = regexp.MustCompile(`\bdashboard:([0-9a-f]{6,})\b`)
	localIDRe    = regexp.MustCompile(`\blocal:(?:web|fork):(?:fork-)?([0-9a-f]{8,})\b`)
	ipv4Re       = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`)
	phoneRe      = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}\b|\+\d{9,14}\b`)
	slackDomains = map[string]bool{"app": true, "api": true, "files": true, "hooks": true, "www": true, "status": true,
		"downloads": true, "edgeapi": true, "wss-primary": true, "enterprise": true, "docs": true}
)

// markupSpans replaces the labels of Slack mentions around each |: a
// person's name or handle, a channel name, a user group handle.
func markupSpans(s string, pipes []int, f *faker, out []span) []span {
	for _, w := range windows(pipes, 40, 256, len(s)) {
		out = markupIn(s, w[0], w[1], f, out)
	}
	return out
}

func markupIn(s string, lo, hi int, f *faker, out []span) []span {
	for _, m := range markupRe.FindAllStringSubmatchIndex(s[lo:hi], -1) {
		sigil, start, end := s[lo+m[2]:lo+m[3]], lo+m[4], lo+m[5]
		label := s[start:end]
		switch {
		case sigil == "#":
			out = append(out, span{start, end, f.fake(KindChannelName, label), KindChannelName, "slack-markup"})
		case strings.HasPrefix(label, "@"):
			out = append(out, span{start + 1, end, f.fake(KindHandle, label[1:]), KindHandle, "slack-markup"})
		case strings.Contains(label, " "):
			out = append(out, span{start, end, f.fake(KindName, label), KindName, "slack-markup"})
		default:
			out = append(out, span{start, end, f.fake(KindHandle, label), KindHandle, "slack-markup"})
		}
	}
	return out
}

// workspaceSpans replaces Slack workspace names in hosts: the label before
// each .slack.com (or .enterprise.slack.com).
func workspaceSpans(s string, pos []int, f *faker, out []span) []span {
	for _, p := range pos {
		end := p
		if strings.HasSuffix(s[:end], ".enterprise") {
			end -= len(".enterprise")
		}
		start := end
		for start > 0 && (isDigit(s[start-1]) || 'a' <= s[start-1] && s[start-1] <= 'z' || s[start-1] == '-') {
			start--
		}
		if after := p + len(".slack.com"); after < len(s) && isWordRune(rune(s[after])) {
			continue // .slack.community and the like
		}
		if ws := s[start:end]; ws != "" && ws[0] != '-' && !slackDomains[ws] && !splitsEscape(s, start) {
			out = append(out, span{start, end, f.fake(KindWorkspace, ws), KindWorkspace, "workspace-url"})
		}
	}
	return out
}

// idSpans replaces dashboard user ids and the hashes of web conversation
// ids.
func idSpans(s string, trig map[int][]int, f *faker, out []span) []span {
	for _, w := range windows(trig[trigDashboard], 1, 80, len(s)) {
		for _, m := range dashboardRe.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			v := s[w[0]+m[0] : w[0]+m[1]]
			out = append(out, span{w[0] + m[0], w[0] + m[1], f.fake(KindDashboardID, v), KindDashboardID, "dashboard-id"})
		}
	}
	for _, w := range windows(trig[trigLocalID], 1, 100, len(s)) {
		for _, m := range localIDRe.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			v := s[w[0]+m[2] : w[0]+m[3]]
			out = append(out, span{w[0] + m[2], w[0] + m[3], f.fake(KindHexID, v), KindHexID, "conversation-id"})
		}
	}
	return out
}

// ipSpans replaces IPv4 addresses in the runs the scan found, but those
// that identify no one.
func ipSpans(s string, runs [][2]int, f *faker, out []span) []span {
	for _, r := range runs {
		for _, m := range ipv4Re.FindAllStringIndex(s[r[0]:r[1]], -1) {
			start, end := r[0]+m[0], r[0]+m[1]
			if ip := s[start:end]; !reservedIP(ip) && wordBoundaryBefore(s, start) && notDotted(s, start, end) {
				out = append(out, span{start, end, f.fake(KindIP, ip), KindIP, "ip"})
			}
		}
	}
	return out
}

// phoneSpans replaces phone numbers in the runs the scan found.
func phoneSpans(s string, runs [][2]int, f *faker, out []span) []span {
	for _, r := range runs {
		for _, m := range phoneRe.FindAllStringIndex(s[r[0]:r[1]], -1) {
			start, end := r[0]+m[0], r[0]+m[1]
			if digitBoundary(s, start, end) {
				out = append(out, span{start, end, f.fake(KindPhone, s[start:end]), KindPhone, "phone"})
			}
		}
	}
	return out
}

// notDotted rejects an address that is part of a longer dotted run, such
// as a version number 1.2.3.4.5.
func notDotted(s string, start, end int) bool {
	before := start >= 2 && s[start-1] == '.' && isDigit(s[start-2])
	after := end+1 < len(s) && s[end] == '.' && isDigit(s[end+1])
	return !before && !after
}

// digitBoundary keeps a phone match that is not part of a longer number.
func digitBoundary(s string, start, end int) bool {
	before := start > 0 && (isDigit(s[start-1]) || s[start-1] == '.')
	after := end < len(s) && (isDigit(s[end]) || s[end] == '.' && end+1 < len(s) && isDigit(s[end+1]))
	return !before && !after
}

// reservedIP reports addresses that identify no one: loopback, unspecified,
// broadcast and the documentation networks.
func reservedIP(ip string) bool {
	for _, p := range []string{"127.", "0.", "255.", "192.0.2.", "198.51.100.", "203.0.113."} {
		if strings.HasPrefix(ip, p) {
			return true
		}
	}
	return false
}
