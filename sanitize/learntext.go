package sanitize

import (
	"regexp"
	"strings"
)

// learnText learns from every string of a document, decoded at every
// depth and in its entity-decoded and base64-decoded forms: the labels of
// Slack markup, every email address and the name its local part spells,
// the names the name detector finds, and the values that only their
// context tells (a password after curl -u, an AWS secret key on the line
// after its key id, a date of birth after "DOB", a phone under a member
// named phone). Each is then an original like those of known fields:
// replaced wherever it stands, in every file of the run, and hunted by
// the leak check.
func (s *Sanitizer) learnText(src string) {
	w := &walker{leaf: func(w *walker, text string, number, isKey bool) []edit {
		key := ""
		if last := len(w.path) - 1; last >= 0 && w.path[last].index < 0 && !w.path[last].nested {
			key = w.path[last].key
		}
		if number {
			if phoneMember(key) {
				s.learnMemberPhone(text)
			}
			return nil
		}
		if isKey {
			return nil
		}
		// Learning from a text twice learns nothing new: texts repeat
		// within a conversation and across its files.
		if len(text) <= memoMaxText {
			mt := memberText{key, text}
			if _, ok := s.seen[mt]; ok {
				return nil
			}
			if s.seenBytes += len(key) + len(text); s.seenBytes > memoMaxBytes {
				clear(s.seen)
				s.seenBytes = len(key) + len(text)
			}
			s.seen[memberText{strings.Clone(key), strings.Clone(text)}] = struct{}{}
		}
		s.learnFrom(text, key, 0)
		return nil
	}}
	w.doc(src) // a document that is not JSON is refused by the rewrite
}

// memberText is a string and the object key it is the value of.
type memberText struct{ key, text string }

// learnFrom learns from one decoded string, and from what it decodes to.
func (s *Sanitizer) learnFrom(text, key string, depth int) {
	s.learnIn(text, key)
	if v, ok := entityView(text); ok {
		s.learnIn(v.text, key)
	}
	if v, ok := percentView(text); ok {
		s.learnIn(v.text, key)
	}
	if depth < 2 {
		for _, t := range base64Tokens(text) {
			s.learnFrom(t.text, "", depth+1)
		}
	}
}

func (s *Sanitizer) learnIn(text, key string) {
	if strings.IndexByte(text, '|') >= 0 {
		s.learnLabelsIn(text)
	}
	if strings.IndexByte(text, '@') >= 0 {
		for _, e := range findEmails(text) {
			if addr := text[e[0]:e[1]]; !reservedEmail(addr) {
				s.learnEmail(addr)
			}
		}
	}
	if s.detectNames {
		detectNames(text, s.notNames, func(name string) {
			s.learnName(name, true)
			s.report.detectedName(s.fk.digest(KindName, name))
		})
	}
	if key != "" {
		s.learnMember(key, text)
	}
	s.learnContext(text)
}

// learnEmail learns an address found in text and the name or surname its
// local part spells.
func (s *Sanitizer) learnEmail(addr string) {
	s.dict.add(KindEmail, strings.ToLower(addr))
	local := addr[:strings.LastIndexByte(addr, '@')]
	if strings.ContainsAny(local, "._-") {
		s.dict.add(KindHandle, strings.ToLower(local))
	}
	name, last := emailName(local)
	switch {
	case name != "":
		s.learnName(name, true)
		s.report.detectedName(s.fk.digest(KindName, name))
	case last != "":
		s.dict.add(KindLastName, last)
	}
}

// phoneMember reports whether an object key names a phone number, in
// any letter case, with or without _ - or spaces.
func phoneMember(key string) bool {
	if len(key) < 3 || len(key) > 24 {
		return false
	}
	var buf [24]byte
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return phoneKeys[string(buf[:n])]
}

var phoneKeys = map[string]bool{
	"phone": true, "phones": true, "mobile": true, "mobilephone": true, "tel": true, "telephone": true, "cell": true,
	"cellphone": true, "fax": true, "whatsapp": true, "phonenumber": true, "mobilenumber": true, "telephonenumber": true,
	"workphone": true, "homephone": true, "sms": true, "msisdn": true,
}

// learnMemberPhone learns the digits of a value under a member named like
// a phone: the name says what it is, whatever libphonenumber thinks of
// the digits.
func (s *Sanitizer) learnMemberPhone(text string) {
	for _, m := range phoneRunRe.FindAllString(text, -1) {
		if countDigits(m) >= 7 {
			// With its +, the fake keeps the country code.
			s.dict.add(KindPhone, m)
		}
	}
}

var phoneRunRe = regexp.MustCompile(`\+?\d[\d ().\-]{5,}\d`)

// credentialMembers are the members of credential documents (a GCP
// service account's JSON, OAuth client files) that identify their owner
// or are the credential.
var credentialMembers = map[string]bool{
	"private_key_id": true, "client_id": true, "client_secret": true, "project_id": true,
	"aws_access_key_id": true, "aws_secret_access_key": true, "aws_session_token": true,
	"access_key_id": true, "secret_access_key": true, "session_token": true,
}

// learnMember learns a value its member's name tells of.
func (s *Sanitizer) learnMember(key, text string) {
	switch {
	case phoneMember(key):
		s.learnMemberPhone(text)
	case credentialMembers[strings.ToLower(key)]:
		if v := strings.TrimSpace(text); (credentialShaped(v) || len(v) >= 10 && countDigits(v) == len(v)) && !strings.ContainsAny(v, " \n") {
			s.dict.add(KindSecret, v)
		}
	}
}

var (
	// awsKeyIDRe is an AWS access key id; awsSecretRe a secret access
	// key, which learnContext looks for on the lines after one.
	awsKeyIDRe  = regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)
	awsSecretRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`)
	// iniCredRe are credentials in an INI file (~/.aws/credentials) or
	// an environment file.
	iniCredRe = regexp.MustCompile(`(?im)^[ \t]*(?:export[ \t]+)?(?:aws_access_key_id|aws_secret_access_key|aws_session_token|[a-z_]*password|[a-z_]*secret|[a-z_]*token)[ \t]*[=:][ \t]*["']?([^\s"']{6,})`)
	// userArgRe is a user and password given to curl, wget and the like:
	// -u user:pass, --user user:pass, --proxy-user; passArgRe is
	// --password and --pass with a value, quoted or not.
	userArgRe = regexp.MustCompile(`(?:^|\s)(?:-u|--user|--proxy-user|-U)(?:\s+|=)(["']?)([^\s"':]*):([^\s"']+)`)
	passArgRe = regexp.MustCompile(`(?:^|\s)(?:--password|--passwd|--pass|--http-password|--proxy-password)(?:\s+|=)(?:'([^'\n]+)'|"([^"\n]+)"|([^\s"']+))`)
	// shortPassRe is -p with a password where the command takes one so:
	// sshpass, docker/podman/helm login, and mysql after its -u.
	shortPassRe = regexp.MustCompile(`(?:\bsshpass|\blogin|\bmysql\w*|\s-u\s*\S+)(?:\s+-{1,2}[a-zA-Z][\w-]*(?:[ =][^\s-]\S*)?)*?\s+-p(?:\s+|=)?(?:'([^'\n]+)'|"([^"\n]+)"|([^\s"']{3,}))`)
	// authLineRe is an Authorization header written out (curl -H, a pasted
	// request): the credential after its scheme.
	authLineRe = regexp.MustCompile(`(?i)\b(?:proxy-)?authorization\s*:\s*(?:bearer|basic|token|bot|digest|apikey|api-key|sso-key)\s+([^\s"',]{6,})`)
	// ssnRe is a US social security number near its name; dobRe a date
	// near words of birth; passportRe a passport number near its name.
	ssnRe      = regexp.MustCompile(`(?i)\b(?:ssn|social security(?: number| no\.?)?|sozialversicherungsnummer)\b[^0-9\n]{0,20}(\d{3}[- ]?\d{2}[- ]?\d{4})\b`)
	dobRe      = regexp.MustCompile(`(?i)\b(?:dob|d\.o\.b\.?|date of birth|birth ?date|birthday|born(?: on)?|geboren(?: am)?|né(?:e)? le)\b[^0-9A-Za-z\n]{0,10}((?:\d{4}-\d{1,2}-\d{1,2})|(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4})|(?:\d{1,2}(?:st|nd|rd|th)? (?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?,? \d{4})|(?:(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}))`)
	passportRe = regexp.MustCompile(`(?i)\bpassport(?:\s*(?:no\.?|number|num|#|nr\.?))?\s*[:#]?\s*([A-Z0-9]{6,9})\b`)
)

// learnContext learns the values that the words around them tell of.
func (s *Sanitizer) learnContext(text string) {
	if len(text) < 8 {
		return
	}
	add := func(k Kind, re *regexp.Regexp, group int) {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if m[2*group] < 0 {
				continue
			}
			v := text[m[2*group]:m[2*group+1]]
			switch {
			case k == KindSecret && !credentialShaped(v):
			case k == KindPassport && countDigits(v) == 0:
			default:
				s.dict.add(k, v)
			}
		}
	}
	if strings.Contains(text, "AKIA") || strings.Contains(text, "ASIA") {
		for _, m := range awsKeyIDRe.FindAllStringIndex(text, -1) {
			// The secret key stands within three lines after its id.
			rest := text[m[1]:]
			for n, i := 0, 0; n < 4 && i < len(rest); n++ {
				j := strings.IndexByte(rest[i:], '\n')
				if j < 0 {
					j = len(rest) - i
				}
				for _, sm := range awsSecretRe.FindAllStringSubmatchIndex(rest[i:i+j], -1) {
					if v := rest[i+sm[2] : i+sm[3]]; hasMixedClasses(v) {
						s.dict.add(KindSecret, v)
					}
				}
				i += j + 1
			}
		}
	}
	has := func(word string) bool { return indexFold(text, word) >= 0 }
	if strings.ContainsAny(text, "=:") && (has("aws_") || has("password") || has("secret") || has("token")) {
		add(KindSecret, iniCredRe, 1)
	}
	if strings.Contains(text, "-u") || strings.Contains(text, "--user") || strings.Contains(text, "-U") || strings.Contains(text, "--proxy-user") {
		add(KindSecret, userArgRe, 3)
	}
	if strings.Contains(text, "--pass") || strings.Contains(text, "--http-pass") || strings.Contains(text, "--proxy-pass") || strings.Contains(text, "-u") {
		for g := 1; g <= 3; g++ {
			add(KindSecret, passArgRe, g)
		}
	}
	if strings.Contains(text, " -p") {
		for g := 1; g <= 3; g++ {
			add(KindSecret, shortPassRe, g)
		}
	}
	if has("authorization") {
		add(KindSecret, authLineRe, 1)
	}
	if has("ssn") || has("social security") || has("sozialversicherung") {
		add(KindSSN, ssnRe, 1)
	}
	if has("dob") || has("d.o.b") || has("birth") || has("born") || has("geboren") || strings.Contains(text, "né") {
		add(KindBirthDate, dobRe, 1)
	}
	if has("passport") {
		add(KindPassport, passportRe, 1)
	}
}

// hasMixedClasses reports whether a 40-character token mixes upper and
// lower case and digits, as AWS secret keys do and words and hashes do
// not.
func hasMixedClasses(v string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		upper = upper || isUpper(c)
		lower = lower || 'a' <= c && c <= 'z'
		digit = digit || isDigit(c)
	}
	return upper && lower && digit
}

// credentialShaped reports whether a value a context names as a password
// or key looks like one: six characters or more of at least two classes
// (lower case, upper case, digits, others), and no word of prose ("with",
// "and" after -u in a sentence).
func credentialShaped(v string) bool {
	if len(v) < 6 {
		return false
	}
	var lower, upper, digit, other int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = 1
		case isUpper(c):
			upper = 1
		case isDigit(c):
			digit = 1
		default:
			other = 1
		}
	}
	return lower+upper+digit+other >= 2 && !englishWord(strings.ToLower(strings.Trim(v, ".,;:!?'\"()")))
}
