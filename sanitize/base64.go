package sanitize

import (
	"encoding/base64"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tool results carry files as base64 (GitHub's contents API wraps it at
// 60 characters a line). The rewriter decodes such a run, sanitizes the
// text it holds as any other, and encodes the result again in the run's
// alphabet, padding and line length, so the file is written, not refused.
// A run that does not decode to text is left alone; if it hides
// something, the leak check, which decodes base64 with code of its own,
// refuses the document.

// b64Token is a run of base64 in a text that decodes to text.
type b64Token struct {
	start, end int    // in the text, line breaks included
	text       string // decoded
	enc        *base64.Encoding
	wrap       int    // characters a line, 0 for one line
	nl         string // the line break: "\n" or "\r\n"
	trailingNL bool   // the run ends with a line break
}

// minBase64 is the shortest run of base64 the rewrite reads as one: 16
// characters are 12 bytes, a name and a word. The leak check reads
// shorter runs too: a name alone in a shorter one is refused, not
// written.
const minBase64 = 16

func isBase64Byte(c byte) bool {
	return isAlnumByte(c) || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// base64Tokens returns the runs of base64 in s that decode to text.
func base64Tokens(s string) []b64Token {
	if len(s) < minBase64 {
		return nil
	}
	var out []b64Token
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) || i > 0 && isBase64Byte(s[i-1]) {
			i++
			continue
		}
		// A run: base64 characters, and line breaks between lines of them.
		j, n := i, 0
		for j < len(s) {
			k := j
			for k < len(s) && isBase64Byte(s[k]) {
				k++
			}
			n += k - j
			j = k
			if br := lineBreakAt(s, j); br > 0 && j+br < len(s) && isBase64Byte(s[j+br]) && !strings.HasSuffix(s[i:j], "=") {
				j += br
				continue
			}
			break
		}
		if n >= minBase64 {
			if t, ok := decodeBase64Run(s, i, j); ok {
				out = append(out, t)
			}
		}
		i = j
		if i == len(s) || !isBase64Byte(s[i]) {
			i++
		}
	}
	return out
}

func lineBreakAt(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "\r\n"):
		return 2
	case strings.HasPrefix(s[i:], "\n"):
		return 1
	}
	return 0
}

// decodeBase64Run decodes s[start:end] if it is base64 of text, and says
// how to write it again.
func decodeBase64Run(s string, start, end int) (b64Token, bool) {
	run := s[start:end]
	t := b64Token{start: start, end: end, nl: "\n"}
	if strings.Contains(run, "\r\n") {
		t.nl = "\r\n"
	}
	lines := strings.Split(run, t.nl)
	if len(lines) > 1 {
		t.wrap = len(lines[0])
		for _, l := range lines[1 : len(lines)-1] {
			if len(l) != t.wrap {
				return t, false // not one wrapped run: leave it
			}
		}
		if len(lines[len(lines)-1]) > t.wrap {
			return t, false
		}
	}
	// A line break right after the run belongs to its wrapping.
	if br := lineBreakAt(s, end); br > 0 && t.wrap > 0 {
		t.end += br
		t.trailingNL = true
	}
	body := strings.Join(lines, "")
	if !mixedBase64(body) {
		return t, false
	}
	url := strings.ContainsAny(body, "-_")
	if url && strings.ContainsAny(body, "+/") {
		return t, false
	}
	padded := strings.HasSuffix(body, "=")
	switch {
	case url && padded:
		t.enc = base64.URLEncoding
	case url:
		t.enc = base64.RawURLEncoding
	case padded:
		t.enc = base64.StdEncoding
	default:
		t.enc = base64.RawStdEncoding
	}
	if !padded && len(body)%4 == 0 {
		t.enc = map[bool]*base64.Encoding{true: base64.URLEncoding, false: base64.StdEncoding}[url]
	}
	dec, err := t.enc.Strict().DecodeString(body)
	if err != nil || !isText(dec) {
		return t, false
	}
	t.text = string(dec)
	return t, true
}

// mixedBase64 reports whether a run mixes upper and lower case or holds a
// digit, as base64 of text does and a long word does not.
func mixedBase64(s string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		upper = upper || isUpper(c)
		lower = lower || 'a' <= c && c <= 'z'
		digit = digit || isDigit(c)
	}
	return upper && lower || digit && (upper || lower)
}

// isText reports whether b is UTF-8 of which nearly every character is
// printable or white space.
func isText(b []byte) bool {
	if !utf8.Valid(b) || len(b) == 0 {
		return false
	}
	bad, n := 0, 0
	for _, r := range string(b) {
		n++
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			bad++
		}
	}
	return bad*20 <= n
}

// encode writes text as the run was written.
func (t *b64Token) encode(text string) string {
	enc := t.enc.EncodeToString([]byte(text))
	if t.wrap == 0 {
		return enc
	}
	var b strings.Builder
	for i := 0; i < len(enc); i += t.wrap {
		if i > 0 {
			b.WriteString(t.nl)
		}
		b.WriteString(enc[i:min(i+t.wrap, len(enc))])
	}
	if t.trailingNL {
		b.WriteString(t.nl)
	}
	return b.String()
}

// base64Spans returns the replacements of the base64 runs in text whose
// decoded text holds something to replace: each run written again whole.
func (s *Sanitizer) base64Spans(text string, out []span) []span {
	for _, t := range base64Tokens(text) {
		inner := s.textEdits(t.text)
		if len(inner) == 0 {
			continue
		}
		repl := t.encode(string(splice(t.text, inner)))
		out = append(out, span{t.start, t.end, repl, inner[0].kind, "base64"})
	}
	return out
}
