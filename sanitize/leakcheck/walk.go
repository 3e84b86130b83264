package leakcheck

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The leak check reads JSON with a scanner of its own, written apart from
// the rewrite's walker (jsonwalk.go): one pass over a document validates
// it as encoding/json does (RFC 8259, at most 10,000 levels), decodes
// every string and key, and walks the strings that are JSON documents
// themselves, at any depth. Nothing is read twice but a string that looks
// like a document, which is validated before it is walked as one.

// maxDepth is encoding/json's limit of nesting: a deeper document is not
// valid for it, so not for the leak check.
const maxDepth = 10000

// leakWalk is one walk of a document and the documents nested in its
// strings. The hooks that are set are called in document order; text
// handed to leaf is valid during the call only.
type leakWalk struct {
	// leaf gets every string that is no document (decoded), every number
	// (as written) and every object key.
	leaf func(w *leakWalk, text string, number, key bool)
	// nested is told of every string that is a JSON document, before it
	// is walked.
	nested func(w *leakWalk)
	// rowStart and rowEnd bracket each element of the top-level events
	// array; seq and rowType are known at rowEnd (a row may list its seq
	// after its payload).
	rowStart, rowEnd func(w *leakWalk)
	// objectStart and objectEnd bracket every object.
	objectStart, objectEnd func(w *leakWalk)

	path    []string // keys, [#] and >, decoded
	level   int      // documents nested in strings around the walk
	inRow   bool
	seq     int64
	rowType string
	depth   int
	scratch [][]byte        // by level: a level's strings are decoded into its own
	sig     nestedSignature // of the string values walked
}

// walkDoc walks the JSON document doc and reports whether it is valid.
func (w *leakWalk) walkDoc(doc string) bool {
	w.depth = 0
	i, ok := w.value(doc, skipWS(doc, 0))
	return ok && skipWS(doc, i) == len(doc)
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

func (w *leakWalk) value(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '{':
		return w.object(s, i)
	case c == '[':
		return w.array(s, i)
	case c == '"':
		if w.leaf == nil && !mayBeDocument(s, i+1) {
			w.sig.add(false)
			return passString(s, i)
		}
		end, text, ok := w.str(s, i)
		if !ok {
			return end, false
		}
		w.stringValue(text)
		return end, true
	case c == '-' || '0' <= c && c <= '9':
		end, ok := numberEnd(s, i)
		if ok && w.leaf != nil {
			w.leaf(w, s[i:end], true, false)
		}
		return end, ok
	case strings.HasPrefix(s[i:], "true"):
		return i + 4, true
	case strings.HasPrefix(s[i:], "false"):
		return i + 5, true
	case strings.HasPrefix(s[i:], "null"):
		return i + 4, true
	}
	return i, false
}

// mayBeDocument reports whether the string whose body starts at s[i] may
// hold a JSON document: after white space (raw or escaped), a { or [, or
// an escape or a character that is not ASCII (a space of Unicode, or an
// escaped bracket).
func mayBeDocument(s string, i int) bool {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ', c == '\t', c == '\n', c == '\r':
			i++
		case c == '\\' && i+1 < len(s) && strings.IndexByte("ntrf", s[i+1]) >= 0:
			i += 2
		case c == '{', c == '[', c == '\\', c >= utf8.RuneSelf:
			return true
		default:
			return false
		}
	}
	return false
}

// stringValue hands a decoded string to leaf, or walks it as the document
// it is.
func (w *leakWalk) stringValue(text string) {
	t := strings.TrimSpace(text)
	nested := len(t) > 1 && (t[0] == '{' || t[0] == '[') && validJSON(t)
	w.sig.add(nested)
	if nested {
		if w.nested != nil {
			w.nested(w)
		}
		depth := w.depth
		w.path = append(w.path, ">")
		w.level++
		w.depth = 0
		w.value(t, skipWS(t, 0))
		w.depth = depth
		w.level--
		w.path = w.path[:len(w.path)-1]
		return
	}
	if w.leaf != nil {
		w.leaf(w, text, false, false)
	}
}

func (w *leakWalk) object(s string, i int) (int, bool) {
	if w.depth++; w.depth > maxDepth {
		return i, false
	}
	if w.objectStart != nil {
		w.objectStart(w)
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		w.depth--
		if w.objectEnd != nil {
			w.objectEnd(w)
		}
		return i + 1, true
	}
	row := w.inRow && w.level == 0 && len(w.path) == 2
	for {
		if i >= len(s) || s[i] != '"' {
			return i, false
		}
		end, key, ok := w.str(s, i)
		if !ok {
			return end, false
		}
		if end-i-2 != len(key) || unsafe.StringData(key) != unsafe.StringData(s[i+1:]) {
			key = strings.Clone(key) // decoded into the scratch buffer
		}
		w.path = append(w.path, key)
		if w.leaf != nil {
			w.leaf(w, key, false, true)
		}
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return i, false
		}
		start := skipWS(s, i+1)
		if i, ok = w.value(s, start); !ok {
			return i, false
		}
		if row {
			w.rowField(key, s[start:i])
		}
		w.path = w.path[:len(w.path)-1]
		i = skipWS(s, i)
		if i >= len(s) {
			return i, false
		}
		if s[i] == '}' {
			w.depth--
			if w.objectEnd != nil {
				w.objectEnd(w)
			}
			return i + 1, true
		}
		if s[i] != ',' {
			return i, false
		}
		i = skipWS(s, i+1)
	}
}

// rowField reads a row's seq and type as gjson would: a number or a
// string of one, truncated; a string.
func (w *leakWalk) rowField(key, raw string) {
	switch key {
	case "seq":
		v := raw
		if strings.HasPrefix(raw, `"`) {
			v, _ = strconv.Unquote(raw)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			w.seq = n
		} else if f, err := strconv.ParseFloat(v, 64); err == nil {
			w.seq = int64(f)
		}
	case "type":
		if strings.HasPrefix(raw, `"`) {
			_, text, _ := w.str(raw, 0)
			w.rowType = strings.Clone(text)
		}
	}
}

func (w *leakWalk) array(s string, i int) (int, bool) {
	if w.depth++; w.depth > maxDepth {
		return i, false
	}
	rows := w.level == 0 && !w.inRow && len(w.path) == 1 && w.path[0] == "events"
	w.path = append(w.path, "[#]")
	defer func() { w.path = w.path[:len(w.path)-1] }()
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		w.depth--
		return i + 1, true
	}
	for {
		if rows {
			w.inRow, w.seq, w.rowType = true, 0, ""
			if w.rowStart != nil {
				w.rowStart(w)
			}
		}
		var ok bool
		i, ok = w.value(s, i)
		if rows {
			if ok && w.rowEnd != nil {
				w.rowEnd(w)
			}
			w.inRow, w.seq, w.rowType = false, -1, ""
		}
		if !ok {
			return i, false
		}
		i = skipWS(s, i)
		if i >= len(s) {
			return i, false
		}
		if s[i] == ']' {
			w.depth--
			return i + 1, true
		}
		if s[i] != ',' {
			return i, false
		}
		i = skipWS(s, i+1)
	}
}

// strSafe marks the bytes a string can hold as they are: not a quote, a
// backslash or a control character.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string token at s[i] and returns where it ends and its
// text: a substring of s when it has no escape, else decoded into the
// scratch buffer of its level (valid until the next string of the level is
// read).
func (w *leakWalk) str(s string, i int) (int, string, bool) {
	j := i + 1
	for j < len(s) && strSafe[s[j]] {
		j++
	}
	if j < len(s) && s[j] == '"' {
		return j + 1, s[i+1 : j], true
	}
	for len(w.scratch) <= w.level {
		w.scratch = append(w.scratch, nil)
	}
	b := append(w.scratch[w.level][:0], s[i+1:j]...)
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			w.scratch[w.level] = b
			return j + 1, unsafe.String(unsafe.SliceData(b), len(b)), true
		case c < 0x20:
			return j, "", false
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(s) {
			return j, "", false
		}
		switch e := s[j+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4At(s, j+2)
			if !ok {
				return j, "", false
			}
			j += 6
			if utf16.IsSurrogate(r) {
				// As encoding/json decodes: a pair makes one character, a
				// lone half is U+FFFD.
				if r2, ok := hex4At(s, j+2); ok && j+1 < len(s) && s[j] == '\\' && s[j+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						b = utf8.AppendRune(b, d)
						j += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return j, "", false
		}
		j += 2
	}
	w.scratch[w.level] = b
	return j, "", false
}

func hex4At(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// numberEnd returns where the number at s[i] ends: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?.
func numberEnd(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// validJSON reports whether s is one JSON document, as json.Valid does,
// without decoding it.
func validJSON(s string) bool {
	depth := 0
	i, ok := passValue(s, skipWS(s, 0), &depth)
	return ok && skipWS(s, i) == len(s)
}

func passValue(s string, i int, depth *int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '{', c == '[':
		if *depth++; *depth > maxDepth {
			return i, false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == closing {
			*depth--
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return i, false
				}
				if i, ok = passString(s, i); !ok {
					return i, false
				}
				if i = skipWS(s, i); i >= len(s) || s[i] != ':' {
					return i, false
				}
				i = skipWS(s, i+1)
			}
			if i, ok = passValue(s, i, depth); !ok {
				return i, false
			}
			if i = skipWS(s, i); i >= len(s) {
				return i, false
			}
			if s[i] == closing {
				*depth--
				return i + 1, true
			}
			if s[i] != ',' {
				return i, false
			}
			i = skipWS(s, i+1)
		}
	case c == '"':
		return passString(s, i)
	case c == '-' || '0' <= c && c <= '9':
		return numberEnd(s, i)
	case strings.HasPrefix(s[i:], "true"):
		return i + 4, true
	case strings.HasPrefix(s[i:], "false"):
		return i + 5, true
	case strings.HasPrefix(s[i:], "null"):
		return i + 4, true
	}
	return i, false
}

func passString(s string, i int) (int, bool) {
	j := i + 1
	for j < len(s) {
		for j < len(s) && strSafe[s[j]] {
			j++
		}
		if j >= len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		}
		if j+1 >= len(s) {
			return j, false
		}
		switch s[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if _, ok := hex4At(s, j+2); !ok {
				return j, false
			}
			j += 6
		default:
			return j, false
		}
	}
	return j, false
}
