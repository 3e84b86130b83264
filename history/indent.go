package history

import (
	"bytes"
	"encoding/json"
)

// json.Indent checks and re-indents a payload with encoding/json's scanner,
// a function call per byte, and into a bytes.Buffer of its own: most of
// the cost of writing a row. appendIndent does the same in one pass with
// the scanner of rows.go, straight into the row being built. It takes only
// what it is sure of; anything else (a syntax error, a document nested
// deeper than maxIndentDepth) is left to json.Indent, so that every
// payload is written, and fails, exactly as it was.

// maxIndentDepth is how deep appendIndent follows a payload; deeper ones
// go to json.Indent, which knows its own limit.
const maxIndentDepth = 64

// appendIndent appends src to dst as json.Indent(src, prefix, indent)
// writes it, and reports whether it did: false means src is not a valid
// JSON value, or nests too deep, and dst is returned unchanged.
func appendIndent(dst, src []byte, prefix, indent string) ([]byte, bool) {
	orig := len(dst)
	// closing holds the closing bracket of each open object or array.
	var closing [maxIndentDepth]byte
	depth := 0
	i := space(src, 0)
	for {
		// A value is next.
		if i >= len(src) {
			return dst[:orig], false
		}
		switch c := src[i]; c {
		case '{', '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			j := space(src, i+1)
			if j < len(src) && src[j] == end {
				dst = append(dst, c, end)
				i = j + 1
				break
			}
			if depth == maxIndentDepth {
				return dst[:orig], false
			}
			closing[depth] = end
			depth++
			dst = append(dst, c)
			dst = newline(dst, prefix, indent, depth)
			i = j
			if c == '{' {
				var ok bool
				if dst, i, ok = appendKey(dst, src, i); !ok {
					return dst[:orig], false
				}
			}
			continue
		default:
			j, ok := scanScalar(src, i)
			if !ok {
				return dst[:orig], false
			}
			dst = append(dst, src[i:j]...)
			i = j
		}
		// A value ended: a comma, closing brackets, or the end is next.
		for {
			j := space(src, i)
			if depth == 0 {
				if j < len(src) {
					return dst[:orig], false
				}
				// json.Indent keeps white space after the value.
				return append(dst, src[i:]...), true
			}
			if j >= len(src) {
				return dst[:orig], false
			}
			if src[j] == closing[depth-1] {
				depth--
				dst = newline(dst, prefix, indent, depth)
				dst = append(dst, src[j])
				i = j + 1
				continue
			}
			if src[j] != ',' {
				return dst[:orig], false
			}
			dst = append(dst, ',')
			dst = newline(dst, prefix, indent, depth)
			i = space(src, j+1)
			if closing[depth-1] == '}' {
				var ok bool
				if dst, i, ok = appendKey(dst, src, i); !ok {
					return dst[:orig], false
				}
			}
			break
		}
	}
}

// appendKey appends the key at src[i] and its colon, and returns where its
// value starts.
func appendKey(dst, src []byte, i int) ([]byte, int, bool) {
	if i >= len(src) || src[i] != '"' {
		return dst, i, false
	}
	j, ok := scanString(src, i)
	if !ok {
		return dst, i, false
	}
	dst = append(dst, src[i:j]...)
	if j = space(src, j); j >= len(src) || src[j] != ':' {
		return dst, i, false
	}
	return append(dst, ':', ' '), space(src, j+1), true
}

// scanScalar returns the end of the string, number or literal at src[i],
// and whether it is valid.
func scanScalar(src []byte, i int) (int, bool) {
	switch c := src[i]; {
	case c == '"':
		return scanString(src, i)
	case c == '-' || '0' <= c && c <= '9':
		// A number that ends the input (a payload is no bare number) is
		// left to json.Indent: scanNumber wants a byte after it.
		return scanNumber(src, i)
	case c == 't':
		return literal(src, i, "true")
	case c == 'f':
		return literal(src, i, "false")
	case c == 'n':
		return literal(src, i, "null")
	}
	return i, false
}

func newline(dst []byte, prefix, indent string, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, prefix...)
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}

// indentPayload appends the payload to dst indented as a row's field;
// a payload that is not valid JSON gets json.Indent's error.
func indentPayload(dst, payload []byte) ([]byte, error) {
	const prefix, indent = "      ", "  "
	if b, ok := appendIndent(dst, payload, prefix, indent); ok {
		return b, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, payload, prefix, indent); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}
