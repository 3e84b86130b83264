package sanitize

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/sanitize/fakemark"
	"github.com/brianvoe/gofakeit/v7"
	"github.com/nyaruka/phonenumbers"
)

// Kind is what a personal value is; it picks the fake's shape and keeps
// namespaces apart, so one string in two roles maps independently.
type Kind string

// The kinds of values the sanitizer replaces.
const (
	KindSlackID     Kind = "slack_id"     // U/W users, T teams, E enterprises, C/G/D channels, B bots, F files, A apps, S groups
	KindEmail       Kind = "email"        // becomes first.last@example.com
	KindName        Kind = "person_name"  // a full name; each part maps on its own
	KindFirstName   Kind = "first_name"   // a part of a name from an identity row
	KindLastName    Kind = "last_name"    // likewise
	KindHandle      Kind = "handle"       // a Slack username such as ada.quill
	KindIdentityID  Kind = "identity_id"  // junior_identities and junior_users ids (UUIDs)
	KindDashboardID Kind = "dashboard_id" // dashboard:<hex>
	KindHexID       Kind = "hex_id"       // the hash in local:web:<hex> conversation ids
	KindWorkspace   Kind = "workspace"    // <workspace>.slack.com
	KindChannelName Kind = "channel_name" // the name in <#C..|name>
	KindPhone       Kind = "phone"
	KindIP          Kind = "ip"
	KindIPv6        Kind = "ipv6"
	KindURL         Kind = "url"        // avatar and profile URLs
	KindNumericID   Kind = "numeric_id" // a provider's numeric subject id (GitHub's), as text or a JSON number
	KindSubject     Kind = "subject_id" // a provider's subject id of any other shape
	KindIBAN        Kind = "iban"
	KindCard        Kind = "card"
	KindSecret      Kind = "secret"
	KindSSN         Kind = "ssn"           // a US social security number near its name; fakes are in the 9xx area, never issued
	KindBirthDate   Kind = "date_of_birth" // a date near words of birth; the fake keeps its layout
	KindPassport    Kind = "passport"      // a passport number near its name
)

// faker derives every fake from HMAC-SHA256(key, kind || value): the same
// key gives the same fake in every file and run, and without the key a fake
// says nothing about its original. Fakes are memoized, and re-drawn when
// they would equal or hold an original, or equal another original's fake.
type faker struct {
	key        []byte
	memo       map[kindValue]string // original -> fake
	taken      map[kindValue]bool   // fakes given out
	isOriginal func(string) bool
}

type kindValue struct {
	kind  Kind
	value string
}

func newFaker(key []byte, isOriginal func(string) bool) *faker {
	return &faker{key: key, memo: map[kindValue]string{}, taken: map[kindValue]bool{}, isOriginal: isOriginal}
}

func (f *faker) sum(k Kind, v string, n int) []byte {
	mac := hmac.New(sha256.New, f.key)
	mac.Write([]byte(k))
	mac.Write([]byte{0})
	mac.Write([]byte(v))
	if n > 0 {
		mac.Write([]byte{0})
		mac.Write([]byte(strconv.Itoa(n)))
	}
	return mac.Sum(nil)
}

// fingerprint identifies the key without revealing it.
func (f *faker) fingerprint() string {
	return hex.EncodeToString(f.sum("fingerprint", "agentvcr", 0))[:16]
}

// digest names an original in reports and errors without revealing it.
func (f *faker) digest(k Kind, v string) string {
	return hex.EncodeToString(f.sum(k, v, 0))[:8]
}

// fake returns the fake for the original v of kind k. A part of a name
// is one original in every spelling (José, Jose, JOSE): its fake derives
// from the folded form, so a person's email and handle, built from the
// parts, follow the fake of the name.
func (f *faker) fake(k Kind, v string) string {
	if k == KindFirstName || k == KindLastName {
		v = strings.ToLower(foldText(v).text)
	}
	key := kindValue{k, v}
	if s, ok := f.memo[key]; ok {
		return s
	}
	if k == KindName || k == KindHandle {
		// Built from the fakes of their parts, which are unique already.
		s := f.draw(k, v, 0)
		f.memo[key] = s
		return s
	}
	var s string
	for n := 0; ; n++ {
		s = f.draw(k, v, n)
		if s == v || n > 100 { // a value that maps to itself (an empty one) ends here
			break
		}
		if !f.taken[kindValue{k, s}] && (f.isOriginal == nil || !f.isOriginal(s)) {
			break
		}
	}
	f.memo[key] = s
	f.taken[kindValue{k, s}] = true
	return s
}

func (f *faker) draw(k Kind, v string, n int) string {
	h := f.sum(k, v, n)
	switch k {
	case KindSlackID:
		return slackID(v, h)
	case KindEmail:
		// The local part maps like a handle, so ada.quill@corp.com becomes
		// the address of ada.quill's fake: one persona in every field.
		local := f.handle(v[:max(strings.LastIndexByte(v, '@'), 0)])
		if n > 0 {
			local += strconv.Itoa(n)
		}
		return local + "@example.com"
	case KindName:
		return f.name(v)
	case KindFirstName:
		first, _ := person(h)
		return first
	case KindLastName:
		_, last := person(h)
		return last
	case KindHandle:
		return f.handle(v)
	case KindIdentityID:
		u := h[:16]
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	case KindDashboardID:
		body := strings.TrimPrefix(v, "dashboard:")
		return "dashboard:" + hexOfLen(h, len(body))
	case KindHexID:
		return hexOfLen(h, len(v))
	case KindWorkspace:
		_, last := person(h)
		return fakeWorkspace(letters(last), h)
	case KindChannelName:
		return "channel-" + hex.EncodeToString(h[20:23])
	case KindPhone:
		return fakePhone(v, h)
	case KindIP:
		nets := []string{"192.0.2.", "198.51.100.", "203.0.113."}
		return nets[int(h[0])%3] + strconv.Itoa(1+int(h[1])%254)
	case KindIPv6:
		return fmt.Sprintf("2001:db8:%x:%x:%x:%x:%x:%x", h[0:2], h[2:4], h[4:6], h[6:8], h[8:10], h[10:12])
	case KindURL:
		return "https://example.com/avatars/" + hex.EncodeToString(h[:8]) + ".png"
	case KindNumericID:
		d := []byte(digits(v, h))
		if len(d) > 0 && d[0] == '0' {
			d[0] = '1' + h[31]%9
		}
		return string(d)
	case KindSubject:
		return classes(v, h)
	case KindIBAN:
		return fakeIBAN(v, h)
	case KindCard:
		return fakeCard(v, h)
	case KindSecret:
		// A secret only its context told of (a password after curl -u):
		// learned, so it has no rule's name.
		return "[redacted learned " + hex.EncodeToString(h[:4]) + "]"
	case KindSSN:
		b := []byte(classes(v, h))
		b[0] = '9' // the 9xx area is never issued
		return string(b)
	case KindBirthDate:
		return fakeDate(v, h)
	case KindPassport:
		b := []byte(classes(v, h))
		if strings.IndexByte(slackIDPrefixes, b[0]) >= 0 {
			b[0] = 'P' // never shaped like a Slack id, which the leak check would take for one
		}
		return string(b)
	}
	panic("sanitize: no fake for kind " + string(k))
}

// secret returns the placeholder for a secret that rule found: bracketed
// words that no secret scanner takes for a token, with a digest so that one
// secret keeps one placeholder.
func (f *faker) secret(rule, v string) string {
	return "[redacted " + rule + " " + hex.EncodeToString(f.sum(KindSecret, v, 0)[:4]) + "]"
}

// name maps each part of a full name on its own, so "Ada" in free text and
// "Ada Quill" in a field become the same fake first name.
func (f *faker) name(v string) string {
	parts := strings.Fields(v)
	for i, p := range parts {
		if i == len(parts)-1 && i > 0 {
			parts[i] = f.fake(KindLastName, p)
		} else {
			parts[i] = f.fake(KindFirstName, p)
		}
	}
	return strings.Join(parts, " ")
}

// handle maps ada.quill to the lower-cased fakes of its parts, keeping the
// separators.
func (f *faker) handle(v string) string {
	var b strings.Builder
	part := 0
	start := 0
	flush := func(end int) {
		if end > start {
			p := v[start:end]
			if part == 0 {
				b.WriteString(letters(f.fake(KindFirstName, capitalize(p))))
			} else {
				b.WriteString(letters(f.fake(KindLastName, capitalize(p))))
			}
			part++
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '.' || c == '_' || c == '-' || c == '+' {
			flush(i)
			b.WriteByte(c)
			start = i + 1
		}
	}
	flush(len(v))
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// person draws a first and last name from gofakeit, with a faker seeded
// from the HMAC: never gofakeit's global faker, never a reseed.
func person(h []byte) (first, last string) {
	src := rand.NewPCG(binary.LittleEndian.Uint64(h[0:8]), binary.LittleEndian.Uint64(h[8:16]))
	fk := gofakeit.NewFaker(src, false)
	return fk.FirstName(), fk.LastName()
}

// letters lower-cases s and keeps only a-z, for emails and handles.
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

const base36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// slackID keeps the type prefix and the length; the body is uppercase
// base 36 and starts with a digit, like Slack's own, and its last
// character is a check character (package fakemark): the verifier and sanitize
// check tell a fake from an original that way.
func slackID(v string, h []byte) string {
	b := []byte(v)
	for i := 1; i < len(b); i++ {
		c := h[(i-1)%len(h)] ^ byte(i/len(h))
		if i == 1 {
			b[i] = base36[int(c)%10]
		} else {
			b[i] = base36[int(c)%36]
		}
	}
	n := fakemark.SlackIDChecks(len(b))
	copy(b[len(b)-n:], fakemark.SlackIDCheck(string(b[:len(b)-n]), n))
	return string(b)
}

// fakeWorkspace is last-<6 hex>: two random, four a check of the rest
// (one real name in 65,536 that has this shape passes for a fake).
func fakeWorkspace(last string, h []byte) string {
	base := last + "-" + hex.EncodeToString(h[20:21])
	return base + fakemark.WorkspaceCheck(base)
}

// fakePhone replaces the digits of a phone number but for its country
// code, keeping its layout, until libphonenumber calls the result invalid:
// a fake is never a number someone may have, and the verifier tells it
// from an original.
func fakePhone(v string, h []byte) string {
	keep := 0
	if t := strings.TrimSpace(v); strings.HasPrefix(t, "+") {
		if num, err := phonenumbers.Parse(t, ""); err == nil {
			keep = len(strconv.Itoa(int(num.GetCountryCode())))
		}
	}
	for n := 0; ; n++ {
		b := []byte(v)
		j := 0
		seen := 0
		for i, c := range b {
			if '0' <= c && c <= '9' {
				seen++
				if seen > keep {
					b[i] = '0' + h[(j+n)%len(h)]%10
					if i == 0 && b[i] == '0' {
						b[i] = '1' // a JSON number never starts with 0
					}
					j++
				}
			}
		}
		if fake := string(b); !anyValidPhone(fake) || n == 32 {
			if n == 32 {
				// Every draw was valid: start the national number with 0,
				// which no numbering plan gives a subscriber.
				fake = zeroFirst(b, keep)
			}
			return fake
		}
	}
}

// anyValidPhone reports whether text is a valid phone number read as the
// detectors read one: with its +, in the United States, or as the digits
// of a JSON number with a + before them.
func anyValidPhone(text string) bool {
	texts := []string{text}
	if strings.Trim(text, "0123456789") == "" {
		texts = append(texts, "+"+text)
	}
	for _, t := range texts {
		for _, region := range []string{"US", ""} {
			if num, err := phonenumbers.Parse(t, region); err == nil && phonenumbers.IsValidNumber(num) {
				return true
			}
		}
	}
	return false
}

func zeroFirst(b []byte, keep int) string {
	seen := 0
	for i, c := range b {
		if '0' <= c && c <= '9' {
			if seen++; seen == keep+1 && i > 0 {
				b[i] = '0'
				break
			}
		}
	}
	return string(b)
}

// classes replaces each letter and digit by one of its class, keeping
// everything else.
func classes(v string, h []byte) string {
	b := []byte(v)
	for i, c := range b {
		x := h[i%len(h)] ^ byte(i/len(h))
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + x%26
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + x%26
		case '0' <= c && c <= '9':
			b[i] = '0' + x%10
		}
	}
	return string(b)
}

// fakeIBAN keeps the country, the layout and the class of each character,
// with check digits that never pass mod 97: no account has it, and the
// verifier tells it from an original.
func fakeIBAN(v string, h []byte) string {
	b := []byte(classes(v, h))
	copy(b, v[:2])
	compact := strings.ReplaceAll(string(b), " ", "")
	b[2], b[3] = '0', '0'
	compact = compact[:2] + "00" + compact[4:]
	valid := 98 - ibanMod97(compact)
	bad := (valid + 1 + int(h[30])%90) % 100
	if bad == valid || bad < 2 {
		bad = (valid + 3) % 97
	}
	b[2], b[3] = '0'+byte(bad/10), '0'+byte(bad%10)
	return string(b)
}

// fakeCard keeps the first digit and the layout, with a check digit that
// fails Luhn's test.
func fakeCard(v string, h []byte) string {
	b := []byte(digits(v, h))
	first := strings.IndexFunc(v, func(r rune) bool { return '0' <= r && r <= '9' })
	b[first] = v[first]
	var ds []byte
	last := -1
	for i, c := range b {
		if '0' <= c && c <= '9' {
			ds = append(ds, c)
			last = i
		}
	}
	if luhn(ds) {
		b[last] = '0' + (b[last]-'0'+1)%10
	}
	return string(b)
}

func hexOfLen(h []byte, n int) string {
	s := hex.EncodeToString(h)
	for len(s) < n {
		s += s
	}
	return s[:n]
}

// digits replaces every digit of a phone number, keeping its layout and a
// leading +.
func digits(v string, h []byte) string {
	b := []byte(v)
	j := 0
	for i, c := range b {
		if '0' <= c && c <= '9' {
			b[i] = '0' + h[j%len(h)]%10
			j++
		}
	}
	return string(b)
}

var monthNames = []string{"january", "february", "march", "april", "may", "june", "july", "august",
	"september", "october", "november", "december"}

// fakeDate writes another date in the layout of v: a group of four digits
// is a year from 1950 to 1999, the first group of one or two digits a
// day or month of at most 12, the next of at most 28, and a month's name
// another month's name, in its letter case and length (March, Mar).
func fakeDate(v string, h []byte) string {
	var b strings.Builder
	small := 0
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case isDigit(c):
			j := i
			for j < len(v) && isDigit(v[j]) {
				j++
			}
			var n int
			switch width := j - i; {
			case width == 4:
				n = 1950 + int(h[i%len(h)])%50
			case small == 0:
				n = 1 + int(h[i%len(h)])%12
				small++
			default:
				n = 1 + int(h[i%len(h)])%28
			}
			b.WriteString(fmt.Sprintf("%0*d", j-i, n))
			i = j
		case isAlpha(c):
			j := i
			for j < len(v) && isAlpha(v[j]) {
				j++
			}
			word := v[i:j]
			if isMonth(word) {
				m := monthNames[int(h[(i+7)%len(h)])%12]
				if len(word) <= 4 {
					m = m[:3]
				}
				word = withCase(capitalize(m), word, KindBirthDate)
			}
			b.WriteString(word)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isMonth(w string) bool {
	lw := strings.ToLower(w)
	for _, m := range monthNames {
		if lw == m || len(lw) >= 3 && strings.HasPrefix(m, lw) {
			return true
		}
	}
	return false
}
