package leakcheck

import (
	"fmt"
	"math/big"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/sanitize/fakemark"
	"github.com/agentvcr/agentvcr/sanitize/words"
)

var (
	verifyPhone  = regexp.MustCompile(`\+\d[\d ().-]{6,}\d|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b`)
	verifyIBAN   = regexp.MustCompile(`[A-Z]{2}\d{2}[ A-Z0-9]{11,36}`)
	cardNetworks = regexp.MustCompile(`^(?:4|5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720|3[04-8]|6011|64[4-9]|65|62)`)
)

// detectors are what the leak check looks for beyond learned values; the
// Sanitizer's own check and Check run the same ones.
type detectors struct {
	notSecrets *regexp.Regexp  // Rules.NotSecrets
	idFields   map[string]bool // Rules.IDFields
	names      bool            // look for unlearned names (names.go)
	notNames   []string        // Rules.NotNames, lower case, single spaces
	// issued, set in a Sanitizer's own check, reports whether a value
	// is a fake this Sanitizer wrote, for the kinds whose fakes carry no
	// mark a check without the key could read (dates of birth, passport
	// numbers, phones by their member's name). Without it (Check), dates
	// of birth and passport numbers are not looked for, and a phone by
	// its member's name is a fake when libphonenumber calls it invalid.
	issued func(kind, v string) bool

	members  map[string]member   // object keys as the member rules read them
	assigned map[string][]string // assignment's findings, by key and short value
}

func newDetectors(rules Rules) (*detectors, error) {
	d := &detectors{idFields: map[string]bool{}, names: !rules.NoNames,
		members: map[string]member{}, assigned: map[string][]string{}}
	if len(rules.NotSecrets) > 0 {
		re, err := regexp.Compile("(?:" + strings.Join(rules.NotSecrets, ")|(?:") + ")")
		if err != nil {
			return nil, fmt.Errorf("leakcheck: notSecrets: %w", err)
		}
		d.notSecrets = re
	}
	for _, f := range rules.IDFields {
		d.idFields[f] = true
	}
	for _, n := range rules.NotNames {
		if n = strings.ToLower(strings.Join(strings.Fields(n), " ")); n != "" {
			d.notNames = append(d.notNames, n)
		}
	}
	return d, nil
}

// notSecret reports whether text[start:end] lies wholly inside a match of
// the product's not-secret ids.
func notSecret(re *regexp.Regexp, text string, start, end int) bool {
	if re == nil {
		return false
	}
	for _, m := range re.FindAllStringIndex(text, -1) {
		if m[0] <= start && end <= m[1] {
			return true
		}
	}
	return false
}

// textHits runs the leak check's own detectors on a text: email
// addresses off the reserved domains, secrets (gitleaks' rules, and an
// AWS secret key on the lines after its key id, credentials on a command
// line or in an Authorization header, credential documents by their
// shape), Slack ids and workspace names that are not the sanitizer's
// fakes, IP addresses off the documentation networks, phone numbers
// libphonenumber calls valid, IBANs that pass mod 97, card numbers that
// pass Luhn's check, social security numbers, dates of birth and passport
// numbers by their context, and people's names. Each runs only on a text
// that has what it looks for.
func (d *detectors) textHits(s string, found []string) []string {
	notSecrets := d.notSecrets
	digits, upper, colons, dots := 0, false, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
		case 'A' <= c && c <= 'Z':
			upper = true
		case c == ':':
			colons++
		case c == '.':
			dots++
		}
	}
	for _, addr := range emails(s) {
		if !reservedDomain(strings.ToLower(addr[strings.LastIndex(addr, "@")+1:])) {
			found = append(found, "email")
		}
	}
	for _, m := range secrets.Default().Find(s) {
		if !notSecret(notSecrets, s, m.Start, m.End) {
			found = append(found, "secret:"+m.Rule)
		}
	}
	if upper && digits > 0 {
		for _, id := range tokens(s, func(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }, isAlnumASCII) {
			if slackIDShaped(id) && strings.ContainsAny(id, "0123456789") && !fakemark.SlackID(id) {
				found = append(found, "slack-id")
			}
		}
	}
	if dots >= 2 {
		for _, ws := range workspaces(s) {
			if !words.SlackHost(ws) && !fakemark.Workspace(ws) && !strings.HasPrefix(ws, "-") {
				found = append(found, "workspace")
			}
		}
	}
	if digits >= 4 && dots >= 3 {
		for _, w := range tokens(s, func(c byte) bool { return '0' <= c && c <= '9' || c == '.' }, isAlnumASCII) {
			w = strings.Trim(w, ".")
			if strings.Count(w, ".") != 3 {
				continue // a version, a decimal or a longer dotted run
			}
			if addr, err := netip.ParseAddr(w); err == nil && !documentationIPv4(addr) {
				found = append(found, "ip")
			}
		}
	}
	if colons >= 7 || colons >= 2 && strings.Contains(s, "::") {
		for _, cand := range ipv6Candidates(s) {
			if addr, err := netip.ParseAddr(cand); err == nil && addr.Is6() && !documentationIPv6(addr) {
				found = append(found, "ipv6")
			}
		}
	}
	if digits >= 7 && (strings.Contains(s, "+") || digits >= 10) {
		found = append(found, phoneHits(s)...)
	}
	if upper && digits >= 2 && len(s) >= 15 {
		for i := 0; i+4 <= len(s); i++ {
			// Where two capitals and two digits start a word.
			if isUpperASCII(s[i]) && isUpperASCII(s[i+1]) && isDigitASCII(s[i+2]) && isDigitASCII(s[i+3]) && (i == 0 || !isAlnumASCII(s[i-1])) {
				if loc := verifyIBAN.FindStringIndex(s[i:]); loc != nil && loc[0] == 0 && ibanValid(s[i:i+loc[1]]) {
					found = append(found, "iban")
				}
			}
		}
	}
	if digits >= 13 {
		found = append(found, cardHits(s)...)
	}
	found = d.classHits(s, upper, digits, found)
	if d.names {
		for range unlearnedNames(s, d.notNames) {
			found = append(found, "name")
		}
	}
	return found
}

// slackIDShaped reports whether id is a Slack id's type letter and 8 to
// 11 capitals and digits.
func slackIDShaped(id string) bool {
	if len(id) < 9 || len(id) > 12 || strings.IndexByte("UWTECGDBFAS", id[0]) < 0 {
		return false
	}
	for i := 1; i < len(id); i++ {
		if !isUpperASCII(id[i]) && !isDigitASCII(id[i]) {
			return false
		}
	}
	return true
}

// tokens returns the runs of s whose bytes are in, with no byte of edge
// before or after them.
func tokens(s string, in, edge func(byte) bool) []string {
	var out []string
	for i := 0; i < len(s); {
		if !in(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && in(s[j]) {
			j++
		}
		if (i == 0 || !edge(s[i-1])) && (j == len(s) || !edge(s[j])) {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigitASCII(c byte) bool { return '0' <= c && c <= '9' }

// emails returns the email addresses in s: a local part of letters,
// digits, marks and ._%+-, an @, and a domain of labels with a last label
// of two letters or more of any script, or an internationalised one in
// its ASCII form (xn--p1ai).
func emails(s string) []string {
	var out []string
	for from := 0; ; {
		at := strings.IndexByte(s[from:], '@')
		if at < 0 {
			return out
		}
		at += from
		from = at + 1
		local := strings.LastIndexFunc(s[:at], func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || strings.ContainsRune("._%+-", r))
		}) + 1
		if local > 0 {
			_, n := utf8.DecodeRuneInString(s[local-1:])
			local += n - 1
		}
		end := strings.IndexFunc(s[at+1:], func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '.' || r == '-')
		})
		if end < 0 {
			end = len(s)
		} else {
			end += at + 1
		}
		domain := strings.TrimRight(s[at+1:end], ".-")
		labels := strings.Split(domain, ".")
		tld := labels[len(labels)-1]
		if local < at && len(labels) >= 2 && labels[0] != "" && topLevel(tld) {
			out = append(out, strings.TrimLeft(s[local:at], ".")+"@"+domain)
		}
	}
}

// topLevel reports whether a domain's last label may be a top-level
// domain: two letters or more, or xn-- and letters, digits and hyphens.
func topLevel(tld string) bool {
	if len(tld) > 4 && strings.EqualFold(tld[:4], "xn--") {
		for i := 4; i < len(tld); i++ {
			if c := tld[i]; !isAlnumASCII(c) && c != '-' {
				return false
			}
		}
		return true
	}
	return utf8.RuneCountInString(tld) >= 2 && strings.IndexFunc(tld, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// workspaces returns the labels before .slack.com and .slack-gov.com (and
// before .enterprise. there) in s, in lower case.
func workspaces(s string) []string {
	var out []string
	lower := strings.ToLower(s)
	for _, domain := range []string{".slack.com", ".slack-gov.com"} {
		out = append(out, workspacesOf(lower, domain)...)
	}
	return out
}

func workspacesOf(lower, domain string) []string {
	var out []string
	for from := 0; ; {
		i := strings.Index(lower[from:], domain)
		if i < 0 {
			return out
		}
		i += from
		from = i + len(domain)
		if from < len(lower) && (isAlnumASCII(lower[from]) || lower[from] == '-') {
			continue
		}
		host := strings.TrimSuffix(lower[:i], ".enterprise")
		label := host[strings.LastIndexFunc(host, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') })+1:]
		if label != "" {
			out = append(out, label)
		}
	}
}

// ipv6Candidates returns the runs of hexadecimal digits, colons and dots
// with two colons or more, standing alone.
func ipv6Candidates(s string) []string {
	var out []string
	isPart := func(c byte) bool { return isHexDigit(c) || c == ':' || c == '.' }
	for i := 0; i < len(s); {
		if !isPart(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isPart(s[j]) {
			j++
		}
		run := strings.Trim(s[i:j], ".")
		if strings.Count(run, ":") >= 2 && (i == 0 || !isAlnumASCII(s[i-1])) && (j == len(s) || !isAlnumASCII(s[j])) {
			if !strings.HasPrefix(run, "::") {
				run = strings.TrimLeft(run, ":")
			}
			if !strings.HasSuffix(run, "::") {
				run = strings.TrimRight(run, ":")
			}
			out = append(out, run)
		}
		i = j
	}
	return out
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// phoneHits looks for numbers libphonenumber calls valid: written with a
// +, or in the United States' 3-3-4 layout.
func phoneHits(s string) []string {
	if !mayHoldPhone(s) {
		return nil
	}
	var found []string
	for _, loc := range verifyPhone.FindAllStringIndex(s, -1) {
		if loc[0] > 0 && (isAlnumASCII(s[loc[0]-1]) || s[loc[0]-1] == '.' || s[loc[0]-1] == '+') {
			continue
		}
		// The number and what may follow it (a year, a count): every cut
		// at the end of a group of digits is tried.
		cand := s[loc[0]:loc[1]]
		// No number has more than 15 digits: cut there first.
		for n, i := 0, 0; i < len(cand); i++ {
			if cand[i] >= '0' && cand[i] <= '9' {
				n++
			}
			if n > 15 {
				cand = cand[:i]
				break
			}
		}
		for cut := len(cand); cut > 0; cut-- {
			if cut < len(cand) && !(unicode.IsDigit(rune(cand[cut-1])) && !unicode.IsDigit(rune(cand[cut]))) {
				continue
			}
			after := loc[0]+cut < len(s) && (isAlnumASCII(s[loc[0]+cut]) || s[loc[0]+cut] == '.' && loc[0]+cut+1 < len(s) && isAlnumASCII(s[loc[0]+cut+1]))
			if !after && phoneValid(cand[:cut]) {
				found = append(found, "phone")
				break
			}
		}
	}
	return found
}

// mayHoldPhone reports whether verifyPhone may match in s: a + before a
// digit, or digits in the 3-3-4 layout.
func mayHoldPhone(s string) bool {
	sep := func(i int) bool { return i < len(s) && (s[i] == ' ' || s[i] == '.' || s[i] == '-') }
	digitsAt := func(i, n int) bool {
		for j := i; j < i+n; j++ {
			if j >= len(s) || !isDigitASCII(s[j]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+' && i+1 < len(s) && isDigitASCII(s[i+1]):
			return true
		case sep(i) && i >= 3 && digitsAt(i+1, 3) && sep(i+4) && digitsAt(i+5, 4) && (digitsAt(i-3, 3) || s[i-1] == ')' && digitsAt(i-4, 3)):
			return true
		}
	}
	return false
}

// cardHits looks for card numbers in every run of digit groups (digits,
// with one space, dot or dash between groups), in the layouts card
// networks print them in: 13 to 19 digits together, groups of four (the
// last may be shorter), 4-6-5 and 4-6-4.
func cardHits(s string) []string {
	var found []string
	var groups [][2]int
	for i := 0; i < len(s); {
		if !isDigitASCII(s[i]) {
			i++
			continue
		}
		start := i
		groups = groups[:0]
		for {
			j := i
			for j < len(s) && isDigitASCII(s[j]) {
				j++
			}
			groups = append(groups, [2]int{i, j})
			i = j
			if i+1 < len(s) && (s[i] == ' ' || s[i] == '.' || s[i] == '-') && isDigitASCII(s[i+1]) {
				i++
				continue
			}
			break
		}
		end := i
		if start > 0 && (isAlnumASCII(s[start-1]) || s[start-1] == '.' || s[start-1] == '_') {
			continue
		}
		if end < len(s) && (unicode.IsLetter(rune(s[end])) || s[end] == '_' || s[end] == '.' && end+1 < len(s) && isAlnumASCII(s[end+1])) {
			groups = groups[:len(groups)-1]
		}
		for a := range groups {
			var digits [19]byte
			n := 0
			for b := a; b < len(groups); b++ {
				g := s[groups[b][0]:groups[b][1]]
				if n+len(g) > len(digits) {
					break
				}
				n += copy(digits[n:], g)
				if n >= 13 && cardValid(string(digits[:n])) && printedAsCard(s, groups[a:b+1]) {
					found = append(found, "card")
				}
			}
		}
	}
	return found
}

// printedAsCard reports whether groups of digits of s are laid out as
// cards are printed.
func printedAsCard(s string, g [][2]int) bool {
	size := func(i int) int { return g[i][1] - g[i][0] }
	switch {
	case len(g) == 1:
		return true
	case len(g) == 3 && size(0) == 4 && size(1) == 6 && (size(2) == 5 || size(2) == 4):
		return true
	}
	for i := range g {
		if size(i) != 4 && (i < len(g)-1 || size(i) > 3) {
			return false
		}
	}
	return true
}

func isAlnumASCII(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// reservedDomain reports the domains RFC 2606 and 6761 keep for examples
// and tests.
func reservedDomain(d string) bool {
	if d == "example.com" || d == "example.org" || d == "example.net" {
		return true
	}
	for _, tld := range []string{"example", "test", "invalid", "localhost"} {
		if d == tld || strings.HasSuffix(d, "."+tld) {
			return true
		}
	}
	return strings.HasSuffix(d, ".example.com") || strings.HasSuffix(d, ".example.org") || strings.HasSuffix(d, ".example.net")
}

var (
	docNets4 = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("255.0.0.0/8"),
		netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24")}
	docNet6 = netip.MustParsePrefix("2001:db8::/32")
)

func documentationIPv4(a netip.Addr) bool {
	for _, p := range docNets4 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func documentationIPv6(a netip.Addr) bool {
	return a.IsLoopback() || a.IsUnspecified() || docNet6.Contains(a)
}

// phoneValid reports whether text is a phone number libphonenumber calls
// valid, read with its + or as a number of the United States.
func phoneValid(text string) bool {
	region := "US"
	if strings.HasPrefix(text, "+") {
		region = ""
	}
	// A number of the North American plan has ten digits after its 1,
	// whose area code and exchange start with 2 to 9: others need no parse.
	var buf [24]byte
	d := buf[:0]
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= '0' && c <= '9' && len(d) < len(buf) {
			d = append(d, c)
		}
	}
	if len(d) < 2 {
		return false
	}
	if region == "US" || d[0] == '1' {
		if region == "" || len(d) == 11 && d[0] == '1' {
			d = d[1:]
		}
		if len(d) != 10 || d[0] < '2' || d[3] < '2' {
			return false
		}
	}
	num, err := phonenumbers.Parse(text, region)
	return err == nil && phonenumbers.IsValidNumber(num)
}

// ibanValid reports whether text starts with an IBAN: as long as its
// country's IBANs, ending where a group of the text ends, with check
// digits that hold (the number with its first four characters moved to
// the end, and letters as 10 to 35, leaves 1 when divided by 97).
func ibanValid(text string) bool {
	want, ok := words.IBANLength(text[:2])
	if !ok {
		return false
	}
	var compact strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != ' ' {
			compact.WriteByte(text[i])
		}
		if compact.Len() == want {
			if i+1 < len(text) && text[i+1] != ' ' {
				return false
			}
			c := compact.String()
			var digits strings.Builder
			for _, r := range c[4:] + c[:4] {
				if r >= 'A' && r <= 'Z' {
					digits.WriteString(strconv.Itoa(int(r - 'A' + 10)))
				} else {
					digits.WriteRune(r)
				}
			}
			num, ok := new(big.Int).SetString(digits.String(), 10)
			return ok && new(big.Int).Mod(num, big.NewInt(97)).Int64() == 1
		}
	}
	return false
}

// cardValid reports whether text (digits, with spaces or dashes between)
// is 13 to 19 digits from a card network's range whose Luhn sum is a
// multiple of ten.
func cardValid(text string) bool {
	var b [19]byte
	n := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == ' ' || c == '-':
		case '0' <= c && c <= '9' && n < len(b):
			b[n] = c
			n++
		default:
			return false
		}
	}
	if n < 13 {
		return false
	}
	d := b[:n]
	doubled := [10]int{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}
	sum := 0
	for i := range len(d) {
		c := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			c = doubled[c]
		}
		sum += c
	}
	return sum%10 == 0 && cardNetworks.Match(d)
}
