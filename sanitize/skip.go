package sanitize

import "strings"

// The learn pass reads every row's top-level fields. gjson would walk each
// row twice (once to find where it ends, once for its fields); these read
// it once, and jump over strings, which are most of a row's bytes, with
// strings.IndexByte.

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string that starts at s[i].
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// skipValue returns the index after the JSON value that starts at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = skipString(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && strings.IndexByte(",}] \n\t\r", s[j]) < 0 {
		j++
	}
	return j
}

// eachField calls fn with the raw key, the raw value and the value's offset
// in s of each field of the JSON object that starts at s[i], and returns
// the index after it. The key is as written, without its quotes (escapes,
// if any, left in).
func eachField(s string, i int, fn func(key, value string, at int)) int {
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '{' {
		return skipValue(s, i)
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == '}' {
			return min(i+1, len(s))
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] != '"' {
			return skipValue(s, i)
		}
		kEnd := skipString(s, i)
		key := s[i+1 : max(kEnd-1, i+1)]
		i = skipSpace(s, kEnd)
		if i < len(s) && s[i] == ':' {
			i = skipSpace(s, i+1)
		}
		vEnd := skipValue(s, i)
		fn(key, s[i:vEnd], i)
		i = vEnd
	}
}

// eachElement calls fn with the offset of each element of the JSON array
// that starts at s[i]; fn returns the offset after the element, as
// eachField and skipValue do, so that each element is read once.
func eachElement(s string, i int, fn func(start int) (end int)) {
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '[' {
		return
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == ']' {
			return
		}
		if s[i] == ',' {
			i++
			continue
		}
		i = max(fn(i), i+1)
	}
}
