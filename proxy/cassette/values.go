package cassette

import (
	"bytes"
	"regexp"
)

// values returns s with its changing values replaced by <<name>>, as
// replace does.
func (c *canon) values(vs []Value, s string) string {
	c.vals[0] = append(c.vals[0][:0], s...)
	out, changed := c.replace(vs, c.vals[0], 0)
	if !changed {
		return s
	}
	return string(out)
}

// replace replaces the changing values of b by <<name>>, in the order of
// vs: a value matches in what the values before it left, and so at one
// place the first value that matches wins. It writes in c.vals, and
// returns b itself if no value matches; in says which of c.vals holds b,
// or is -1.
func (c *canon) replace(vs []Value, b []byte, in int) (out []byte, changed bool) {
	for _, v := range vs {
		to := 0
		if in == 0 {
			to = 1
		}
		if find := finder(v.Re); find != nil {
			start, end := find(b, 0)
			if start < 0 {
				continue
			}
			dst := c.vals[to][:0]
			for last := 0; ; start, end = find(b, end) {
				if start < 0 {
					dst = append(dst, b[last:]...)
					break
				}
				dst = append(append(append(append(dst, b[last:start]...), "<<"...), v.Name...), ">>"...)
				last = end
			}
			b, c.vals[to], in = dst, dst, to
		} else {
			if v.Hint != nil && !v.Hint(string(b)) || !v.Re.Match(b) {
				continue
			}
			b, in = v.Re.ReplaceAllLiteral(b, []byte("<<"+v.Name+">>")), -1
		}
		changed = true
	}
	return b, changed
}

// A finder returns the leftmost match at or after from in b of one of the
// expressions of DefaultValues, as the expression finds it, or -1, -1.
// A finder costs a pass of bytes.IndexByte over b, where the expression,
// which has no literal text to look for, steps through b a character at
// a time: most of the cost of the key of a long body.
type finderFunc func(b []byte, from int) (start, end int)

// finder returns the finder of an expression, or nil.
func finder(re *regexp.Regexp) finderFunc {
	switch re.String() {
	case uuidExpr:
		return findUUID
	case timeExpr:
		return findTime
	case epochMsExpr:
		return findEpochMs
	}
	return nil
}

// findUUID finds uuidExpr by its first dash.
func findUUID(b []byte, from int) (int, int) {
	for i := from + 8; i < len(b); {
		d := bytes.IndexByte(b[i:], '-')
		if d < 0 {
			break
		}
		d += i
		if p := d - 8; p+36 <= len(b) && isHex(b[p:p+8]) && isHex(b[p+9:p+13]) && b[p+13] == '-' &&
			isHex(b[p+14:p+18]) && b[p+18] == '-' && isHex(b[p+19:p+23]) && b[p+23] == '-' && isHex(b[p+24:p+36]) {
			return p, p + 36
		}
		i = d + 1
	}
	return -1, -1
}

// findTime finds timeExpr by its T. Of the optional parts, the expression
// takes the longest fraction and then a zone if one follows.
func findTime(b []byte, from int) (int, int) {
	for i := from + 10; i < len(b); {
		t := bytes.IndexByte(b[i:], 'T')
		if t < 0 {
			break
		}
		t += i
		if p := t - 10; t+9 <= len(b) && isDigits(b[p:p+4]) && b[p+4] == '-' && isDigits(b[p+5:p+7]) && b[p+7] == '-' &&
			isDigits(b[p+8:t]) && isDigits(b[t+1:t+3]) && b[t+3] == ':' && isDigits(b[t+4:t+6]) && b[t+6] == ':' && isDigits(b[t+7:t+9]) {
			end := t + 9
			if end+1 < len(b) && b[end] == '.' && isDigit(b[end+1]) {
				end += 2
				for end < len(b) && isDigit(b[end]) {
					end++
				}
			}
			switch {
			case end < len(b) && b[end] == 'Z':
				end++
			case end+3 <= len(b) && (b[end] == '+' || b[end] == '-') && isDigits(b[end+1:end+3]):
				if end+6 <= len(b) && b[end+3] == ':' && isDigits(b[end+4:end+6]) {
					end += 6
				} else if end+5 <= len(b) && isDigits(b[end+3:end+5]) {
					end += 5
				}
			}
			return p, end
		}
		i = t + 1
	}
	return -1, -1
}

// findEpochMs finds epochMsExpr by its first digit.
func findEpochMs(b []byte, from int) (int, int) {
	for i := from; i < len(b); {
		p := bytes.IndexByte(b[i:], '1')
		if p < 0 {
			break
		}
		p += i
		if p+13 <= len(b) && (p == 0 || !isWordChar(b[p-1])) && '5' <= b[p+1] && b[p+1] <= '9' &&
			isDigits(b[p+2:p+13]) && (p+13 == len(b) || !isWordChar(b[p+13])) {
			return p, p + 13
		}
		i = p + 1
	}
	return -1, -1
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isWordChar reports whether c is a word character of \b: ASCII letters,
// digits and underscore. A byte of a longer UTF-8 sequence is not.
func isWordChar(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}
