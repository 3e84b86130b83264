package sanitize

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// The leak classes that a token's shape does not tell: secrets told by
// the lines or the command around them, credential documents by their
// members, phones by the name of their member, and national ids and dates
// of birth by the words beside them. The rules are the leak check's own;
// what they find, the rewrite must replace (with a placeholder, or a fake
// that carries the mark each rule names).

// classHits looks in one form of a text for the classes above; upper
// and digits say whether it has capitals and how many digits.
func (d *detectors) classHits(s string, upper bool, digits int, found []string) []string {
	lower := s
	if upper {
		lower = asciiLowerString(s) // offsets stay: only ASCII changes
	}
	found = awsSecretHits(s, found)
	found = commandHits(s, lower, found)
	found = credentialTextHits(s, lower, found)
	return d.contextHits(s, lower, digits, found)
}

// placeholder is the rewrite's stand-in for a secret: [redacted RULE
// 0123abcd].
var placeholder = regexp.MustCompile(`^\[redacted [^\s\]]+ [0-9a-f]{8}\]`)

// noCredential reports whether a value written where a credential goes
// holds none: nothing, the rewrite's placeholder, a variable or a
// template that stands for one ($TOKEN, ${TOKEN}, $(cmd), %TOKEN%,
// <token>, {{token}}), or an ellipsis or mask (..., ***, xxxx).
func noCredential(v string) bool {
	v = strings.Trim(v, " \t\r\n")
	switch {
	case v == "", placeholder.MatchString(v), v[0] == '$', strings.HasPrefix(v, "{{"):
		return true
	case len(v) > 1 && (v[0] == '<' && v[len(v)-1] == '>' || v[0] == '%' && v[len(v)-1] == '%'):
		return true
	}
	return strings.Trim(v, ".*xX…•") == ""
}

// awsKeyIDAt reports whether an AWS access key id (AKIA or ASIA and 16
// capitals or digits) stands at s[i:], and where it ends.
func awsKeyIDAt(s string, i int) (int, bool) {
	if i+20 > len(s) || !(strings.HasPrefix(s[i:], "AKIA") || strings.HasPrefix(s[i:], "ASIA")) || i > 0 && isAlnumASCII(s[i-1]) {
		return 0, false
	}
	for j := i + 4; j < i+20; j++ {
		if !isUpperASCII(s[j]) && !isDigitASCII(s[j]) {
			return 0, false
		}
	}
	if i+20 < len(s) && isAlnumASCII(s[i+20]) {
		return 0, false
	}
	return i + 20, true
}

func isSecretKeyByte(c byte) bool { return isAlnumASCII(c) || c == '/' || c == '+' }

// awsSecretHits finds an AWS secret access key (40 characters of
// A-Za-z0-9/+, mixing cases, with a digit, / or +) on the line of an
// access key id or on the three lines after it: a key pair pasted as two
// lines, whatever names them. The key id counts when the rewrite
// replaced it ([redacted aws...]).
func awsSecretHits(s string, found []string) []string {
	if len(s) < 40 || !strings.Contains(s, "AKIA") && !strings.Contains(s, "ASIA") && !strings.Contains(s, "[redacted aws") {
		return found
	}
	for i := 0; i < len(s); i++ {
		end, ok := awsKeyIDAt(s, i)
		if !ok && strings.HasPrefix(s[i:], "[redacted aws") {
			if m := placeholder.FindStringIndex(s[i:]); m != nil {
				end, ok = i+m[1], true
			}
		}
		if !ok {
			continue
		}
		// The rest of the line and three more.
		stop := end
		for n := 0; n < 4 && stop < len(s); n++ {
			if nl := strings.IndexByte(s[stop:], '\n'); nl >= 0 {
				stop += nl + 1
			} else {
				stop = len(s)
			}
		}
		for j := end; j < stop; {
			if !isSecretKeyByte(s[j]) {
				j++
				continue
			}
			k := j
			lower, upper, other := false, false, false
			for k < len(s) && isSecretKeyByte(s[k]) {
				switch c := s[k]; {
				case 'a' <= c && c <= 'z':
					lower = true
				case 'A' <= c && c <= 'Z':
					upper = true
				default:
					other = true
				}
				k++
			}
			if k-j == 40 && lower && upper && other && (j == 0 || s[j-1] != '=') && (k == len(s) || s[k] != '=') {
				found = append(found, "secret:aws-secret-access-key")
			}
			j = k
		}
		i = end - 1
	}
	return found
}

var (
	curlWord = regexp.MustCompile(`(?:^|[\s/;|&(` + "`" + `])curl(?:\s|$)`)
	// The programs whose -p takes a password: attached (-pSECRET) for
	// all, apart (-p SECRET) for all but mysql's and mariadb's (whose
	// -p NAME is a prompt, then a database).
	pPrograms = regexp.MustCompile(`(?:^|[\s/;|&(])(?:(mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump|mariadb-admin)|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|sshpass|(?:docker|podman|nerdctl|buildah|skopeo|helm)\s(?:[^\n]*\s)?login)\s`)
)

// commandLines splits a text into commands: lines, with a line that ends
// in \ continued on the next.
func commandLines(s string, fn func(line string)) {
	for len(s) > 0 {
		end := 0
		for {
			nl := strings.IndexByte(s[end:], '\n')
			if nl < 0 {
				end = len(s)
				break
			}
			end += nl
			if end > 0 && s[end-1] == '\\' || end > 1 && s[end-1] == '\r' && s[end-2] == '\\' {
				end++
				continue
			}
			break
		}
		fn(s[:end])
		if end >= len(s) {
			return
		}
		s = s[end+1:]
	}
}

// argValue reads a command-line argument's value at s[i:]: with an
// opening quote or not, up to white space or a quote, with the rewrite's
// placeholders in it whole.
func argValue(s string, i int) string {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n\"'`", rune(s[j])) {
		if s[j] == '[' {
			if m := placeholder.FindStringIndex(s[j:]); m != nil {
				j += m[1]
				continue
			}
		}
		j++
	}
	return s[i:j]
}

// flagValues calls fn with the value of every flag in line: after white
// space, =, or (attached) nothing, as the flag allows.
func flagValues(line, flag string, attached, apart, equals bool, fn func(v string)) {
	for from := 0; ; {
		at := strings.Index(line[from:], flag)
		if at < 0 {
			return
		}
		at += from
		from = at + len(flag)
		if at > 0 && !strings.ContainsRune(" \t\n\"'", rune(line[at-1])) {
			continue
		}
		rest := at + len(flag)
		switch {
		case rest >= len(line):
		case line[rest] == '=' && equals:
			fn(argValue(line, rest+1))
		case (line[rest] == ' ' || line[rest] == '\t' || line[rest] == '\\') && apart:
			j := rest
			for j < len(line) && strings.ContainsRune(" \t\\\r\n", rune(line[j])) {
				j++
			}
			if j < len(line) && line[j] != '-' {
				fn(argValue(line, j))
			}
		case attached && line[rest] != ' ' && line[rest] != '\t' && line[rest] != '=':
			fn(argValue(line, rest))
		}
	}
}

// commandHits finds credentials written as command arguments: the
// password of curl's -u/--user USER:PASSWORD, the value of --password
// (any program) and of -p (the programs whose -p is a password), and the
// credential of an Authorization header (Authorization: SCHEME
// CREDENTIAL), in pasted shell or any text.
func commandHits(s, lower string, found []string) []string {
	curl := strings.Contains(s, "curl")
	password := strings.Contains(s, "--password")
	p := strings.Contains(s, " -p") || strings.Contains(s, "\t-p") || strings.Contains(s, "\n-p")
	if curl || password || p {
		commandLines(s, func(line string) {
			if curl && curlWord.MatchString(line) {
				user := func(v string) {
					if _, pass, ok := strings.Cut(v, ":"); ok && !noCredential(pass) {
						found = append(found, "secret:curl-user-password")
					}
				}
				flagValues(line, "-u", true, true, false, user)
				flagValues(line, "--user", false, true, true, user)
			}
			pass := func(v string) {
				if !noCredential(v) {
					found = append(found, "secret:password-argument")
				}
			}
			if password {
				flagValues(line, "--password", false, true, true, pass)
			}
			if p {
				if m := pPrograms.FindStringSubmatchIndex(line); m != nil {
					mysql := m[2] >= 0
					flagValues(line[m[1]-1:], "-p", true, !mysql, false, pass)
				}
			}
		})
	}
	return authorizationHits(s, lower, found)
}

// authorizationHits finds Authorization headers written as text
// (Authorization: Bearer TOKEN, also quoted as in JSON), and those of a
// proxy.
func authorizationHits(s, lower string, found []string) []string {
	for from := 0; ; {
		at := strings.Index(lower[from:], "authorization")
		if at < 0 {
			return found
		}
		at += from
		from = at + len("authorization")
		if at > 0 && isLetterASCII(s[at-1]) {
			continue
		}
		i := from
		if i < len(s) && s[i] == '"' {
			i++
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != ':' {
			continue
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '"') {
			i++
		}
		if cred, ok := schemeCredential(s[i:]); ok && !noCredential(cred) {
			found = append(found, "secret:authorization-header")
		}
	}
}

// schemeCredential reads "SCHEME CREDENTIAL" at the start of s: a word,
// spaces, and the credential up to white space or a quote.
func schemeCredential(s string) (string, bool) {
	i := 0
	for i < len(s) && (isAlnumASCII(s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.') {
		i++
	}
	if i == 0 || !isLetterASCII(s[0]) || i >= len(s) || s[i] != ' ' && s[i] != '\t' {
		return "", false
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return argValue(s, i), true
}

var (
	gcpMember = regexp.MustCompile(`"(private_key_id|private_key|client_id|client_email)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	awsFile   = regexp.MustCompile(`(?im)^[ \t]*(?:export[ \t]+)?(aws_access_key_id|aws_secret_access_key|aws_session_token)[ \t]*[=:][ \t]*([^\r\n]*)`)
)

// credentialTextHits finds credential documents written as text: a GCP
// service account's JSON (its key id, key, client id and client email),
// and an AWS credentials or config file (or environment) with its key id,
// secret key or session token.
func credentialTextHits(s, lower string, found []string) []string {
	if strings.Contains(s, "service_account") {
		for _, m := range gcpMember.FindAllStringSubmatch(s, -1) {
			if !noCredential(m[2]) && !fakeEmail(m[1], m[2]) {
				found = append(found, "secret:gcp-service-account")
			}
		}
	}
	if strings.Contains(lower, "aws_") {
		for _, m := range awsFile.FindAllStringSubmatch(s, -1) {
			if !noCredential(strings.Trim(m[2], ` "'`)) {
				found = append(found, "secret:aws-credentials-file")
			}
		}
	}
	return found
}

// fakeEmail reports whether the value of a client_email is an address on
// a reserved domain, as the rewrite's fakes are.
func fakeEmail(member, v string) bool {
	if member != "client_email" {
		return false
	}
	at := strings.LastIndexByte(v, '@')
	return at > 0 && reservedDomain(strings.ToLower(v[at+1:]))
}

// memberKey is an object key as the member rules compare it: its ASCII
// letters and digits, in lower case.
func memberKey(k string) string {
	var b [64]byte
	n := 0
	for i := 0; i < len(k) && n < len(b); i++ {
		if c := foldByte[k[i]]; 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b[n] = c
			n++
		}
	}
	return string(b[:n])
}

// phoneMember reports whether a key names a phone number.
func phoneMember(k string) bool {
	switch k {
	case "tel", "telephone", "cell", "cellular", "fax", "mobile", "whatsapp", "msisdn":
		return true
	}
	return strings.Contains(k, "phone") || strings.HasSuffix(k, "mobile") || strings.HasSuffix(k, "mobilenumber") ||
		strings.HasSuffix(k, "faxnumber") || strings.HasSuffix(k, "whatsapp") || strings.HasSuffix(k, "telnumber")
}

// phoneDigits returns the digits of a value written as a phone number is
// (digits, spaces, + - . ( ) /), or "" for another value.
func phoneDigits(v string) string {
	var b [32]byte
	n := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			if n == len(b) {
				return ""
			}
			b[n] = c
			n++
		case strings.IndexByte(" +-.()/", c) < 0:
			return ""
		}
	}
	return string(b[:n])
}

var gcpMembers = map[string]bool{"private_key_id": true, "private_key": true, "client_id": true, "client_email": true}

// memberHits looks at a string or number by the name of the member that
// holds it: a secret the name tells of ({"access_token": "..."}), a
// phone, an AWS key in JSON form, an Authorization header, a social
// security number, a date of birth, a passport number.
func (d *detectors) memberHits(name, text string, number bool, found []string) []string {
	m, ok := d.members[name]
	if !ok {
		m = member{key: memberKey(name), named: !d.idFields[name] && secrets.Default().Named(name)}
		if len(d.members) < 1<<14 {
			d.members[strings.Clone(name)] = m
		}
	}
	if m.named && !number {
		found = d.assignment(name, text, found)
	}
	k := m.key
	switch {
	case k == "":
	case phoneMember(k):
		if ds := phoneDigits(strings.TrimPrefix(text, "-")); len(ds) >= 7 && !d.fakePhone(text, ds) {
			found = append(found, "phone")
		}
	case number:
		if (k == "ssn" || strings.Contains(k, "socialsecurity")) && len(text) == 9 && !neverIssuedSSN(text[:3], text[3:5], text[5:]) {
			found = append(found, "ssn")
		}
	case k == "awsaccesskeyid" || k == "awssecretaccesskey" || k == "awssessiontoken":
		if !noCredential(text) {
			found = append(found, "secret:aws-credentials-file")
		}
	case k == "authorization" || k == "proxyauthorization":
		if cred, ok := schemeCredential(strings.TrimLeft(text, " \t")); ok && !noCredential(cred) {
			found = append(found, "secret:authorization-header")
		}
	case k == "ssn" || strings.HasSuffix(k, "ssn") || strings.Contains(k, "socialsecurity"):
		t := strings.TrimSpace(text)
		if ds := phoneDigits(t); len(ds) == 9 && (len(t) == 9 || len(t) == 11 && t[3] == '-' && t[6] == '-') && !neverIssuedSSN(ds[:3], ds[3:5], ds[5:]) {
			found = append(found, "ssn")
		}
	case d.issued == nil:
	case k == "dob" || k == "dateofbirth" || k == "birthdate" || k == "birthday" || k == "born" || k == "bornon":
		if loc := dateIn(text); loc != nil && !d.issued(kindBirthDate, text[loc[0]:loc[1]]) {
			found = append(found, "date_of_birth")
		}
	case strings.Contains(k, "passport"):
		if t := strings.TrimSpace(text); passportShaped(t, 1) && !d.issued(kindPassport, t) {
			found = append(found, "passport")
		}
	}
	return found
}

// member is what the member rules read in an object key.
type member struct {
	key   string // memberKey
	named bool   // a secret rule's keyword, and no id field
}

// assignment appends the secrets a key tells of in its value
// ({"access_token": "..."}), remembered for short values.
func (d *detectors) assignment(name, text string, found []string) []string {
	memo := len(name)+len(text) < 256
	var mk string
	if memo {
		mk = name + "\x00" + text
		if kinds, ok := d.assigned[mk]; ok {
			return append(found, kinds...)
		}
	}
	n := len(found)
	for _, m := range secrets.Default().Assignment(name, text) {
		if !notSecret(d.notSecrets, text, m.Start, m.End) {
			found = append(found, "secret:"+m.Rule)
		}
	}
	if memo {
		if len(d.assigned) >= 1<<16 {
			clear(d.assigned)
		}
		d.assigned[mk] = append([]string(nil), found[n:]...)
	}
	return found
}

// fakePhone reports whether a phone, found by its member's name, is a
// fake: one this Sanitizer wrote, or, without one (Check), a number
// libphonenumber calls invalid in every reading, the mark every fake
// phone carries.
func (d *detectors) fakePhone(text, digits string) bool {
	if d.issued != nil {
		return d.issued(KindPhone, text)
	}
	return !phoneValid(strings.TrimSpace(text)) && !phoneValid("+"+digits) && !phoneValid(digits)
}

// neverIssuedSSN reports whether a social security number is one the SSA
// never issues: area 000, 666 or 9xx, group 00, serial 0000. The
// rewrite's fakes are in the 9xx area.
func neverIssuedSSN(area, group, serial string) bool {
	return area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000"
}

// contextHits finds social security numbers (ddd-dd-dddd near "SSN" or
// "social security"), and, in a Sanitizer's own check, dates of birth
// (a date after "DOB", "date of birth", "born", "birthday") and passport
// numbers (six to nine capitals and digits, five digits or more, after
// "passport").
func (d *detectors) contextHits(s, lower string, digits int, found []string) []string {
	if digits >= 9 && strings.IndexByte(s, '-') >= 0 && (strings.Contains(lower, "ssn") || strings.Contains(lower, "social")) {
		for i := 0; i+11 <= len(s); i++ {
			if !ssnAt(s, i) {
				continue
			}
			lo, hi := max(0, i-50), min(len(s), i+31)
			if near := lower[lo:hi]; (wordIn(near, "ssn") || strings.Contains(near, "social security") || strings.Contains(near, "social-security")) &&
				!neverIssuedSSN(s[i:i+3], s[i+4:i+6], s[i+7:i+11]) {
				found = append(found, "ssn")
			}
			i += 10
		}
	}
	if d.issued == nil || digits < 4 {
		return found
	}
	if strings.Contains(lower, "birth") || strings.Contains(lower, "born") || strings.Contains(lower, "dob") || strings.Contains(lower, "d.o.b") {
		for _, w := range []string{"dob", "d.o.b", "date of birth", "birth date", "birthdate", "birthday", "born"} {
			for from := 0; ; {
				at := strings.Index(lower[from:], w)
				if at < 0 {
					break
				}
				at += from
				from = at + len(w)
				if at > 0 && isAlnumASCII(lower[at-1]) || from < len(lower) && isLetterASCII(lower[from]) {
					continue
				}
				win := s[from:min(len(s), from+40)]
				if loc := dateIn(win); loc != nil && !d.issued(kindBirthDate, win[loc[0]:loc[1]]) {
					found = append(found, "date_of_birth")
				}
			}
		}
	}
	if digits >= 5 {
		for from := 0; ; {
			at := strings.Index(lower[from:], "passport")
			if at < 0 {
				break
			}
			from = at + from + len("passport")
			win := s[from:min(len(s), from+40)]
			for _, tok := range words(win, func(c byte) bool { return isUpperASCII(c) || isDigitASCII(c) }, isAlnumASCII) {
				if passportShaped(tok, 5) && !d.issued(kindPassport, tok) {
					found = append(found, "passport")
				}
			}
		}
	}
	return found
}

func asciiLowerString(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// wordIn reports whether w stands in s as a word of ASCII letters.
func wordIn(s, w string) bool {
	for from := 0; ; {
		at := strings.Index(s[from:], w)
		if at < 0 {
			return false
		}
		at += from
		from = at + 1
		if (at == 0 || !isLetterASCII(s[at-1])) && (at+len(w) == len(s) || !isLetterASCII(s[at+len(w)])) {
			return true
		}
	}
}

// ssnAt reports whether ddd-dd-dddd stands at s[i:], not inside a longer
// run of digits and dashes.
func ssnAt(s string, i int) bool {
	for j, c := range []byte("ddd-dd-dddd") {
		if c == 'd' && !isDigitASCII(s[i+j]) || c == '-' && s[i+j] != '-' {
			return false
		}
	}
	edge := func(c byte) bool { return isAlnumASCII(c) || c == '-' }
	return (i == 0 || !edge(s[i-1])) && (i+11 == len(s) || !edge(s[i+11]))
}

// passportShaped reports whether tok is six to nine capitals and digits
// with at least minDigits digits.
func passportShaped(tok string, minDigits int) bool {
	if len(tok) < 6 || len(tok) > 9 {
		return false
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case isDigitASCII(c):
			n++
		case !isUpperASCII(c):
			return false
		}
	}
	return n >= minDigits
}

var (
	dateNumeric = regexp.MustCompile(`\b(?:(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})|(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2}))\b`)
	dateWords   = regexp.MustCompile(`(?i)\b(?:(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+([a-z]{3,9})\.?,?\s+(\d{4})|([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}))\b`)
	monthsOf    = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
)

// dateIn returns the span of the first date in s that is a day of the
// calendar: year-month-day, day and month (either order) and a year, or
// a day and a month's name (or its first three letters) and a year.
func dateIn(s string) []int {
	var best []int
	for _, m := range dateNumeric.FindAllStringSubmatchIndex(s, -1) {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		ok := false
		if g(1) != "" {
			ok = calendarDay(atoi(g(1)), atoi(g(2)), atoi(g(3)))
		} else {
			y := atoi(g(6))
			if len(g(6)) == 2 {
				y += 1900
			}
			ok = calendarDay(y, atoi(g(5)), atoi(g(4))) || calendarDay(y, atoi(g(4)), atoi(g(5)))
		}
		if ok {
			best = m[:2]
			break
		}
	}
	for _, m := range dateWords.FindAllStringSubmatchIndex(s, -1) {
		if best != nil && m[0] >= best[0] {
			break
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		day, month, year := g(1), g(2), g(3)
		if day == "" {
			day, month, year = g(5), g(4), g(6)
		}
		if mo := monthNumber(month); mo > 0 && calendarDay(atoi(year), mo, atoi(day)) {
			best = m[:2]
			break
		}
	}
	return best
}

func monthNumber(w string) int {
	w = strings.ToLower(w)
	for i, m := range monthsOf {
		if w == m || len(w) == 3 && strings.HasPrefix(m, w) || w == "sept" {
			if w == "sept" {
				return 9
			}
			return i + 1
		}
	}
	return 0
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s) && n < 1e6; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// calendarDay reports whether year, month and day name a day from 1900
// to 2100.
func calendarDay(year, month, day int) bool {
	if year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}

// objectFrame is what the leak check keeps of an object while it is
// walked: whether it is a GCP service account's key, and the members
// that would leak if it is.
type objectFrame struct {
	serviceAccount bool
	pending        [][]string // paths of members holding credentials
}

// gcpMemberLeaks reports whether a member of a service account's key
// holds a credential: anything but a placeholder, or a fake email.
func gcpMemberLeaks(name, text string) bool {
	return gcpMembers[name] && !noCredential(text) && !fakeEmail(name, text) && utf8.ValidString(text)
}

// The kinds of the rewrite's fakes of dates of birth and passport
// numbers, whose fakes the leak check tells by the Sanitizer's record.
const (
	kindBirthDate Kind = "date_of_birth"
	kindPassport  Kind = "passport"
)
