package sanitize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/jsonstr"
)

// The rewriter reads a document decode first: every string is decoded
// completely, a string that is itself a JSON document is read as one, at
// any depth, and values are looked for in decoded text. A replacement is
// written back by encoding it in the escaping the string it stands in
// used, over the bytes of the characters it replaces and no others, so
// untouched bytes stay as they were, a replacement never starts or ends
// inside an escape, and a nested document stays a document. The verifier
// (package leakcheck) reads the output with other code.

// edit replaces bytes [start, end) with repl. kind and detector say what
// was replaced, for the report; where is its path, with
// Options.ReportPaths.
type edit struct {
	start, end int
	repl       string
	kind       Kind
	detector   string
	where      string
}

// style is how a JSON string was escaped, so that a replacement written
// into it is escaped the same way.
type style = jsonstr.Style

const (
	styleASCII    = jsonstr.ASCII
	styleHTML     = jsonstr.HTML
	styleSlash    = jsonstr.Slash
	styleUpperHex = jsonstr.UpperHex
	styleLineSeps = jsonstr.LineSeps
)

// decodeString decodes the JSON string token raw (quotes included). at
// maps each decoded byte to the offset in raw where its character's bytes
// or escape start, and len(dec) to the closing quote; it is nil when raw
// has no escape (dec is then raw without its quotes). It reports false
// for an escape that is not JSON.
func decodeString(raw string) (dec string, at []int32, st style, ok bool) {
	body := raw[1 : len(raw)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil, 0, true
	}
	out := make([]byte, 0, len(body))
	at = make([]int32, 0, len(body)+1)
	for i := 1; i < len(raw)-1; {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			at = append(at, int32(i))
			i++
			continue
		}
		if i+1 >= len(raw)-1 {
			return "", nil, 0, false
		}
		start := i
		var r rune
		switch raw[i+1] {
		case '"', '\\':
			r, i = rune(raw[i+1]), i+2
		case '/':
			r, i = '/', i+2
			st |= styleSlash
		case 'b':
			r, i = '\b', i+2
		case 'f':
			r, i = '\f', i+2
		case 'n':
			r, i = '\n', i+2
		case 'r':
			r, i = '\r', i+2
		case 't':
			r, i = '\t', i+2
		case 'u':
			v, okHex := hex4(raw, i+2, len(raw)-1)
			if !okHex {
				return "", nil, 0, false
			}
			if strings.ContainsAny(raw[i+2:i+6], "ABCDEF") {
				st |= styleUpperHex
			}
			r, i = rune(v), i+6
			if utf16.IsSurrogate(r) {
				if v2, ok2 := hex4(raw, i+2, len(raw)-1); ok2 && raw[i] == '\\' && raw[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, rune(v2)); pair != utf8.RuneError {
						r, i = pair, i+6
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			switch {
			case r == '<' || r == '>' || r == '&':
				st |= styleHTML
			case r == 0x2028 || r == 0x2029:
				st |= styleLineSeps
			case r >= utf8.RuneSelf:
				st |= styleASCII
			}
		default:
			return "", nil, 0, false
		}
		n := len(out)
		out = utf8.AppendRune(out, r)
		for range len(out) - n {
			at = append(at, int32(start))
		}
	}
	at = append(at, int32(len(raw)-1))
	return string(out), at, st, true
}

func hex4(s string, i, limit int) (uint64, bool) {
	if i+4 > limit {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return v, err == nil
}

// errSyntax is matched by the error of a walk over text that is not JSON.
var errSyntax = errors.New("not JSON")

// syntaxError says where a document stops being JSON.
type syntaxError struct {
	offset int
	what   string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.offset, e.what) }
func (e *syntaxError) Unwrap() error { return errSyntax }

// pathSeg is one step of where a walk is: an object key, an array index,
// or the start of a document nested in a string.
type pathSeg struct {
	key    string
	index  int // -1 for a key
	nested bool
}

// walker reads a JSON document and every document nested in its strings,
// calls leaf with each string that holds no document (decoded) and each
// number, and turns what leaf replaces into edits of the raw bytes.
type walker struct {
	// leaf returns the replacements in text, sorted and not overlapping.
	leaf func(w *walker, text string, number, key bool) []edit
	// skip, when set, tells fields whose value the walk leaves alone.
	skip func(w *walker, key string) bool
	path []pathSeg
}

// doc walks the JSON document src and returns the edits of its bytes, in
// order.
func (w *walker) doc(src string) ([]edit, error) {
	var edits []edit
	i, err := w.value(src, skipSpace(src, 0), &edits)
	if err != nil {
		return nil, err
	}
	if i = skipSpace(src, i); i != len(src) {
		return nil, &syntaxError{i, "text after the document"}
	}
	return edits, nil
}

func (w *walker) value(s string, i int, edits *[]edit) (int, error) {
	if i >= len(s) {
		return i, &syntaxError{i, "unexpected end"}
	}
	switch c := s[i]; {
	case c == '{':
		return w.object(s, i, edits)
	case c == '[':
		return w.array(s, i, edits)
	case c == '"':
		return w.str(s, i, false, edits)
	case c == '-' || '0' <= c && c <= '9':
		end, ok := scanNumber(s, i)
		if !ok {
			return end, &syntaxError{i, "malformed number"}
		}
		w.apply(s[i:end], i, nil, 0, true, false, edits)
		return end, nil
	case strings.HasPrefix(s[i:], "true"):
		return i + 4, nil
	case strings.HasPrefix(s[i:], "false"):
		return i + 5, nil
	case strings.HasPrefix(s[i:], "null"):
		return i + 4, nil
	}
	return i, &syntaxError{i, "unexpected character"}
}

func (w *walker) object(s string, i int, edits *[]edit) (int, error) {
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return i, &syntaxError{i, "want an object key"}
		}
		kStart := i
		end, err := w.str(s, i, true, edits)
		if err != nil {
			return end, err
		}
		key := keyText(s[kStart:end])
		i = skipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return i, &syntaxError{i, "want :"}
		}
		i = skipSpace(s, i+1)
		w.path = append(w.path, pathSeg{key: key, index: -1})
		if w.skip != nil && w.skip(w, key) {
			i, err = skipJSON(s, i)
		} else {
			i, err = w.value(s, i, edits)
		}
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return i, err
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		return i, &syntaxError{i, "want , or }"}
	}
}

func (w *walker) array(s string, i int, edits *[]edit) (int, error) {
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		w.path = append(w.path, pathSeg{index: n})
		var err error
		i, err = w.value(s, i, edits)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return i, err
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return i + 1, nil
		}
		return i, &syntaxError{i, "want , or ]"}
	}
}

// str walks the string token at s[i]: a document in it is walked as a
// document, anything else is a leaf.
func (w *walker) str(s string, i int, key bool, edits *[]edit) (int, error) {
	end, ok := scanString(s, i)
	if !ok {
		return end, &syntaxError{i, "unterminated string"}
	}
	raw := s[i:end]
	dec, at, st, ok := decodeString(raw)
	if !ok {
		return end, &syntaxError{i, "invalid escape"}
	}
	if !key && looksLikeDocument(dec) {
		w.path = append(w.path, pathSeg{index: -1, nested: true})
		inner, err := w.doc(dec)
		w.path = w.path[:len(w.path)-1]
		if err == nil {
			for _, e := range inner {
				*edits = append(*edits, w.mapped(e, i, at, st))
			}
			return end, nil
		}
	}
	w.apply(dec, i, at, st, false, key, edits)
	return end, nil
}

// apply asks leaf for the replacements in a string's decoded text (or a
// number's) and turns them into edits of the raw bytes, which start at
// base.
func (w *walker) apply(text string, base int, at []int32, st style, number, key bool, edits *[]edit) {
	for _, e := range w.leaf(w, text, number, key) {
		if number {
			e.start, e.end = base+e.start, base+e.end
			*edits = append(*edits, e)
			continue
		}
		*edits = append(*edits, w.mapped(e, base, at, st))
	}
}

// mapped turns an edit of a string's decoded text into one of its raw
// token at base.
func (w *walker) mapped(e edit, base int, at []int32, st style) edit {
	rs, re := e.start+1, e.end+1
	if at != nil {
		rs, re = int(at[e.start]), int(at[e.end])
	}
	e.start, e.end, e.repl = base+rs, base+re, string(st.Append(nil, e.repl))
	return e
}

// keyText decodes an object key for paths and skip; a key that does not
// decode is kept as written.
func keyText(raw string) string {
	dec, _, _, ok := decodeString(raw)
	if !ok {
		return raw
	}
	return dec
}

// looksLikeDocument reports whether decoded text may be a JSON object or
// array (the walk then tells).
func looksLikeDocument(s string) bool {
	i := skipSpace(s, 0)
	return i < len(s)-1 && (s[i] == '{' || s[i] == '[')
}

// scanString returns the index after the JSON string token that starts at
// s[i], and whether it is terminated. The closing quote found is kept
// until an escape passes it, so that a string of many escapes costs one
// pass.
func scanString(s string, i int) (int, bool) {
	j, q := i+1, -1
	for {
		if q < j {
			k := strings.IndexByte(s[j:], '"')
			if k < 0 {
				return len(s), false
			}
			q = j + k
		}
		b := strings.IndexByte(s[j:q], '\\')
		if b < 0 {
			return q + 1, true
		}
		if j += b + 2; j > len(s) {
			return len(s), false
		}
	}
}

// scanNumber returns the index after the JSON number at s[i], and whether
// it is one.
func scanNumber(s string, i int) (int, bool) {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	digits := func() int {
		n := 0
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(s) && s[j] == '0' {
		j++
	} else if digits() == 0 {
		return j, false
	}
	if j < len(s) && s[j] == '.' {
		j++
		if digits() == 0 {
			return j, false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return j, false
		}
	}
	return j, true
}

// skipJSON returns the index after the JSON value at s[i], checking that
// it is one.
func skipJSON(s string, i int) (int, error) {
	quiet := &walker{leaf: func(*walker, string, bool, bool) []edit { return nil }}
	var none []edit
	return quiet.value(s, i, &none)
}
