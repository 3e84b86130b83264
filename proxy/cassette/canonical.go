package cassette

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// canon writes the canonical text of JSON bodies: byte for byte what
// encoding/json writes (object keys sorted, no HTML escaping) of the value
// its Decoder decodes from the body into an any, with UseNumber. Keys were
// first taken of that text, and cassettes store them, so it must not
// change; canon reaches it without decoding the body, in two passes: one
// reads the body into tokens (spans of it), the other writes the tokens
// out, each object's members in key order, copying runs of the body that
// need no change. Decoding the body and encoding it again cost a map per
// object and a string per value.
//
// A canon is reused through canonPool: its buffers grow to the largest
// body it has written.
type canon struct {
	// out holds the parts' text; parts are their spans.
	out   []byte
	parts []span
	// The other buffers are tokens' and writer's, kept for the next body.
	toks    []token
	open    []int
	members []member
	tmp     []byte
	// vals are where changing values are replaced (see replace).
	vals [2][]byte
}

// token is a value of the body: a scalar, or an object or array and then
// the tokens of its members or items. The value of an object's member
// holds the member's key too.
type token struct {
	// start and end are its span in src; for an object or array, from
	// its bracket to after the closing one.
	start, end int
	// next is the index of the token after it and its members or items.
	next int
	// keyStart and keyEnd are the span of its key, for a member's value.
	keyStart, keyEnd int
	// kind is '{', '[', '"' for a string, and '0' for any other scalar,
	// which is written as it is.
	kind byte
	// verbatim and plain are scanString's, for strings; keyVerbatim and
	// keyPlain for its key.
	verbatim, plain, keyVerbatim, keyPlain bool
}

// writer writes the tokens of a body. It lives on the stack, where
// setting its buffers costs no write barrier: garbage collection runs
// often while keys are taken, each leaving a long string behind.
type writer struct {
	src  string
	toks []token
	out  []byte
	// src[run:runEnd] is written next, unless what follows in src
	// follows in out too: then the run grows.
	run, runEnd int
	// members is a stack: the members of the objects being written.
	members []member
	// decoded are the keys that are not plain, decoded.
	decoded []string
	tmp     []byte
	parts   []span
}

// member is a member of an object; it holds no pointer, for the same
// reason as writer.
type member struct {
	start, end int // its key's text in src, if plain
	tok        int // its value's token
	decoded    int // else the key's index in writer.decoded; -1 if plain
}

// span is one part of a body in out: its name (empty for "body") and
// value.
type span struct {
	nameStart, nameEnd int
	start, end         int
}

// maxDepth is the nesting encoding/json's decoder accepts.
const maxDepth = 10000

// parse writes the canonical text of each part of the body t, trimmed
// and not empty, into c.out and reports whether t is JSON as keys have
// always taken it: one value, followed by nothing but white space, or by
// a ']' or '}' (where json.Decoder.More says there is no more). A
// top-level object is a part per member, in key order, and a top-level
// array one per item; any other value is one part.
func (c *canon) parse(t string) bool {
	c.parts = c.parts[:0]
	var end int
	c.toks, c.open, end = tokens(t, c.toks[:0], c.open[:0])
	if end < 0 {
		return false
	}
	if end = skipSpace(t, end); end < len(t) && t[end] != ']' && t[end] != '}' {
		return false
	}
	w := writer{src: t, toks: c.toks, out: c.out[:0], members: c.members[:0], tmp: c.tmp[:0], parts: c.parts[:0]}
	w.body()
	c.out, c.members, c.tmp, c.parts = w.out, w.members, w.tmp, w.parts
	return true
}

// body writes the parts of the body.
func (w *writer) body() {
	switch top := w.toks[0]; top.kind {
	case '{':
		ms, dup := w.sortedMembers(0)
		for k, m := range ms {
			if !w.dropped(ms, k, dup) {
				w.part(m.tok)
			}
		}
		n := 0
		for k, m := range ms {
			if w.dropped(ms, k, dup) {
				continue
			}
			p := &w.parts[n]
			p.nameStart = len(w.out)
			w.out = append(append(w.out, "body."...), w.key(m)...)
			p.nameEnd = len(w.out)
			n++
		}
	case '[':
		for i := 1; i < top.next; i = w.toks[i].next {
			w.part(i)
		}
		for k := range w.parts {
			p := &w.parts[k]
			p.nameStart = len(w.out)
			w.out = append(strconv.AppendInt(append(w.out, "body["...), int64(k), 10), ']')
			p.nameEnd = len(w.out)
		}
	default:
		w.part(0)
	}
}

// part writes the value of token k as a part.
func (w *writer) part(k int) {
	start := len(w.out)
	w.write(k)
	w.flush()
	w.parts = append(w.parts, span{start: start, end: len(w.out)})
}

// write writes the value of token k, and returns the index of the token
// after it.
func (w *writer) write(k int) int {
	t := w.toks[k]
	switch t.kind {
	case '"':
		if !t.verbatim {
			w.quote(t.start, t.end)
			break
		}
		w.copy(t.start, t.end)
	case '0':
		w.copy(t.start, t.end)
	case '[':
		w.copy(t.start, t.start+1)
		for i := k + 1; i < t.next; {
			v := w.toks[i]
			if i > k+1 {
				w.punct(',', v.start-1)
			}
			if v.kind == '0' || v.kind == '"' && v.verbatim {
				w.copy(v.start, v.end)
				i++
			} else {
				i = w.write(i)
			}
		}
		w.copy(t.end-1, t.end)
	case '{':
		base := len(w.members)
		ms, dup := w.sortedMembers(k)
		w.copy(t.start, t.start+1)
		after := -1 // where the last member written ends in src
		for j, m := range ms {
			if w.dropped(ms, j, dup) {
				continue
			}
			if after >= 0 {
				w.punct(',', after)
			}
			v := w.toks[m.tok]
			if v.keyVerbatim {
				w.copy(v.keyStart, v.keyEnd)
			} else {
				w.quote(v.keyStart, v.keyEnd)
			}
			w.punct(':', v.keyEnd)
			if v.kind == '0' || v.kind == '"' && v.verbatim {
				w.copy(v.start, v.end)
			} else {
				w.write(m.tok)
			}
			after = v.end
		}
		w.copy(t.end-1, t.end)
		w.members = w.members[:base]
	}
	return t.next
}

// quote writes the string src[start:end], decoded and encoded again.
func (w *writer) quote(start, end int) {
	w.flush()
	w.tmp = unquote(w.tmp[:0], w.src[start+1:end-1])
	w.out = appendQuoted(w.out, w.tmp)
}

// key returns the key of m, decoded.
func (w *writer) key(m member) string {
	if m.decoded >= 0 {
		return w.decoded[m.decoded]
	}
	return w.src[m.start:m.end]
}

// sortedMembers pushes the members of the object of token k on
// w.members and returns them, in key order, as encoding/json sorts map
// keys, members of one key in their order; and whether two have one key.
func (w *writer) sortedMembers(k int) (ms []member, dup bool) {
	base := len(w.members)
	for i := k + 1; i < w.toks[k].next; i = w.toks[i].next {
		v := w.toks[i]
		m := member{start: v.keyStart + 1, end: v.keyEnd - 1, tok: i, decoded: -1}
		if !v.keyPlain {
			w.tmp = unquote(w.tmp[:0], w.src[m.start:m.end])
			m.decoded = len(w.decoded)
			w.decoded = append(w.decoded, string(w.tmp))
		}
		w.members = append(w.members, m)
	}
	ms = w.members[base:]
	for k := 1; k < len(ms); k++ {
		if w.less(ms[k-1], ms[k]) {
			continue
		}
		if len(ms) > 12 {
			slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(w.key(a), w.key(b)) })
		} else {
			for k := 1; k < len(ms); k++ {
				for j := k; j > 0 && w.less(ms[j], ms[j-1]); j-- {
					ms[j], ms[j-1] = ms[j-1], ms[j]
				}
			}
		}
		for k := 1; k < len(ms) && !dup; k++ {
			dup = w.key(ms[k-1]) == w.key(ms[k])
		}
		break
	}
	return ms, dup
}

// dropped reports whether the member ms[j] of an object is dropped for a
// later member of its key, as decoding into a map keeps the last.
func (w *writer) dropped(ms []member, j int, dup bool) bool {
	return dup && j+1 < len(ms) && w.key(ms[j+1]) == w.key(ms[j])
}

// less reports whether a's key sorts before b's, without a call where
// the first bytes differ.
func (w *writer) less(a, b member) bool {
	if a.decoded < 0 && b.decoded < 0 && a.start < a.end && b.start < b.end && w.src[a.start] != w.src[b.start] {
		return w.src[a.start] < w.src[b.start]
	}
	return w.key(a) < w.key(b)
}

// copy writes src[start:end], joining it to the run of src to write if it
// follows it there.
func (w *writer) copy(start, end int) {
	if start != w.runEnd {
		w.flush()
		w.run = start
	}
	w.runEnd = end
}

// punct writes the punctuation b, from src[at] if it is there (where it
// joins the run), else as it is.
func (w *writer) punct(b byte, at int) {
	if at < len(w.src) && w.src[at] == b {
		w.copy(at, at+1)
		return
	}
	w.flush()
	w.out = append(w.out, b)
}

// flush writes the run.
func (w *writer) flush() {
	w.out = append(w.out, w.src[w.run:w.runEnd]...)
	w.run = w.runEnd
}

// tokens appends the tokens of the value s starts with to toks, and
// returns them and the index after the value, or -1 if s does not start
// with a JSON value. open is scratch: a stack of the objects and arrays
// being read.
func tokens(s string, toks []token, open []int) ([]token, []int, int) {
	i := 0
	key := false // the next value is an object's member: a key, then a colon, first
	for {
		var t token
		if key {
			if i >= len(s) || s[i] != '"' {
				return toks, open, -1
			}
			end, verbatim, plain := scanString(s, i)
			if end < 0 {
				return toks, open, -1
			}
			t.keyStart, t.keyEnd, t.keyVerbatim, t.keyPlain = i, end, verbatim, plain
			if i = skipSpace(s, end); i >= len(s) || s[i] != ':' {
				return toks, open, -1
			}
			i = skipSpace(s, i+1)
		}
		if i >= len(s) {
			return toks, open, -1
		}
		k := len(toks)
		t.start, t.next = i, k+1
		switch b := s[i]; {
		case b == '"':
			end, verbatim, plain := scanString(s, i)
			if end < 0 {
				return toks, open, -1
			}
			t.end, t.kind, t.verbatim, t.plain = end, '"', verbatim, plain
			toks = append(toks, t)
			i = end
		case b == '{' || b == '[':
			if len(open) == maxDepth {
				return toks, open, -1
			}
			open = append(open, k)
			t.kind = b
			toks = append(toks, t)
			i = skipSpace(s, i+1)
			if i < len(s) && s[i] == b+2 { // '}' and ']' follow '{' and '[' by 2
				break // an empty one: closed below
			}
			key = b == '{'
			continue
		case b == '-' || '0' <= b && b <= '9':
			end := scanNumber(s, i)
			if end < 0 {
				return toks, open, -1
			}
			// encoding/json keeps a json.Number's text.
			t.end, t.kind = end, '0'
			toks = append(toks, t)
			i = end
		default:
			n := literal(s[i:])
			if n == 0 {
				return toks, open, -1
			}
			t.end, t.kind = i+n, '0'
			toks = append(toks, t)
			i += n
		}
		// A value has been read: close what it ends, and go on to the
		// next value, if any.
		for {
			if len(open) == 0 {
				return toks, open, i
			}
			if i = skipSpace(s, i); i >= len(s) {
				return toks, open, -1
			}
			t := &toks[open[len(open)-1]]
			if s[i] == t.kind+2 {
				i++
				t.end, t.next = i, len(toks)
				open = open[:len(open)-1]
				continue
			}
			if s[i] != ',' {
				return toks, open, -1
			}
			i = skipSpace(s, i+1)
			key = t.kind == '{'
			break
		}
	}
}

// literal returns the length of the true, false or null s starts with, or
// 0.
func literal(s string) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(s, lit) {
			return len(lit)
		}
	}
	return 0
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanNumber returns the index after the JSON number at s[i], or -1.
func scanNumber(s string, i int) int {
	if s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return -1
	case s[i] == '0':
		i++
	case '1' <= s[i] && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		if i++; i >= len(s) || !isDigit(s[i]) {
			return -1
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return -1
		}
		i = digits(s, i)
	}
	return i
}

func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 returns the 8 bytes of w, little end first.
func load64(w string) uint64 {
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// scanString reads the JSON string at s[i] == '"'. It returns the index
// after its closing quote, or -1 if it is not a JSON string; whether it
// is verbatim, already as encoding/json would encode what it decodes to;
// and whether it is plain, its raw text being what it decodes to.
func scanString(s string, i int) (end int, verbatim, plain bool) {
	verbatim, plain = true, true
	j := i + 1
	for {
		// Eight bytes at a time, to the first that is a quote, a
		// backslash, a control character or not ASCII: m has the high
		// bit set in that byte (and maybe in those above it).
		for j+8 <= len(s) {
			x := load64(s[j : j+8])
			q, b := x^('"'*ones), x^('\\'*ones)
			if m := (x | (x - ' '*ones) | (q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		if j >= len(s) {
			return -1, false, false
		}
		switch b := s[j]; {
		case b == '"':
			return j + 1, verbatim, plain
		case b == '\\':
			plain = false
			if j+1 >= len(s) {
				return -1, false, false
			}
			switch s[j+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				// Decoded and encoded again, these escapes are themselves.
				j += 2
			case '/':
				verbatim = false
				j += 2
			case 'u':
				if j+6 > len(s) || hex4(s[j+2:j+6]) < 0 {
					return -1, false, false
				}
				verbatim = false
				j += 6
			default:
				return -1, false, false
			}
		case b < ' ':
			return -1, false, false
		case b < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				verbatim, plain = false, false
			} else if r == '\u2028' || r == '\u2029' {
				verbatim = false
			}
			j += size
		}
	}
}

// hex4 returns the value of 4 hex digits, or -1.
func hex4(s string) rune {
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote appends what the text of a JSON string (scanString accepted it)
// decodes to, as encoding/json decodes it: a surrogate escape that is not
// the first of a pair, and each byte that is not UTF-8, stand as U+FFFD.
func unquote(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		switch b := s[i]; {
		case b == '\\':
			switch e := s[i+1]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			i += 2
		case b < utf8.RuneSelf:
			dst = append(dst, b)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst
}

// appendQuoted appends s, valid UTF-8, as encoding/json encodes a string
// when it does not escape HTML.
func appendQuoted(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
				start = i + size
			}
			i += size
			continue
		}
		if b >= ' ' && b != '"' && b != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
