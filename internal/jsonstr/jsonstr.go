// Package jsonstr encodes JSON strings the way JavaScript's JSON.stringify
// and PostgreSQL's jsonb do: only quotes, backslashes and control characters
// are escaped, never <, > or &. Text written this way by agentvcr matches
// the bytes the product wrote, so rewritten files diff cleanly. Escaper
// writes in the other styles encoders use (Go's \u003c, Python's
// \u00e9, PHP's \/), for text spliced into a string another encoder
// wrote.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Append appends s to dst as a JSON string, quotes included. Invalid UTF-8
// becomes U+FFFD.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = Style(0).Append(dst, s)
	return append(dst, '"')
}

// Style is how an encoder escapes the characters JSON lets it write as
// they are. The zero Style escapes none of them.
type Style uint8

// The escapes a Style adds.
const (
	ASCII    Style = 1 << iota // non-ASCII as \uXXXX (Python's json.dumps)
	HTML                       // <, >, & as \u003c... (Go's encoding/json)
	Slash                      // / as \/
	UpperHex                   // \u00E9, not \u00e9
	LineSeps                   // U+2028 and U+2029 as \u2028 (Go)
)

// Append appends s as it stands inside a JSON string of the style, without
// quotes: quotes, backslashes and control characters always escaped, the
// rest as the style says. Invalid UTF-8 becomes U+FFFD.
func (st Style) Append(dst []byte, s string) []byte {
	hexDigits := "0123456789abcdef"
	if st&UpperHex != 0 {
		hexDigits = "0123456789ABCDEF"
	}
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r < 0x20:
			dst = u(dst, r)
		case r == '/' && st&Slash != 0:
			dst = append(dst, '\\', '/')
		case (r == '<' || r == '>' || r == '&') && st&HTML != 0:
			dst = u(dst, r)
		case (r == 0x2028 || r == 0x2029) && st&(LineSeps|HTML|ASCII) != 0:
			dst = u(dst, r)
		case r >= utf8.RuneSelf && st&ASCII != 0:
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				dst = u(u(dst, hi), lo)
			} else {
				dst = u(dst, r)
			}
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}
