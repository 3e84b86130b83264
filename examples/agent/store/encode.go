package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Junior is JavaScript: its rows are JSON.stringify's text, which escapes
// in a string only quotes, backslashes and control characters. Go's
// encoding/json also writes <, > and & as \u003c, \u003e, \u0026 (and
// U+2028, U+2029 as escapes); in a v2 row's message, which is JSON inside
// a string, those escapes would be stored as they are, and a search for
// "<current-instruction>" would find Junior's rows and not the agent's.
// marshal writes JSON as Junior does.

// marshal is json.Marshal with every string written as JSON.stringify
// writes it.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return plain(b), nil
}

// plain rewrites the strings of valid JSON b as JSON.stringify writes
// them: a \uXXXX escape becomes the character (\u003c, \u00e9, \u2028
// and the like, also those a model's raw tool arguments carry), or the
// escape JSON.stringify writes for it (\", \\, \n, \u0001, a lone
// surrogate's); \/ becomes /.
func plain(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			switch b[i+1] {
			case 'u':
				r, n := unicodeEscape(b[i:])
				out = appendJS(out, r)
				i += n - 1
			case '/':
				out = append(out, '/')
				i++
			default:
				out = append(out, c, b[i+1])
				i++
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// appendJS appends r inside a string as JSON.stringify writes it.
func appendJS(out []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(out, '\\', byte(r))
	case r == '\b':
		return append(out, '\\', 'b')
	case r == '\f':
		return append(out, '\\', 'f')
	case r == '\n':
		return append(out, '\\', 'n')
	case r == '\r':
		return append(out, '\\', 'r')
	case r == '\t':
		return append(out, '\\', 't')
	case r < 0x20 || utf16.IsSurrogate(r):
		return fmt.Appendf(out, "\\u%04x", r)
	}
	return utf8.AppendRune(out, r)
}

// unicodeEscape reads the \uXXXX escape at the start of b, and the low
// half after it when it is a high surrogate; it returns the character
// and the length read.
func unicodeEscape(b []byte) (rune, int) {
	hex := func(b []byte) rune {
		v, _ := strconv.ParseUint(string(b[2:6]), 16, 16)
		return rune(v)
	}
	r := hex(b)
	if utf16.IsSurrogate(r) && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if pair := utf16.DecodeRune(r, hex(b[6:])); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return r, 6
}
