package sanitize

import (
	"net/netip"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/sanitize/words"
)

// The detectors find what no rule names, in decoded text: secrets
// (gitleaks' rule set and agentvcr's, internal/secrets), email addresses,
// the labels of Slack markup, Slack ids, workspace hosts, dashboard and
// web conversation ids, IPv4 and IPv6 addresses, phone numbers
// (libphonenumber), IBANs (mod 97) and card numbers (Luhn).

// detect appends what the detectors find in text.
func (s *Sanitizer) detect(text string, out []span) []span {
	fk := s.fk
	for _, m := range secrets.Default().Find(text) {
		if !notSecret(s.notSecrets, text, m.Start, m.End) {
			out = append(out, span{m.Start, m.End, fk.secret(m.Rule, text[m.Start:m.End]), KindSecret, "secret:" + m.Rule})
		}
	}
	if strings.IndexByte(text, '@') >= 0 {
		for _, e := range findEmails(text) {
			if addr := text[e[0]:e[1]]; !reservedEmail(addr) {
				out = append(out, span{e[0], e[1], fk.fake(KindEmail, strings.ToLower(addr)), KindEmail, "email"})
			}
		}
	}
	if strings.IndexByte(text, '|') >= 0 {
		out = markupSpans(text, fk, out)
	}
	out = idSpans(text, fk, out)
	out = workspaceSpans(text, fk, out)
	out = conversationIDSpans(text, fk, out)
	if n := countDigits(text); n >= 4 {
		out = numberSpans(text, n, fk, out)
	}
	if c := strings.Count(text, ":"); c >= 7 || c >= 2 && strings.Contains(text, "::") {
		out = ipv6Spans(text, fk, out)
	}
	return out
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

// findEmails returns the [start, end) of each email address in s. Local
// parts and domains may hold letters of any script.
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
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:start])
		if !isLocalRune(r) {
			break
		}
		start -= n
	}
	for start < at && (s[start] == '.') {
		start++
	}
	end = at + 1
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if !isDomainRune(r) {
			break
		}
		end += n
	}
	for end > at+1 && (s[end-1] == '.' || s[end-1] == '-') {
		end--
	}
	domain := s[at+1 : end]
	dot := strings.LastIndexByte(domain, '.')
	if start >= at || dot <= 0 || !isTLD(domain[dot+1:]) {
		return 0, 0, false
	}
	return start, end, true
}

func isLocalRune(r rune) bool {
	return r < utf8.RuneSelf && (isAlnumByte(byte(r)) || strings.IndexByte("._%+-", byte(r)) >= 0) ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

func isDomainRune(r rune) bool {
	return r < utf8.RuneSelf && (isAlnumByte(byte(r)) || r == '.' || r == '-') ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

// isTLD reports whether s may be a top-level domain: two letters or more
// of any script, or an internationalised one in its ASCII form (xn--p1ai).
func isTLD(s string) bool {
	if len(s) > 4 && strings.EqualFold(s[:4], "xn--") {
		for i := 4; i < len(s); i++ {
			if !isAlnumByte(s[i]) && s[i] != '-' {
				return false
			}
		}
		return true
	}
	n := 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
		n++
	}
	return n >= 2
}

func isAlnumByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
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

// idSpans replaces runs of capitals and digits shaped like Slack ids: a
// word of 9 to 12 characters with a digit, starting with a type letter,
// or after @, # or ^ (a mention) any of 3 or more. An underscore or any
// character but a letter or digit ends the word.
func idSpans(s string, fk *faker, out []span) []span {
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) || i > 0 && isAlnumByte(s[i-1]) {
			continue
		}
		j, digit := i+1, false
		for j < len(s) && (isUpper(s[j]) || isDigit(s[j])) {
			digit = digit || isDigit(s[j])
			j++
		}
		n := j - i
		mention := i > 0 && strings.IndexByte("@#^", s[i-1]) >= 0
		shaped := mention && n >= 3 || digit && n >= 9 && n <= 12
		if shaped && strings.IndexByte(slackIDPrefixes, s[i]) >= 0 && (j == len(s) || !isAlnumByte(s[j])) {
			out = append(out, span{i, j, fk.fake(KindSlackID, s[i:j]), KindSlackID, "slack-id"})
		}
		i = j - 1
	}
	return out
}

// markupRe is Slack markup with a label, in decoded text: <@U1|name>,
// <#C1|channel>, <!subteam^S1|@group>.
var markupRe = regexp.MustCompile(`<([@#]|!subteam\^)[A-Z0-9]+\|([^<>|]+)>`)

// markupSpans replaces the labels of Slack mentions: a person's name or
// handle, a channel name, a user group handle.
func markupSpans(s string, fk *faker, out []span) []span {
	for _, m := range markupRe.FindAllStringSubmatchIndex(s, -1) {
		k, start, end := markupKind(s[m[2]:m[3]], s[m[4]:m[5]])
		start, end = m[4]+start, m[4]+end
		out = append(out, span{start, end, fk.fake(k, s[start:end]), k, "slack-markup"})
	}
	return out
}

// markupKind says what a label of Slack markup with the sigil holds, and
// the part of it that holds it (a group's handle without its @).
func markupKind(sigil, label string) (Kind, int, int) {
	switch {
	case sigil == "#":
		return KindChannelName, 0, len(label)
	case strings.HasPrefix(label, "@"):
		return KindHandle, 1, len(label)
	case strings.Contains(label, " "):
		return KindName, 0, len(label)
	}
	return KindHandle, 0, len(label)
}

// workspaceSpans replaces Slack workspace names in hosts, in any letter
// case: the label before .slack.com or .slack-gov.com (or before
// .enterprise. there).
func workspaceSpans(s string, fk *faker, out []span) []span {
	for _, domain := range []string{".slack.com", ".slack-gov.com"} {
		out = workspaceSpansOf(s, domain, fk, out)
	}
	return out
}

func workspaceSpansOf(s, domain string, fk *faker, out []span) []span {
	for from := 0; ; {
		p := indexFold(s[from:], domain)
		if p < 0 {
			return out
		}
		p += from
		from = p + len(domain)
		if from < len(s) && (isAlnumByte(s[from]) || s[from] == '-') {
			continue // .slack.community and the like
		}
		end := p
		if end >= len(".enterprise") && strings.EqualFold(s[end-len(".enterprise"):end], ".enterprise") {
			end -= len(".enterprise")
		}
		start := end
		for start > 0 && (isAlnumByte(s[start-1]) || s[start-1] == '-') {
			start--
		}
		if ws := strings.ToLower(s[start:end]); ws != "" && ws[0] != '-' && !words.SlackHost(ws) {
			out = append(out, span{start, end, fk.fake(KindWorkspace, ws), KindWorkspace, "workspace-url"})
		}
	}
}

// indexFold is strings.Index for an ASCII needle in any letter case, its
// first letter included.
func indexFold(s, needle string) int {
	first := needle[0]
	if isAlpha(first) {
		// The first byte in either case: the run of anything else is
		// skipped with IndexByte when the needle starts with no letter.
		for i := 0; i+len(needle) <= len(s); i++ {
			if c := s[i]; c|0x20 == first|0x20 && strings.EqualFold(s[i:i+len(needle)], needle) {
				return i
			}
		}
		return -1
	}
	for i := 0; i+len(needle) <= len(s); i++ {
		j := strings.IndexByte(s[i:], first)
		if j < 0 {
			return -1
		}
		i += j
		if i+len(needle) <= len(s) && strings.EqualFold(s[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

var (
	dashboardRe = regexp.MustCompile(`\bdashboard:([0-9a-f]{6,})\b`)
	localIDRe   = regexp.MustCompile(`\blocal:(?:web|fork):(?:fork-)?([0-9a-f]{4,})\b`)
)

// conversationIDSpans replaces dashboard user ids and the hashes of web
// conversation ids.
func conversationIDSpans(s string, fk *faker, out []span) []span {
	if strings.Contains(s, "dashboard:") {
		for _, m := range dashboardRe.FindAllStringIndex(s, -1) {
			out = append(out, span{m[0], m[1], fk.fake(KindDashboardID, s[m[0]:m[1]]), KindDashboardID, "dashboard-id"})
		}
	}
	if strings.Contains(s, "local:") {
		for _, m := range localIDRe.FindAllStringSubmatchIndex(s, -1) {
			out = append(out, span{m[2], m[3], fk.fake(KindHexID, s[m[2]:m[3]]), KindHexID, "conversation-id"})
		}
	}
	return out
}

var (
	ipv4Re = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`)
	// phoneShapeRe are national and international layouts of 9 digits or
	// more, which are replaced whether or not libphonenumber knows them.
	phoneShapeRe = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])\d{3,4}[ .-]\d{3,4}\b|\+\d{9,14}\b`)
	// numberRunRe are the runs libphonenumber and the card and IBAN checks
	// are asked about.
	numberRunRe = regexp.MustCompile(`\+?\(?\d[\d ().\-/]{5,}\d`)
	ibanRe      = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)
)

// numberSpans finds what is written with digits (s holds digits of
// them): IPv4 addresses, phone numbers, card numbers and IBANs. Each
// expression runs only on a text with digits enough for what it finds.
func numberSpans(s string, digits int, fk *faker, out []span) []span {
	if strings.Count(s, ".") >= 3 {
		for _, r := range digitRuns(s, ".", 1) {
			// Four numbers of at most three digits, dotted: an address.
			for a := 0; a+4 <= len(r); a++ {
				start, end := r[a][0], r[a+3][1]
				if m := ipv4Re.FindStringIndex(s[start:end]); m != nil && m[0] == 0 && m[1] == end-start {
					if ip := s[start:end]; !reservedIP(ip) && notDotted(s, start, end) {
						out = append(out, span{start, end, fk.fake(KindIP, ip), KindIP, "ip"})
					}
				}
			}
		}
	}
	if digits < 7 {
		return out
	}
	for _, m := range numberRunRe.FindAllStringIndex(s, -1) {
		start, end := m[0], m[1]
		if start > 0 && (isAlnumByte(s[start-1]) || s[start-1] == '.') || end < len(s) && (isAlnumByte(s[end]) || s[end] == '.' && end+1 < len(s) && isDigit(s[end+1])) {
			continue
		}
		if run := s[start:end]; isPhone(run) {
			out = append(out, span{start, end, fk.fake(KindPhone, run), KindPhone, "phone"})
		}
	}
	// Cards stand in their networks' layouts (one group, or groups of
	// four, or 4-6-5 and 4-6-4), and may be followed by more digits (a
	// year, a count): each run of digit groups is read from each group on,
	// up to 19 digits.
	for _, r := range digitRuns(s, " -.", 1) {
		if digits < 13 {
			break
		}
		for a := range r {
			n := 0
			for b := a; b < len(r) && n <= 19; b++ {
				if n += r[b][1] - r[b][0]; n >= 13 && n <= 19 && cardLayout(r[a:b+1]) {
					if run := s[r[a][0]:r[b][1]]; isCard(run) {
						out = append(out, span{r[a][0], r[b][1], fk.fake(KindCard, run), KindCard, "card"})
					}
				}
			}
		}
	}
	for _, r := range digitRuns(s, " .-()/", 2) {
		if strings.IndexByte(s, '+') < 0 {
			break
		}
		if r[0][0] == 0 || s[r[0][0]-1] != '+' {
			continue
		}
		start := r[0][0] - 1
		n, last := 0, 0
		for last < len(r) && n+r[last][1]-r[last][0] <= 15 {
			n += r[last][1] - r[last][0]
			last++
		}
		for b := last - 1; b >= 0; b-- {
			if run := s[start:r[b][1]]; validPhone(run, "") {
				out = append(out, span{start, r[b][1], fk.fake(KindPhone, run), KindPhone, "phone"})
				break
			}
		}
	}
	if digits >= 9 {
		for _, r := range digitRuns(s, " .-()", 2) {
			// Three groups or more: the regexp runs where they stand.
			if len(r) < 3 {
				continue
			}
			lo := max(0, r[0][0]-5)
			for _, m := range phoneShapeRe.FindAllStringIndex(s[lo:r[len(r)-1][1]], -1) {
				if start, end := lo+m[0], lo+m[1]; digitBoundary(s, start, end) {
					out = append(out, span{start, end, fk.fake(KindPhone, s[start:end]), KindPhone, "phone"})
				}
			}
		}
	}
	if hasUpperPair(s) {
		for _, m := range ibanRe.FindAllStringIndex(s, -1) {
			if isIBAN(s[m[0]:m[1]]) {
				out = append(out, span{m[0], m[1], fk.fake(KindIBAN, s[m[0]:m[1]]), KindIBAN, "iban"})
			}
		}
	}
	return out
}

// digitRuns returns the runs of digit groups in s, each group's start and
// end: groups joined by at most maxSep separators of seps, the run
// standing alone (no letter, digit, underscore or decimal point before it;
// a last group glued to a word or a decimal is left out).
func digitRuns(s, seps string, maxSep int) [][][2]int {
	var runs [][][2]int
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || i > 0 && (isAlnumByte(s[i-1]) || s[i-1] == '.' || s[i-1] == '_') {
			continue
		}
		var run [][2]int
		j := i
		for {
			g := j
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			run = append(run, [2]int{g, j})
			k := j
			for k < len(s) && k-j < maxSep && strings.IndexByte(seps, s[k]) >= 0 {
				k++
			}
			if k == j || k >= len(s) || !isDigit(s[k]) {
				break
			}
			j = k
		}
		end := run[len(run)-1][1]
		if end < len(s) && (isAlpha(s[end]) || s[end] == '_' || s[end] == '.' && end+1 < len(s) && isDigit(s[end+1])) {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
		i = end
	}
	return runs
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func hasUpperPair(s string) bool {
	for i := 1; i < len(s); i++ {
		if isUpper(s[i]) && isUpper(s[i-1]) {
			return true
		}
	}
	return false
}

// numberEdits returns the replacements in a JSON number: a learned value
// written as a number, a phone number in international form without its
// +, a card number. The replacement has as many digits, and never a
// leading 0.
func (s *Sanitizer) numberEdits(raw string) []edit {
	// The integer a number writes: its digits, but for a sign and a
	// fraction of zeros (4111111111111111.0, -14155552671).
	lo, num := 0, raw
	if strings.HasPrefix(num, "-") {
		lo, num = 1, num[1:]
	}
	if dot := strings.IndexByte(num, '.'); dot >= 0 && strings.Trim(num[dot+1:], "0") == "" {
		num = num[:dot]
	}
	if len(num) < 5 || strings.Trim(num, "0123456789") != "" {
		return nil
	}
	kind, detector := Kind(""), "learned"
	for _, k := range []Kind{KindNumericID, KindPhone, KindCard} {
		if _, ok := s.dict.byValue[dictKey(k, num)]; ok {
			kind = k
			break
		}
	}
	switch {
	case kind != "":
	case isCard(num):
		kind, detector = KindCard, "card"
	case isPhoneNumber(num):
		kind, detector = KindPhone, "phone"
	default:
		return nil
	}
	return []edit{{start: lo, end: lo + len(num), repl: s.fk.fake(kind, num), kind: kind, detector: detector}}
}

// isPhoneNumber reports whether the digits of a JSON number are a phone
// number: valid with a + before them, or as a number of the United States.
func isPhoneNumber(digits string) bool {
	if len(digits) < 10 || len(digits) > 15 {
		return false
	}
	return validPhone("+"+digits, "") || len(digits) == 10 && validPhone(digits, "US")
}

// isPhone reports whether a run of digits and separators is a phone
// number libphonenumber knows: valid for its country (a leading + names
// it; else the United States), and grouped as that country groups its
// numbers, so that a date or a version is not one.
func isPhone(run string) bool {
	digits := 0
	for i := 0; i < len(run); i++ {
		if isDigit(run[i]) {
			digits++
		}
	}
	if digits < 7 || digits > 15 {
		return false
	}
	return validPhone(run, "US")
}

// validPhone reports whether libphonenumber calls text valid, read in the
// region unless it starts with +; without the +, its grouping must also
// be the number's own.
func validPhone(text, region string) bool {
	// libphonenumber's parse is costly, and most runs are no number of
	// the North American plan: those are told by their digits.
	if !strings.HasPrefix(text, "+") && region == "US" && !nanpShaped(text) ||
		strings.HasPrefix(text, "+1") && !nanpShaped(text[1:]) {
		return false
	}
	num, err := phonenumbers.Parse(text, region)
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return false
	}
	return strings.HasPrefix(text, "+") || groupedAsFormatted(text, num)
}

// nanpShaped reports whether the digits of text may be a number of the
// North American plan: ten, or eleven starting with 1, with an area code
// and an exchange that start with 2 to 9.
func nanpShaped(text string) bool {
	d := make([]byte, 0, 11)
	for i := 0; i < len(text) && len(d) <= 11; i++ {
		if isDigit(text[i]) {
			d = append(d, text[i])
		}
	}
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return len(d) == 10 && d[0] >= '2' && d[3] >= '2'
}

// groupedAsFormatted reports whether the digit groups of text keep each
// group of the number's own format whole (a group of text may hold
// several): +49 30 12345678 and 030 12345678, not 2026-09-30 14.
func groupedAsFormatted(text string, num *phonenumbers.PhoneNumber) bool {
	format := phonenumbers.NATIONAL
	if strings.HasPrefix(strings.TrimSpace(text), "+") {
		format = phonenumbers.INTERNATIONAL
	}
	want := digitGroups(phonenumbers.Format(num, format))
	got := digitGroups(text)
	if format == phonenumbers.INTERNATIONAL && len(want) > 0 && len(got) > 0 {
		// The country code is a group of both.
		want, got = want[1:], got[1:]
		if len(got) == 0 {
			return false
		}
		if len(want) > 0 && !strings.HasPrefix(got[0], want[0]) {
			// +4930 12345678: the code and the first group together.
			return strings.Join(got, "") == strings.Join(want, "")
		}
	}
	g, w := 0, 0
	for g < len(got) && w < len(want) {
		part := got[g]
		// A group of text holds one or more whole groups of the format.
		for part != "" && w < len(want) && strings.HasPrefix(part, want[w]) {
			part = part[len(want[w]):]
			w++
		}
		if part != "" {
			// A national prefix the format leaves out (0 of 030) may lead.
			if g == 0 && w == 0 && strings.HasSuffix(want[0], part) {
				w++
				g++
				continue
			}
			return false
		}
		g++
	}
	return g == len(got) && w == len(want)
}

func digitGroups(s string) []string {
	var groups []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		groups = append(groups, s[i:j])
		i = j
	}
	return groups
}

// cardLayout reports whether digit groups have the layout of a card
// number: one group, or groups of four with a shorter last one, or
// American Express's 4-6-5 and Diners' 4-6-4.
func cardLayout(groups [][2]int) bool {
	if len(groups) == 1 {
		return true
	}
	l := func(i int) int { return groups[i][1] - groups[i][0] }
	if len(groups) == 3 && l(0) == 4 && l(1) == 6 && (l(2) == 5 || l(2) == 4) {
		return true
	}
	for i := range groups {
		if l(i) != 4 && !(i == len(groups)-1 && l(i) >= 1 && l(i) <= 3) {
			return false
		}
	}
	return true
}

// isCard reports whether a run of digits (alone or in groups of four, with
// spaces or dashes) is a payment card number: 13 to 19 digits, an issuer's
// prefix, and a valid Luhn check digit.
func isCard(run string) bool {
	digits := make([]byte, 0, 19)
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case isDigit(c):
			digits = append(digits, c)
		case c == ' ' || c == '-' || c == '.':
		default:
			return false
		}
	}
	if len(digits) < 13 || len(digits) > 19 || !cardPrefix(string(digits)) {
		return false
	}
	return luhn(digits)
}

// cardPrefix reports whether digits start with the prefix of a card
// network: Visa 4, Mastercard 51-55 and 2221-2720, Amex 34 and 37, Diners
// 30, 36, 38, Discover 6011, 644-649, 65, JCB 35, UnionPay 62.
func cardPrefix(d string) bool {
	two := d[:2]
	switch {
	case d[0] == '4':
		return true
	case two >= "51" && two <= "55", d[:4] >= "2221" && d[:4] <= "2720":
		return true
	case two == "34" || two == "37" || two == "30" || two == "36" || two == "38" || two == "35" || two == "62" || two == "65":
		return true
	case d[:4] == "6011", d[:3] >= "644" && d[:3] <= "649":
		return true
	}
	return false
}

func luhn(digits []byte) bool {
	sum := 0
	for i := range digits {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// isIBAN reports whether text (with or without its spaces) is an IBAN of
// the right length for its country with a valid mod-97 check.
func isIBAN(text string) bool {
	s := strings.ReplaceAll(text, " ", "")
	if n, ok := words.IBANLength(s[:2]); !ok || n != len(s) {
		return false
	}
	return ibanMod97(s) == 1
}

// ibanMod97 is the IBAN check of s: the remainder of its number, with the
// first four characters moved to the end and letters as 10 to 35.
func ibanMod97(s string) int {
	r := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case 'A' <= c && c <= 'Z':
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return -1
		}
	}
	return r
}

// ipv6Re are the runs IPv6 addresses are looked for in.
var ipv6Re = regexp.MustCompile(`(?i)[0-9a-f:]*:[0-9a-f:]*:[0-9a-f:.]*`)

// ipv6Spans replaces IPv6 addresses but loopback, unspecified and the
// documentation network 2001:db8::/32.
func ipv6Spans(s string, fk *faker, out []span) []span {
	for _, m := range ipv6Re.FindAllStringIndex(s, -1) {
		start, end := m[0], m[1]
		for start < end && s[start] == ':' && !strings.HasPrefix(s[start:], "::") {
			start++
		}
		for end > start && (s[end-1] == '.' || s[end-1] == ':' && !strings.HasSuffix(s[:end], "::")) {
			end--
		}
		if start > 0 && (isAlnumByte(s[start-1]) || s[start-1] == '_') || end < len(s) && (isAlnumByte(s[end]) || s[end] == '_') {
			continue
		}
		if addr, err := netip.ParseAddr(s[start:end]); err == nil && addr.Is6() && !reservedIPv6(addr) {
			out = append(out, span{start, end, fk.fake(KindIPv6, s[start:end]), KindIPv6, "ipv6"})
		}
	}
	return out
}

var ipv6Documentation = netip.MustParsePrefix("2001:db8::/32")

func reservedIPv6(a netip.Addr) bool {
	return a.IsLoopback() || a.IsUnspecified() || ipv6Documentation.Contains(a)
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
