package sanitize

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/big"
	"net/netip"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/nyaruka/phonenumbers"
	"github.com/tidwall/gjson"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// The verifier reads what the rewrite wrote with code of its own: gjson
// and encoding/json to decode strings and nested documents, net/url, html
// and encoding/base64 for the forms a value may take inside a string,
// x/text's NFKC, case folding and NFD for the forms of a name, an
// Aho-Corasick automaton for the learned values, and detectors written
// again. Only the secret rules (gitleaks' set, internal/secrets, itself
// checked against gitleaks' detector) and libphonenumber are shared with
// the rewrite: both are libraries, not matching code of ours. Whatever it
// finds is a hit, and nothing is written.

// ErrLeak is matched by the error of a Sanitize that found personal data or
// a secret in its own output, and wrote nothing.
var ErrLeak = errors.New("personal data or secrets survived sanitizing")

// Hit is one value the leak check found. It never holds the value, nor a
// key that held one: only where it is (object keys that are not plain
// identifiers, or held the value, as digests), what kind it is, and a
// digest of it under the key.
type Hit struct {
	Seq    int64  `json:"seq"` // -1 outside rows
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Digest string `json:"digest,omitempty"`
}

// LeakError lists what survived in one file.
type LeakError struct {
	File string
	Hits []Hit
}

func (e *LeakError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: refusing to write: %v:", orInput(e.File), ErrLeak)
	for i, h := range e.Hits {
		if i == 10 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Hits)-10)
			break
		}
		if i > 0 {
			b.WriteByte(';')
		}
		if h.Seq >= 0 {
			fmt.Fprintf(&b, " row seq %d", h.Seq)
		}
		fmt.Fprintf(&b, " %s: %s", h.Path, h.Kind)
		if h.Digest != "" {
			fmt.Fprintf(&b, " (digest %s)", h.Digest)
		}
	}
	return b.String()
}

func (e *LeakError) Unwrap() error { return ErrLeak }

// verify checks a sanitized document against its input: every learned
// value, in every form, every detector, and every document nested in a
// string of the input still a document in the output.
func (s *Sanitizer) verify(in string, out []byte) []Hit {
	if !json.Valid(out) {
		return []Hit{{Seq: -1, Kind: "invalid JSON"}}
	}
	v := s.verifier()
	nested := map[string]bool{}
	inspect(in, func(pos string) { nested[pos] = true }, nil)
	var hits []Hit
	inspect(string(out), func(pos string) { delete(nested, pos) }, func(t target) {
		hits = append(hits, v.check(t)...)
	})
	for pos := range nested {
		hits = append(hits, Hit{Seq: -1, Path: "at " + pos, Kind: "nested document no longer parses"})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Seq < hits[j].Seq })
	return hits
}

// verifier holds the learned values as the leak check looks for them.
type verifier struct {
	fk      *faker
	entries []entry
	trie    *ahocorasick.Trie
	byText  map[string][]int // normalized value -> entries
	// exact are the values that match only as written, and in capitals.
	exact      []int
	notSecrets *regexp.Regexp // the product's ids that are no secrets
}

func (s *Sanitizer) verifier() *verifier {
	if s.leak != nil && s.leakBuilt == len(s.dict.list) {
		return s.leak
	}
	v := &verifier{fk: s.fk, entries: s.dict.list, byText: map[string][]int{}, notSecrets: s.notSecrets}
	var words []string
	for i, e := range s.dict.list {
		if verbatim(e.kind, e.value) {
			v.exact = append(v.exact, i)
			continue
		}
		n := normalize(e.value)
		if len(v.byText[n]) == 0 {
			words = append(words, n)
		}
		v.byText[n] = append(v.byText[n], i)
	}
	v.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	s.leak, s.leakBuilt = v, len(s.dict.list)
	return v
}

// target is one string or number of a document, as the leak check sees
// it.
type target struct {
	text    string
	number  bool
	seq     int64
	rowType string   // of the row the target is in
	path    []string // keys, [#] and >, raw
	key     bool     // the text is an object key
}

// inspect walks a history document: nested(pos) is told of every string
// that is a JSON document, by its position (member and element indexes),
// and leaf, if set, gets every other string and number, decoded.
func inspect(doc string, nested func(pos string), leaf func(target)) {
	var walk func(v gjson.Result, t target, pos string)
	walk = func(v gjson.Result, t target, pos string) {
		switch {
		case v.Type == gjson.String:
			if trimmed := strings.TrimSpace(v.Str); len(trimmed) > 1 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid([]byte(trimmed)) {
				nested(pos)
				t.path = append(t.path, ">")
				walk(gjson.Parse(v.Str), t, pos+">")
				return
			}
			if leaf != nil {
				t.text = v.Str
				leaf(t)
			}
		case v.Type == gjson.Number:
			if leaf != nil {
				t.text, t.number = v.Raw, true
				leaf(t)
			}
		case v.IsObject():
			i := 0
			v.ForEach(func(k, val gjson.Result) bool {
				kt := t
				kt.path = append(append([]string(nil), t.path...), k.Str)
				if leaf != nil {
					key := kt
					key.text, key.key = k.Str, true
					leaf(key)
				}
				// Positions by index, but for the top level and the
				// exporter, where the stamp adds a member.
				p := pos + "." + strconv.Itoa(i)
				if pos == "" || pos == ".exporter" {
					p = pos + "." + k.Str
				}
				i++
				if len(t.path) == 2 && t.path[0] == "events" && val.Type == gjson.Number && structural[k.Str] {
					return true
				}
				walk(val, kt, p)
				return true
			})
		case v.IsArray():
			i := 0
			v.ForEach(func(_, val gjson.Result) bool {
				et := t
				et.path = append(append([]string(nil), t.path...), "[#]")
				if len(t.path) == 1 && t.path[0] == "events" {
					et.seq, et.rowType = val.Get("seq").Int(), val.Get("type").String()
				}
				walk(val, et, pos+"["+strconv.Itoa(i)+"]")
				i++
				return true
			})
		}
	}
	walk(gjson.Parse(doc), target{seq: -1}, "")
}

// structural are the numbers of an event row that are the log's own.
var structural = map[string]bool{"seq": true, "createdAtMs": true, "historyVersion": true, "schemaVersion": true}

// check returns the hits in one string or number.
func (v *verifier) check(t target) []Hit {
	var found []string // kinds, with digests after a tab
	if t.number {
		found = v.numberHits(t.text)
	} else {
		for _, form := range forms(t.text) {
			found = append(found, v.textHits(form)...)
		}
	}
	if len(found) == 0 {
		return nil
	}
	where := hitPath(t, v.fk)
	hits := make([]Hit, 0, len(found))
	seen := map[string]bool{}
	for _, f := range found {
		if seen[f] {
			continue
		}
		seen[f] = true
		kind, digest, _ := strings.Cut(f, "\t")
		hits = append(hits, Hit{Seq: t.seq, Path: where, Kind: kind, Digest: digest})
	}
	return hits
}

// hitPath names where a hit is: the path's keys where they are plain
// identifiers, digests of the others and of the key the hit is in.
func hitPath(t target, fk *faker) string {
	var b strings.Builder
	for i, seg := range t.path {
		switch {
		case seg == "[#]" && i == 1 && t.path[0] == "events":
			b.Reset()
			if plainKey(t.rowType) {
				b.WriteString(t.rowType)
			} else {
				b.WriteString("events[#]")
			}
		case seg == ">", seg == "[#]":
			b.WriteString(seg)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), ">") {
				b.WriteByte('.')
			}
			if plainKey(seg) && !(t.key && i == len(t.path)-1) {
				b.WriteString(seg)
			} else {
				b.WriteString("<key " + fk.digest("key", seg) + ">")
			}
		}
	}
	return b.String()
}

// forms returns the text and what it decodes to: HTML entities, percent
// escapes (as a path and as a query), and the base64 tokens in it that
// decode to text, and, where one of those is a JSON document, its strings.
func forms(s string) []string {
	out := []string{s}
	if strings.Contains(s, "&") {
		if u := html.UnescapeString(s); u != s {
			out = append(out, u)
		}
	}
	if strings.Contains(s, "%") {
		for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
			if u, err := unescape(s); err == nil && u != s {
				out = append(out, u)
			} else if err != nil {
				out = append(out, lenientUnescape(s))
			}
		}
	}
	for _, tok := range base64Tokens.FindAllString(s, -1) {
		if text, ok := decodeBase64Text(tok); ok {
			out = append(out, text)
			if gjson.Valid(text) {
				gjson.Parse(text).ForEach(func(_, v gjson.Result) bool {
					out = append(out, v.String())
					return true
				})
			}
		}
	}
	return out
}

// lenientUnescape decodes the %XX escapes that are valid and leaves the
// rest, where url's decoders give up on the whole text.
func lenientUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var base64Tokens = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)

// decodeBase64Text decodes a base64 token in any of its alphabets, and
// reports whether it holds printable UTF-8 text.
func decodeBase64Text(tok string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(tok)
		if err != nil || !utf8.Valid(b) {
			continue
		}
		printable := 0
		for _, r := range string(b) {
			if unicode.IsPrint(r) || unicode.IsSpace(r) {
				printable++
			}
		}
		if n := utf8.RuneCount(b); n > 0 && printable*10 >= n*9 {
			return string(b), true
		}
	}
	return "", false
}

// normalizer is NFKC, then case folding, then NFD without combining
// marks.
var normalizer = transform.Chain(norm.NFKC, cases.Fold(), norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// letterSpellings spell the letters without a decomposition as ASCII,
// and every apostrophe as '.
var letterSpellings = strings.NewReplacer(
	"ø", "o", "ł", "l", "đ", "d", "ð", "d", "ß", "ss", "æ", "ae", "œ", "oe", "þ", "th", "ı", "i", "ħ", "h", "ŧ", "t", "ς", "σ",
	"’", "'", "‘", "'", "ʼ", "'", "′", "'", "`", "'", "´", "'")

// normalize is how the leak check compares text with learned values.
func normalize(s string) string {
	if isASCII(s) {
		return strings.ReplaceAll(strings.ToLower(s), "`", "'")
	}
	n, _, err := transform.String(normalizer, s)
	if err != nil {
		n = strings.ToLower(s)
	}
	return letterSpellings.Replace(n)
}

func isASCII(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// textHits looks in one form of a string for learned values and what the
// detectors find.
func (v *verifier) textHits(s string) []string {
	var found []string
	n := normalize(s)
	for _, m := range v.trie.MatchString(n) {
		start := int(m.Pos())
		end := start + len(m.Match())
		alone := standsAlone(n, start, end)
		for _, i := range v.byText[string(m.Match())] {
			// Ids are found anywhere; words only as words.
			if e := v.entries[i]; alone || e.kind == KindSlackID || e.kind == KindEmail || e.kind == KindIdentityID ||
				e.kind == KindDashboardID || e.kind == KindHexID || e.kind == KindURL {
				found = append(found, string(e.kind)+"\t"+v.fk.digest(e.kind, e.value))
			}
		}
	}
	for _, i := range v.exact {
		e := v.entries[i]
		word := e.value
		if e.kind == KindHandle {
			word = "@" + word
		}
		for _, w := range []string{word, strings.ToUpper(word)} {
			for from := 0; ; {
				at := strings.Index(s[from:], w)
				if at < 0 {
					break
				}
				at += from
				from = at + len(w)
				if standsAlone(s, at, at+len(w)) {
					found = append(found, string(e.kind)+"\t"+v.fk.digest(e.kind, e.value))
					break
				}
			}
		}
	}
	return append(found, detectorHits(s, v.notSecrets)...)
}

// standsAlone reports whether s[start:end] is a word of s: each side is
// the text's edge, or a character that is neither a letter nor a digit, or
// an underscore, or a digit against a letter, or a letter of another
// script; a word in Chinese, Japanese, Thai or Korean needs no such edge,
// and Arabic's one-letter proclitics (و ف ب ل ك, the article's ا and ل)
// may stand before a word.
func standsAlone(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:])
	last, _ := utf8.DecodeLastRuneInString(s[:end])
	var before, after rune = -1, -1
	if start > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:start])
	}
	if end < len(s) {
		after, _ = utf8.DecodeRuneInString(s[end:])
	}
	if !edge(after, last) {
		return false
	}
	if edge(before, first) {
		return true
	}
	if !unicode.Is(unicode.Arabic, first) {
		return false
	}
	prefix := []rune(s[:start])
	for n := 1; n <= 2 && n <= len(prefix); n++ {
		p := prefix[len(prefix)-n:]
		if !strings.ContainsRune("وفبلكا", p[0]) || n == 2 && !strings.ContainsRune("وفبلكا", p[1]) {
			break
		}
		if len(prefix) == n || edge(prefix[len(prefix)-n-1], p[0]) {
			return true
		}
	}
	return false
}

// edge reports whether the rune beside a word, c, ends it against the
// word's own rune at that side, w.
func edge(c, w rune) bool {
	if c < 0 || c == '_' {
		return true
	}
	if unicode.In(w, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
		return true
	}
	cLetter := unicode.IsLetter(c) || unicode.Is(unicode.Mn, c)
	cDigit, wDigit := unicode.IsDigit(c), unicode.IsDigit(w)
	switch {
	case cDigit:
		return !wDigit
	case cLetter && wDigit:
		return true
	case cLetter:
		return scriptName(c) != scriptName(w)
	}
	return true
}

func scriptName(r rune) string {
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

var (
	verifyEmail     = regexp.MustCompile(`[\p{L}\p{N}\p{Mn}._%+-]+@[\p{L}\p{N}\p{Mn}-]+(?:\.[\p{L}\p{N}\p{Mn}-]+)*\.\p{L}{2,}`)
	verifySlackID   = regexp.MustCompile(`[UWTECGDBFAS][A-Z0-9]{8,11}`)
	verifyWorkspace = regexp.MustCompile(`(?i)([a-z0-9-]+)(\.enterprise)?\.slack\.com`)
	verifyIPv4      = regexp.MustCompile(`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}`)
	verifyIPv6      = regexp.MustCompile(`(?i)[0-9a-f:.]*:[0-9a-f:.]*:[0-9a-f:.]*`)
	verifyPhone     = regexp.MustCompile(`\+\d[\d ().-]{6,}\d|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b`)
	verifyIBAN      = regexp.MustCompile(`[A-Z]{2}\d{2}[ A-Z0-9]{11,36}`)
	verifyDigits    = regexp.MustCompile(`\d+(?:[ -]\d+)*`)
	cardNetworks    = regexp.MustCompile(`^(?:4|5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720|3[04-8]|6011|64[4-9]|65|62)`)
)

// detectorHits runs the leak check's own detectors on a text: email
// addresses off the reserved domains, secrets, Slack ids and workspace
// names that are not the sanitizer's fakes, IP addresses off the
// documentation networks, phone numbers libphonenumber calls valid,
// IBANs that pass mod 97 and card numbers that pass Luhn's check.
func detectorHits(s string, notSecrets *regexp.Regexp) []string {
	var found []string
	if strings.Contains(s, "@") {
		for _, m := range verifyEmail.FindAllString(s, -1) {
			if !reservedDomain(strings.ToLower(m[strings.LastIndex(m, "@")+1:])) {
				found = append(found, "email")
			}
		}
	}
	for _, m := range secrets.Default().Find(s) {
		if !notSecret(notSecrets, s, m.Start, m.End) {
			found = append(found, "secret:"+m.Rule)
		}
	}
	for _, loc := range verifySlackID.FindAllStringIndex(s, -1) {
		id := s[loc[0]:loc[1]]
		alone := (loc[0] == 0 || !isAlnumASCII(s[loc[0]-1])) && (loc[1] == len(s) || !isAlnumASCII(s[loc[1]]))
		if alone && strings.ContainsAny(id, "0123456789") && !FakeSlackID(id) {
			found = append(found, "slack-id")
		}
	}
	for _, m := range verifyWorkspace.FindAllStringSubmatchIndex(s, -1) {
		if m[1] < len(s) && (isAlnumASCII(s[m[1]]) || s[m[1]] == '-') {
			continue
		}
		ws := strings.ToLower(s[m[2]:m[3]])
		if !slackDomains[ws] && !FakeWorkspace(ws) && !strings.HasPrefix(ws, "-") {
			found = append(found, "workspace")
		}
	}
	for _, loc := range verifyIPv4.FindAllStringIndex(s, -1) {
		before := loc[0] > 0 && (isAlnumASCII(s[loc[0]-1]) || s[loc[0]-1] == '.')
		after := loc[1] < len(s) && (isAlnumASCII(s[loc[1]]) || s[loc[1]] == '.' && loc[1]+1 < len(s) && isAlnumASCII(s[loc[1]+1]))
		if addr, err := netip.ParseAddr(s[loc[0]:loc[1]]); err == nil && !before && !after && !documentationIPv4(addr) {
			found = append(found, "ip")
		}
	}
	if strings.Count(s, ":") >= 2 {
		for _, loc := range verifyIPv6.FindAllStringIndex(s, -1) {
			cand := strings.Trim(s[loc[0]:loc[1]], ".")
			if !strings.HasPrefix(cand, "::") {
				cand = strings.TrimLeft(cand, ":")
			}
			if !strings.HasSuffix(cand, "::") {
				cand = strings.TrimRight(cand, ":")
			}
			before := loc[0] > 0 && isAlnumASCII(s[loc[0]-1])
			after := loc[1] < len(s) && isAlnumASCII(s[loc[1]])
			if addr, err := netip.ParseAddr(cand); err == nil && addr.Is6() && !before && !after && !documentationIPv6(addr) {
				found = append(found, "ipv6")
			}
		}
	}
	for _, loc := range verifyPhone.FindAllStringIndex(s, -1) {
		before := loc[0] > 0 && (isAlnumASCII(s[loc[0]-1]) || s[loc[0]-1] == '.' || s[loc[0]-1] == '+')
		if before {
			continue
		}
		// The number and what may follow it (a year, a count): every cut
		// at the end of a group of digits is tried.
		cand := s[loc[0]:loc[1]]
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
	for _, loc := range verifyIBAN.FindAllStringIndex(s, -1) {
		if loc[0] > 0 && isAlnumASCII(s[loc[0]-1]) {
			continue
		}
		if ibanValid(s[loc[0]:loc[1]]) {
			found = append(found, "iban")
		}
	}
	for _, loc := range verifyDigits.FindAllStringIndex(s, -1) {
		if loc[0] > 0 && (isAlnumASCII(s[loc[0]-1]) || s[loc[0]-1] == '.' || s[loc[0]-1] == '_') {
			continue
		}
		groups := strings.FieldsFunc(s[loc[0]:loc[1]], func(r rune) bool { return r == ' ' || r == '-' })
		if end := loc[1]; end < len(s) && (unicode.IsLetter(rune(s[end])) || s[end] == '_' || s[end] == '.' && end+1 < len(s) && isAlnumASCII(s[end+1])) {
			groups = groups[:len(groups)-1]
		}
		// Any groups in a row may be the card.
		for i := range groups {
			for j := i + 1; j <= len(groups); j++ {
				if cardValid(strings.Join(groups[i:j], "")) {
					found = append(found, "card")
				}
			}
		}
	}
	return found
}

// numberHits looks at a JSON number: a learned value written as one, a
// phone number in international form without its +, a card number.
func (v *verifier) numberHits(num string) []string {
	var found []string
	if ids := v.byText[num]; len(ids) > 0 {
		for _, i := range ids {
			e := v.entries[i]
			found = append(found, string(e.kind)+"\t"+v.fk.digest(e.kind, e.value))
		}
	}
	if strings.Trim(num, "0123456789") == "" {
		if len(num) >= 10 && len(num) <= 15 && phoneValid("+"+num) {
			found = append(found, "phone")
		}
		if cardValid(num) {
			found = append(found, "card")
		}
	}
	return found
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
	num, err := phonenumbers.Parse(text, region)
	return err == nil && phonenumbers.IsValidNumber(num)
}

// ibanValid reports whether text starts with an IBAN: as long as its
// country's IBANs, ending where a group of the text ends, with check
// digits that hold (the number with its first four characters moved to
// the end, and letters as 10 to 35, leaves 1 when divided by 97).
func ibanValid(text string) bool {
	want, ok := ibanLengths[text[:2]]
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
	d := strings.NewReplacer(" ", "", "-", "").Replace(text)
	if len(d) < 13 || len(d) > 19 || strings.Trim(d, "0123456789") != "" {
		return false
	}
	if !cardNetworks.MatchString(d) {
		return false
	}
	doubled := [10]int{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}
	sum := 0
	for i := range len(d) {
		c := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			c = doubled[c]
		}
		sum += c
	}
	return sum%10 == 0
}
