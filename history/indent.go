package history

import (
	"bytes"
	"encoding/json"
)

// appendIndent appends src to dst indented as json.Indent(dst, src,
// prefix, indent) indents it, byte for byte, and returns an error exactly
// when json.Indent does, with its message.
//
// An export re-indents every payload it writes, and json.Indent's
// byte-at-a-time scanner was half of its time; this reads a string, the
// bulk of a payload, a run of plain bytes at a time. Whatever it does not
// take as valid, json.Indent does again, for its error: the two never
// differ on what they write (FuzzAppendIndent).
func appendIndent(dst, src []byte, prefix, indent string) ([]byte, error) {
	in := indenter{src: src, dst: dst, prefix: prefix, indent: indent}
	if in.document() {
		return in.dst, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, src, prefix, indent); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// maxDepth is json's own limit on nesting; past it, json.Indent fails.
const maxDepth = 10000

type indenter struct {
	src            []byte
	i              int
	dst            []byte
	prefix, indent string
	depth          int
}

// document reads one value between optional whitespace: leading
// whitespace is dropped and trailing whitespace kept, as json.Indent does.
func (in *indenter) document() bool {
	in.space()
	if !in.value() {
		return false
	}
	end := in.i
	in.space()
	if in.i != len(in.src) {
		return false
	}
	in.dst = append(in.dst, in.src[end:]...)
	return true
}

func (in *indenter) space() { in.i = space(in.src, in.i) }

func (in *indenter) newline() {
	in.dst = append(in.dst, '\n')
	in.dst = append(in.dst, in.prefix...)
	for range in.depth {
		in.dst = append(in.dst, in.indent...)
	}
}

func (in *indenter) value() bool {
	if in.i >= len(in.src) {
		return false
	}
	switch c := in.src[in.i]; {
	case c == '{':
		return in.container('}', true)
	case c == '[':
		return in.container(']', false)
	case c == '"':
		return in.str()
	case c == '-' || '0' <= c && c <= '9':
		return in.number()
	case c == 't':
		return in.literal("true")
	case c == 'f':
		return in.literal("false")
	case c == 'n':
		return in.literal("null")
	}
	return false
}

// container reads an object (members) or an array, its opening byte at
// in.i. An empty one is written {} or [], whatever space is inside.
func (in *indenter) container(end byte, members bool) bool {
	if in.depth+1 > maxDepth {
		return false
	}
	in.dst = append(in.dst, in.src[in.i])
	in.i++
	in.space()
	if in.i < len(in.src) && in.src[in.i] == end {
		in.dst = append(in.dst, end)
		in.i++
		return true
	}
	in.depth++
	for {
		in.newline()
		if members {
			if in.i >= len(in.src) || in.src[in.i] != '"' || !in.str() {
				return false
			}
			in.space()
			if in.i >= len(in.src) || in.src[in.i] != ':' {
				return false
			}
			in.i++
			in.dst = append(in.dst, ':', ' ')
			in.space()
		}
		if !in.value() {
			return false
		}
		in.space()
		if in.i >= len(in.src) {
			return false
		}
		switch in.src[in.i] {
		case ',':
			in.i++
			in.dst = append(in.dst, ',')
			in.space()
			continue
		case end:
			in.i++
			in.depth--
			in.newline()
			in.dst = append(in.dst, end)
			return true
		}
		return false
	}
}

// str, number and literal copy a string (its escapes as they are), a
// number or a literal as they are, once scanned as a payload's rows are.
func (in *indenter) str() bool                { return in.copied(scanString(in.src, in.i)) }
func (in *indenter) number() bool             { return in.copied(scanNumber(in.src, in.i)) }
func (in *indenter) literal(word string) bool { return in.copied(literal(in.src, in.i, word)) }

func (in *indenter) copied(end int, ok bool) bool {
	if !ok {
		return false
	}
	in.dst = append(in.dst, in.src[in.i:end]...)
	in.i = end
	return true
}
