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
	"unsafe"

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
// value, in every form, every detector, and every row holding as many
// documents nested in its strings as it did.
func (s *Sanitizer) verify(in string, out []byte) []Hit {
	if !json.Valid(out) {
		return []Hit{{Seq: -1, Kind: "invalid JSON"}}
	}
	v := s.verifier()
	nestedIn := map[int64]int{}
	inspect(in, func(seq int64) { nestedIn[seq]++ }, nil)
	nestedOut := map[int64]int{}
	var hits []Hit
	inspect(asString(out), func(seq int64) { nestedOut[seq]++ }, func(t *target) {
		hits = append(hits, v.check(t)...)
	})
	for seq, n := range nestedIn {
		if nestedOut[seq] < n {
			hits = append(hits, Hit{Seq: seq, Kind: "a document nested in a string no longer parses"})
		}
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
	// exact finds the values that match only as written, and in
	// capitals; byExact maps its words to entries.
	exact      *ahocorasick.Trie
	byExact    map[string][]int
	notSecrets *regexp.Regexp  // the product's ids that are no secrets
	idFields   map[string]bool // the product's fields that hold ids
	memo       map[memoKey][]string
}

func (s *Sanitizer) verifier() *verifier {
	if s.leak != nil && s.leakBuilt == len(s.dict.list) {
		return s.leak
	}
	v := &verifier{fk: s.fk, entries: s.dict.list, byText: map[string][]int{}, byExact: map[string][]int{},
		notSecrets: s.notSecrets, memo: map[memoKey][]string{}, idFields: map[string]bool{}}
	for _, f := range s.rules.IDFields {
		v.idFields[f] = true
	}
	var words, exact []string
	for i, e := range s.dict.list {
		if verbatim(e.kind, e.value) {
			word := e.value
			if e.kind == KindHandle {
				word = "@" + word
			}
			for _, w := range []string{word, strings.ToUpper(word)} {
				if len(v.byExact[w]) == 0 {
					exact = append(exact, w)
				}
				v.byExact[w] = append(v.byExact[w], i)
			}
			continue
		}
		n := normalize(e.value)
		if len(v.byText[n]) == 0 {
			words = append(words, n)
		}
		v.byText[n] = append(v.byText[n], i)
	}
	v.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	v.exact = ahocorasick.NewTrieBuilder().AddStrings(exact).Build()
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

// inspect walks a history document: nested(seq) is told of every string
// that is a JSON document, by the seq of its row (-1 outside rows), and
// leaf, if set, gets every other string and number, decoded, and every
// object key. The target and its path are the walk's own: valid during
// the call.
func inspect(doc string, nested func(seq int64), leaf func(*target)) {
	t := &target{seq: -1}
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			if trimmed := strings.TrimSpace(v.Str); len(trimmed) > 1 && (trimmed[0] == '{' || trimmed[0] == '[') &&
				json.Valid(unsafe.Slice(unsafe.StringData(trimmed), len(trimmed))) {
				nested(t.seq)
				t.path = append(t.path, ">")
				walk(gjson.Parse(v.Str))
				t.path = t.path[:len(t.path)-1]
				return
			}
			if leaf != nil {
				t.text, t.number, t.key = v.Str, false, false
				leaf(t)
			}
		case v.Type == gjson.Number:
			if leaf != nil {
				t.text, t.number, t.key = v.Raw, true, false
				leaf(t)
			}
		case v.IsObject():
			v.ForEach(func(k, val gjson.Result) bool {
				t.path = append(t.path, k.Str)
				if leaf != nil {
					t.text, t.number, t.key = k.Str, false, true
					leaf(t)
				}
				walk(val)
				t.path = t.path[:len(t.path)-1]
				return true
			})
		case v.IsArray():
			rows := len(t.path) == 1 && t.path[0] == "events"
			v.ForEach(func(_, val gjson.Result) bool {
				t.path = append(t.path, "[#]")
				if rows {
					t.seq, t.rowType = val.Get("seq").Int(), val.Get("type").String()
				}
				walk(val)
				if rows {
					t.seq, t.rowType = -1, ""
				}
				t.path = t.path[:len(t.path)-1]
				return true
			})
		}
	}
	walk(gjson.Parse(doc))
}

// check returns the hits in one string or number, and, for the value of
// a key that names a secret, the secrets the key tells of.
func (v *verifier) check(t *target) []Hit {
	found := v.found(t.text, t.number)
	if n := len(t.path) - 1; !t.number && !t.key && n >= 0 && t.path[n] != ">" && t.path[n] != "[#]" && !v.idFields[t.path[n]] && secrets.Default().Named(t.path[n]) {
		for _, m := range secrets.Default().Assignment(t.path[n], t.text) {
			if !notSecret(v.notSecrets, t.text, m.Start, m.End) {
				found = append(found, "secret:"+m.Rule)
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	where := hitPath(t, v.fk, func(seg string) bool { return len(v.found(seg, false)) == 0 })
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

// found returns what the leak check finds in one string or number: kinds,
// each with a digest after a tab. Short texts repeat (keys, roles, types):
// what was found in one is remembered.
func (v *verifier) found(text string, number bool) []string {
	const memoMax = 96
	if len(text) <= memoMax {
		if f, ok := v.memo[memoKey{text, number}]; ok {
			return f
		}
	}
	var found []string
	if number {
		found = v.numberHits(text)
	} else {
		for _, form := range forms(text) {
			found = append(found, v.textHits(form)...)
		}
	}
	if len(text) <= memoMax {
		if len(v.memo) >= 1<<16 {
			clear(v.memo)
		}
		v.memo[memoKey{strings.Clone(text), number}] = found
	}
	return found
}

type memoKey struct {
	text   string
	number bool
}

// hitPath names where a hit is: the row's type and the path's keys where
// they are plain identifiers in which clean finds nothing, digests of the
// others and of the key the hit is in, so that no message shows a value.
func hitPath(t *target, fk *faker, clean func(string) bool) string {
	var b strings.Builder
	sep := false // a key written next needs a dot before it
	for i, seg := range t.path {
		switch {
		case seg == "[#]" && i == 1 && t.path[0] == "events":
			b.Reset()
			if plainKey(t.rowType) && clean(t.rowType) {
				b.WriteString(t.rowType)
			} else {
				b.WriteString("events[#]")
			}
			sep = true
		case seg == ">":
			b.WriteString(seg)
			sep = false
		case seg == "[#]":
			b.WriteString(seg)
			sep = true
		default:
			if sep {
				b.WriteByte('.')
			}
			if plainKey(seg) && !(t.key && i == len(t.path)-1) && clean(seg) {
				b.WriteString(seg)
			} else {
				b.WriteString("<key " + fk.digest("key", seg) + ">")
			}
			sep = true
		}
	}
	return b.String()
}

// forms returns the text and what it decodes to: HTML entities, percent
// escapes (as a path and as a query), and the base64 tokens in it that
// decode to text, and, where one of those is a JSON document, its strings.
func forms(s string) []string {
	out := []string{s}
	if !isASCII(s) {
		if v := withoutInvisible(s); v != s {
			out = append(out, v)
		}
		if n := norm.NFKC.String(s); n != s {
			out = append(out, n)
		}
	}
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
	for _, tok := range base64Candidates(s) {
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

// base64Candidates returns the runs of 12 base64 characters or more (with
// their padding) that mix letter cases or hold a digit or + or /: a long
// word is no base64.
func base64Candidates(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i
		lower, upperCase, other := false, false, false
		for j < len(s) {
			c := s[j]
			switch {
			case 'a' <= c && c <= 'z':
				lower = true
			case 'A' <= c && c <= 'Z':
				upperCase = true
			case '0' <= c && c <= '9', c == '+', c == '/', c == '_', c == '-':
				other = true
			default:
				goto end
			}
			j++
		}
	end:
		k := j
		for k < len(s) && k-j < 2 && s[k] == '=' {
			k++
		}
		if j-i >= 12 && (other || lower && upperCase) {
			out = append(out, s[i:k])
		}
		i = max(k, i+1)
	}
	return out
}

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

// withoutInvisible removes what does not show: format characters (the
// zero-width space, joiners, the soft hyphen, the byte-order mark) and
// bytes that are no character.
func withoutInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
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
	for _, m := range v.exact.MatchString(s) {
		start := int(m.Pos())
		if !standsAlone(s, start, start+len(m.Match())) {
			continue
		}
		for _, i := range v.byExact[string(m.Match())] {
			e := v.entries[i]
			found = append(found, string(e.kind)+"\t"+v.fk.digest(e.kind, e.value))
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
	// Digits on both sides make an id of it, not a word; so does a hash.
	digit := func(r rune) bool { return r >= '0' && r <= '9' }
	// Ids are ASCII: only a word in it can be part of one.
	if first < 0x80 && last < 0x80 &&
		((digit(before) && digit(after) && !digit(first) && !digit(last)) || (digit(before) || digit(after)) && hashLike(s, start, end)) {
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

var hexRun = regexp.MustCompile(`[0-9a-fA-F-]{8,}`)

// hashLike reports whether s[start:end] is part of eight hexadecimal
// digits or more with a decimal digit among them.
func hashLike(s string, start, end int) bool {
	for _, m := range hexRun.FindAllStringIndex(s, -1) {
		if m[0] <= start && end <= m[1] && strings.ContainsAny(s[m[0]:m[1]], "0123456789") {
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
	verifySlackID = regexp.MustCompile(`^[UWTECGDBFAS][A-Z0-9]{8,11}$`)
	verifyPhone   = regexp.MustCompile(`\+\d[\d ().-]{6,}\d|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b`)
	verifyIBAN    = regexp.MustCompile(`[A-Z]{2}\d{2}[ A-Z0-9]{11,36}`)
	verifyDigits  = regexp.MustCompile(`\d+(?:[ .-]\d+)*`)
	cardNetworks  = regexp.MustCompile(`^(?:4|5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720|3[04-8]|6011|64[4-9]|65|62)`)
)

// detectorHits runs the leak check's own detectors on a text: email
// addresses off the reserved domains, secrets, Slack ids and workspace
// names that are not the sanitizer's fakes, IP addresses off the
// documentation networks, phone numbers libphonenumber calls valid,
// IBANs that pass mod 97 and card numbers that pass Luhn's check. Each
// runs only on a text that has what it looks for.
func detectorHits(s string, notSecrets *regexp.Regexp) []string {
	var found []string
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
		for _, id := range words(s, func(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }, isAlnumASCII) {
			if len(id) >= 9 && len(id) <= 12 && verifySlackID.MatchString(id) && strings.ContainsAny(id, "0123456789") && !FakeSlackID(id) {
				found = append(found, "slack-id")
			}
		}
	}
	if dots >= 2 {
		for _, ws := range workspaces(s) {
			if !slackDomains[ws] && !FakeWorkspace(ws) && !strings.HasPrefix(ws, "-") {
				found = append(found, "workspace")
			}
		}
	}
	if digits >= 4 && dots >= 3 {
		for _, w := range words(s, func(c byte) bool { return '0' <= c && c <= '9' || c == '.' }, isAlnumASCII) {
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
	return found
}

// words returns the runs of s whose bytes are in, with no byte of edge
// before or after them.
func words(s string, in, edge func(byte) bool) []string {
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
// of two letters or more.
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
		if local < at && len(labels) >= 2 && labels[0] != "" && utf8.RuneCountInString(tld) >= 2 && strings.IndexFunc(tld, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			out = append(out, strings.TrimLeft(s[local:at], ".")+"@"+domain)
		}
	}
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

// cardHits looks for card numbers in every run of digit groups, in the
// layouts card networks print them in: 13 to 19 digits together, groups
// of four (the last may be shorter), 4-6-5 and 4-6-4.
func cardHits(s string) []string {
	var found []string
	for _, loc := range verifyDigits.FindAllStringIndex(s, -1) {
		if loc[0] > 0 && (isAlnumASCII(s[loc[0]-1]) || s[loc[0]-1] == '.' || s[loc[0]-1] == '_') {
			continue
		}
		groups := strings.FieldsFunc(s[loc[0]:loc[1]], func(r rune) bool { return r == ' ' || r == '-' || r == '.' })
		if end := loc[1]; end < len(s) && (unicode.IsLetter(rune(s[end])) || s[end] == '_' || s[end] == '.' && end+1 < len(s) && isAlnumASCII(s[end+1])) {
			groups = groups[:len(groups)-1]
		}
		for i := range groups {
			digits := ""
			for j := i; j < len(groups) && len(digits) < 19; j++ {
				digits += groups[j]
				if len(digits) >= 13 && len(digits) <= 19 && printedAsCard(groups[i:j+1]) && cardValid(digits) {
					found = append(found, "card")
				}
			}
		}
	}
	return found
}

// printedAsCard reports whether groups of digits are laid out as cards
// are printed.
func printedAsCard(g []string) bool {
	switch {
	case len(g) == 1:
		return true
	case len(g) == 3 && len(g[0]) == 4 && len(g[1]) == 6 && (len(g[2]) == 5 || len(g[2]) == 4):
		return true
	}
	for i, x := range g {
		if len(x) != 4 && (i < len(g)-1 || len(x) > 3) {
			return false
		}
	}
	return true
}

// numberHits looks at a JSON number: a learned value written as one, a
// phone number in international form without its +, a card number.
func (v *verifier) numberHits(num string) []string {
	var found []string
	// A sign, and a fraction of zeros, write the same integer.
	num = strings.TrimPrefix(num, "-")
	if i := strings.Index(num, "."); i >= 0 && strings.TrimRight(num[i+1:], "0") == "" {
		num = num[:i]
	}
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
	// A number of the North American plan has ten digits after its 1,
	// whose area code and exchange start with 2 to 9: others need no parse.
	var d []rune
	for _, r := range text {
		if r >= '0' && r <= '9' {
			d = append(d, r)
		}
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
