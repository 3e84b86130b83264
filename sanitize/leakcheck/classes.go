package leakcheck

import (
	"regexp"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/sanitize/words"
)

// The leak classes that a token's shape does not tell: secrets told by
// the lines or the command around them, credential documents by their
// members, phones by the name of their member, and national ids and dates
// of birth by the words beside them. The rules are the leak check's own
// code, each narrower than what the rewrite replaces (learn.go's
// learnContext and learnMember), so that what the rewrite leaves is a
// leak and not a difference of taste: a value is a credential when it
// looks like one (six characters or more of two classes of lower case,
// upper case, digits and others, and no English word), and stands where
// the rule says, as the rewrite reads it.

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

// credential reports whether a value written where a credential goes is
// one: not the rewrite's placeholder, nor a variable or a template that
// stands for one ($TOKEN, ${TOKEN}, $(cmd), %TOKEN%, <token>,
// {{token}}), and shaped like a credential: six characters or more, of
// two classes or more (lower case, upper case, digits, others), and no
// English word ("--password and" in a sentence).
func credential(v string) bool {
	switch {
	case len(v) < 6, placeholder.MatchString(v), v[0] == '$', strings.HasPrefix(v, "{{"),
		v[0] == '<' && v[len(v)-1] == '>', v[0] == '%' && v[len(v)-1] == '%':
		return false
	}
	var lower, upper, digit, other int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = 1
		case 'A' <= c && c <= 'Z':
			upper = 1
		case '0' <= c && c <= '9':
			digit = 1
		default:
			other = 1
		}
	}
	if lower+upper+digit+other < 2 {
		return false
	}
	word := words.English().Has(strings.ToLower(strings.Trim(v, ".,;:!?'\"()")))
	return !word
}

// awsKeyIDAt reports whether an AWS access key id (AKIA or ASIA and 16
// capitals or digits) stands at s[i:], and where it ends.
func awsKeyIDAt(s string, i int) (int, bool) {
	if i+20 > len(s) || !(strings.HasPrefix(s[i:], "AKIA") || strings.HasPrefix(s[i:], "ASIA")) || i > 0 && isWordByte(s[i-1]) {
		return 0, false
	}
	for j := i + 4; j < i+20; j++ {
		if !isUpperASCII(s[j]) && !isDigitASCII(s[j]) {
			return 0, false
		}
	}
	if i+20 < len(s) && isWordByte(s[i+20]) {
		return 0, false
	}
	return i + 20, true
}

func isWordByte(c byte) bool { return isAlnumASCII(c) || c == '_' }

func isSecretKeyByte(c byte) bool { return isAlnumASCII(c) || c == '/' || c == '+' }

// awsSecretHits finds an AWS secret access key (40 characters of
// A-Za-z0-9/+ with capitals, lower case and digits) on the rest of the
// line of an access key id or on the three lines after it: a key pair
// pasted as two lines, whatever names them. The key id counts when the
// rewrite replaced it ([redacted aws...]).
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
			lower, upper, digit := false, false, false
			for k < len(s) && isSecretKeyByte(s[k]) {
				switch c := s[k]; {
				case 'a' <= c && c <= 'z':
					lower = true
				case 'A' <= c && c <= 'Z':
					upper = true
				case '0' <= c && c <= '9':
					digit = true
				}
				k++
			}
			if k-j == 40 && lower && upper && digit && (j == 0 || s[j-1] != '=') && (k == len(s) || s[k] != '=') {
				found = append(found, "secret:aws-secret-access-key")
			}
			j = k
		}
		i = end - 1
	}
	return found
}

// argValue reads a command-line argument's value at s[i:]: with an
// opening quote or not, up to white space or a quote, with the rewrite's
// placeholders in it whole.
func argValue(s string, i int) string {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	j := i
	for j < len(s) && !isSpaceOrQuote(s[j]) {
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

func isSpaceOrQuote(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '"' || c == '\''
}

// commandLines calls fn with each line of s.
func commandLines(s string, fn func(line string)) {
	for len(s) > 0 {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			fn(s)
			return
		}
		fn(s[:nl])
		s = s[nl+1:]
	}
}

// arg is a command-line token: its text and where it starts.
type arg struct {
	text  string
	start int
}

// args splits a line at white space.
func args(line string) []arg {
	var out []arg
	for i := 0; i < len(line); {
		if isSpaceOrQuote(line[i]) && line[i] != '"' && line[i] != '\'' {
			i++
			continue
		}
		j := i
		for j < len(line) && !(line[j] == ' ' || line[j] == '\t' || line[j] == '\r' || line[j] == '\v' || line[j] == '\f') {
			j++
		}
		out = append(out, arg{line[i:j], i})
		i = j
	}
	return out
}

// flagValue reads the value of a flag whose token is a: after =, or in
// the next token.
func flagValue(line string, a []arg, i int, flag string) (string, bool) {
	rest := a[i].text[len(flag):]
	switch {
	case strings.HasPrefix(rest, "="):
		return argValue(line, a[i].start+len(flag)+1), true
	case rest == "" && i+1 < len(a):
		return argValue(line, a[i+1].start), true
	}
	return "", false
}

// passwordPrograms are the programs whose -p takes a password, and
// mysql's family.
var passwordPrograms = regexp.MustCompile(`^(?:sshpass|login|mysql\w*)$`)

// commandHits finds credentials written as command arguments: the
// password of curl's -u/--user USER:PASSWORD, the value of --password,
// the value of -p after sshpass, login (docker, podman, helm) or mysql,
// or after a -u USER, with only flags between, and the credential of an
// Authorization header (Authorization: SCHEME CREDENTIAL), in pasted
// shell or any text.
func commandHits(s, lower string, found []string) []string {
	if strings.Contains(s, "curl") || strings.Contains(s, "--password") || strings.Contains(s, " -p") || strings.Contains(s, "\t-p") {
		commandLines(s, func(line string) {
			a := args(line)
			curl := slicesIndexFunc(a, func(x arg) bool { return x.text == "curl" || strings.HasSuffix(x.text, "/curl") }) >= 0
			for i, x := range a {
				switch {
				case curl && (x.text == "-u" || strings.HasPrefix(x.text, "--user") && (x.text == "--user" || x.text[6] == '=')):
					flag := x.text
					if strings.HasPrefix(flag, "--user") {
						flag = "--user"
					}
					if v, ok := flagValue(line, a, i, flag); ok {
						if _, pass, ok := strings.Cut(v, ":"); ok && credential(pass) {
							found = append(found, "secret:curl-user-password")
						}
					}
				case x.text == "--password" || strings.HasPrefix(x.text, "--password="):
					if v, ok := flagValue(line, a, i, "--password"); ok && credential(v) {
						found = append(found, "secret:password-argument")
					}
				case strings.HasPrefix(x.text, "-p") && passwordFlag(a, i):
					v := ""
					switch rest := x.text[2:]; {
					case rest == "" && i+1 < len(a):
						v = argValue(line, a[i+1].start)
					case strings.HasPrefix(rest, "="):
						v = argValue(line, x.start+3)
					default:
						v = argValue(line, x.start+2)
					}
					if credential(v) {
						found = append(found, "secret:password-argument")
					}
				}
			}
		})
	}
	return authorizationHits(s, lower, found)
}

// passwordFlag reports whether the -p of token i follows a program whose
// -p is a password, or -u USER, with only flags (and their values)
// between.
func passwordFlag(a []arg, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch t := a[j].text; {
		case passwordPrograms.MatchString(t):
			return true
		case t == "-u" && j+1 < i, strings.HasPrefix(t, "-u") && len(t) > 2:
			return true
		case flagToken(t):
		case j > 0 && flagToken(a[j-1].text) && !strings.HasPrefix(t, "-"):
			// A flag's value.
		default:
			return false
		}
	}
	return false
}

// flagToken reports whether t is a flag: - or -- and a letter.
func flagToken(t string) bool {
	if !strings.HasPrefix(t, "-") {
		return false
	}
	t = strings.TrimPrefix(t[1:], "-")
	return t != "" && isLetterASCII(t[0])
}

func slicesIndexFunc(a []arg, f func(arg) bool) int {
	for i, x := range a {
		if f(x) {
			return i
		}
	}
	return -1
}

// authSchemes are the schemes of Authorization headers whose credential
// the leak check reads.
var authSchemes = []string{"bearer", "basic", "token", "bot", "digest", "apikey", "api-key", "sso-key"}

// authorizationHits finds Authorization headers written as text
// (Authorization: Bearer TOKEN), and those of a proxy.
func authorizationHits(s, lower string, found []string) []string {
	for from := 0; ; {
		at := strings.Index(lower[from:], "authorization")
		if at < 0 {
			return found
		}
		at += from
		from = at + len("authorization")
		if at > 0 && isWordByte(lower[at-1]) {
			continue
		}
		i := from
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != ':' {
			continue
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		for _, scheme := range authSchemes {
			end := i + len(scheme)
			if end >= len(s) || lower[i:end] != scheme || s[end] != ' ' && s[end] != '\t' {
				continue
			}
			for end < len(s) && (s[end] == ' ' || s[end] == '\t') {
				end++
			}
			cred := argValue(s, end)
			if c := strings.IndexByte(cred, ','); c >= 0 && !placeholder.MatchString(cred) {
				cred = cred[:c]
			}
			if credential(cred) {
				found = append(found, "secret:authorization-header")
			}
		}
	}
}

var (
	gcpMember = regexp.MustCompile(`"(private_key_id|client_id)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	awsFile   = regexp.MustCompile(`(?im)^[ \t]*(?:export[ \t]+)?(aws_access_key_id|aws_secret_access_key|aws_session_token)[ \t]*[=:][ \t]*`)
)

// credentialTextHits finds credential documents written as text: a GCP
// service account's JSON (its key id and client id), and an AWS
// credentials or config file (or environment) with its key id, secret
// key or session token.
func credentialTextHits(s, lower string, found []string) []string {
	if strings.Contains(s, "service_account") {
		for _, m := range gcpMember.FindAllStringSubmatch(s, -1) {
			if gcpMemberLeaks(m[1], m[2]) {
				found = append(found, "secret:gcp-service-account")
			}
		}
	}
	if strings.Contains(lower, "aws_") {
		for _, m := range awsFile.FindAllStringIndex(s, -1) {
			if credential(argValue(s, m[1])) {
				found = append(found, "secret:aws-credentials-file")
			}
		}
	}
	return found
}

// gcpMemberLeaks reports whether a member of a GCP service account's key
// holds a credential: its key id or its client id, shaped like one or
// ten digits and more.
func gcpMemberLeaks(name, v string) bool {
	if name != "private_key_id" && name != "client_id" {
		return false
	}
	v = strings.TrimSpace(v)
	if strings.ContainsAny(v, " \n") {
		return false
	}
	return credential(v) || len(v) >= 10 && strings.Trim(v, "0123456789") == ""
}

// phoneNames are the object keys that name a phone number, in lower case
// without _ - or spaces.
var phoneNames = map[string]bool{
	"phone": true, "phones": true, "mobile": true, "mobilephone": true, "tel": true, "telephone": true, "cell": true,
	"cellphone": true, "fax": true, "whatsapp": true, "phonenumber": true, "mobilenumber": true, "telephonenumber": true,
	"workphone": true, "homephone": true, "msisdn": true,
}

// phoneKey reports whether an object key names a phone number, in any
// letter case, with or without _ - or spaces.
func phoneKey(k string) bool {
	if len(k) < 3 || len(k) > 24 {
		return false
	}
	var b [24]byte
	n := 0
	for i := 0; i < len(k); i++ {
		if c := k[i]; c != '_' && c != '-' && c != ' ' {
			b[n] = foldByte[c]
			n++
		}
	}
	return phoneNames[string(b[:n])]
}

// phoneDigits returns the digits of a value written as a phone number is
// (digits, spaces, + - . ( )), or "" for another value.
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
		case strings.IndexByte(" +-.()", c) < 0:
			return ""
		}
	}
	return string(b[:n])
}

// member is what the member rules read in an object key.
type member struct {
	phone bool // a phone's name
	aws   bool // an AWS credential's name
	named bool // a secret rule's keyword, and no id field
}

// memberHits looks at a string or number by the name of the member that
// holds it: a secret the name tells of ({"access_token": "..."}), a phone
// (seven digits or more), and an AWS key in JSON form.
func (d *detectors) memberHits(name, text string, number bool, found []string) []string {
	m, ok := d.members[name]
	if !ok {
		lk := strings.ToLower(name)
		m = member{phone: phoneKey(name), aws: lk == "aws_access_key_id" || lk == "aws_secret_access_key" || lk == "aws_session_token",
			named: !d.idFields[name] && secrets.Default().Named(name)}
		if len(d.members) < 1<<14 {
			d.members[strings.Clone(name)] = m
		}
	}
	if m.named && !number {
		found = d.assignment(name, text, found)
	}
	switch {
	case m.phone:
		if ds := phoneDigits(strings.TrimPrefix(text, "-")); len(ds) >= 7 && !d.fakePhone(text, ds) {
			found = append(found, "phone")
		}
	case m.aws && !number:
		if v := strings.TrimSpace(text); !strings.ContainsAny(v, " \n") && credential(v) {
			found = append(found, "secret:aws-credentials-file")
		}
	}
	return found
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
		return d.issued(kindPhone, text)
	}
	return !phoneValid(strings.TrimSpace(text)) && !phoneValid("+"+digits) && !phoneValid(digits)
}

// neverIssuedSSN reports whether a social security number is one the SSA
// never issues: area 000, 666 or 9xx, group 00, serial 0000. The
// rewrite's fakes are in the 9xx area.
func neverIssuedSSN(area, group, serial string) bool {
	return area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000"
}

// contextHits finds social security numbers (ddd-dd-dddd at most 20
// characters, none a digit, after "SSN" or "social security"), and, in a
// Sanitizer's own check, dates of birth (a day of the calendar at most
// ten characters, none a letter or digit, after "DOB", "date of birth",
// "birth date", "birthday" or "born (on)") and passport numbers (six to
// nine capitals and digits, five digits or more, right after "passport"
// and "no", "number", "#" or a colon).
func (d *detectors) contextHits(s, lower string, digits int, found []string) []string {
	if digits >= 9 && strings.IndexByte(s, '-') >= 0 && (strings.Contains(lower, "ssn") || strings.Contains(lower, "social")) {
		for i := 0; i+11 <= len(s); i++ {
			if !ssnAt(s, i) {
				continue
			}
			if ssnContext(lower[max(0, i-40):i]) && !neverIssuedSSN(s[i:i+3], s[i+4:i+6], s[i+7:i+11]) {
				found = append(found, "ssn")
			}
			i += 10
		}
	}
	if d.issued == nil || digits < 4 {
		return found
	}
	if strings.Contains(lower, "birth") || strings.Contains(lower, "born") || strings.Contains(lower, "dob") || strings.Contains(lower, "d.o.b") {
		for _, w := range []string{"dob", "d.o.b", "date of birth", "birth date", "birthdate", "birthday", "born on", "born"} {
			for from := 0; ; {
				at := strings.Index(lower[from:], w)
				if at < 0 {
					break
				}
				at += from
				from = at + len(w)
				if at > 0 && isWordByte(lower[at-1]) || from < len(lower) && isWordByte(lower[from]) && w != "d.o.b" {
					continue
				}
				i := from
				for i < len(s) && i-from <= 10 && !isAlnumASCII(s[i]) && s[i] != '\n' {
					i++
				}
				if loc := dateIn(s[i:]); loc != nil && loc[0] == 0 && !d.issued(kindBirthDate, s[i:i+loc[1]]) {
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
			if at > 0 && isWordByte(lower[at-1]) {
				continue
			}
			i := skipSpaces(s, from)
			for _, des := range []string{"number", "num", "no.", "no", "nr.", "nr", "#"} {
				if strings.HasPrefix(lower[i:], des) {
					i = skipSpaces(s, i+len(des))
					break
				}
			}
			if i < len(s) && (s[i] == ':' || s[i] == '#') {
				i = skipSpaces(s, i+1)
			}
			j := i
			for j < len(s) && (isUpperASCII(s[j]) || isDigitASCII(s[j])) {
				j++
			}
			if (j == len(s) || !isWordByte(s[j])) && passportShaped(s[i:j], 5) && !d.issued(kindPassport, s[i:j]) {
				found = append(found, "passport")
			}
		}
	}
	return found
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// ssnContext reports whether the text before a social security number
// ends in its name and at most 20 characters that are no digit and no
// line break.
func ssnContext(before string) bool {
	for _, w := range []string{"ssn", "social security"} {
		at := strings.LastIndex(before, w)
		if at < 0 || at > 0 && isWordByte(before[at-1]) {
			continue
		}
		end := at + len(w)
		if end < len(before) && isWordByte(before[end]) && !strings.HasPrefix(before[end:], " ") {
			continue
		}
		gap := before[end:]
		for _, des := range []string{" number", " no."} {
			gap = strings.TrimPrefix(gap, des)
		}
		if len(gap) <= 20 && strings.IndexFunc(gap, func(r rune) bool { return r == '\n' || '0' <= r && r <= '9' }) < 0 {
			return true
		}
	}
	return false
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
	// dateOfBirth are the layouts of a date of birth: year-month-day, day
	// and month (either order) and a year, a day, a month's name (or its
	// first three letters) and a year, or a month's name, a day and a
	// year.
	dateOfBirth = regexp.MustCompile(`(?i)^(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})|(\d{1,2})(?:st|nd|rd|th)? ([a-z]{3,9})\.?,? (\d{4})|([a-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}))\b`)
	monthsOf    = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
)

// dateIn returns the span of a date at the start of s that is a day of
// the calendar, or nil.
func dateIn(s string) []int {
	m := dateOfBirth.FindStringSubmatchIndex(s)
	if m == nil {
		return nil
	}
	g := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return s[m[2*i]:m[2*i+1]]
	}
	ok := false
	switch {
	case g(1) != "":
		ok = calendarDay(atoi(g(1)), atoi(g(2)), atoi(g(3)))
	case g(4) != "":
		y := atoi(g(6))
		if len(g(6)) == 2 {
			y += 1900
		}
		ok = calendarDay(y, atoi(g(5)), atoi(g(4))) || calendarDay(y, atoi(g(4)), atoi(g(5)))
	case g(7) != "":
		ok = calendarDay(atoi(g(9)), monthNumber(g(8)), atoi(g(7)))
	default:
		ok = calendarDay(atoi(g(12)), monthNumber(g(10)), atoi(g(11)))
	}
	if !ok {
		return nil
	}
	return m[:2]
}

func monthNumber(w string) int {
	w = strings.ToLower(w)
	if w == "sept" {
		return 9
	}
	for i, m := range monthsOf {
		if w == m || len(w) == 3 && strings.HasPrefix(m, w) {
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
