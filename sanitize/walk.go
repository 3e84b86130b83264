package sanitize

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/internal/jsonstr"
)

// walker visits every string of a recorded-history document, object keys
// included, and every string of every JSON document nested inside a string
// (schema-version-2 payload.message holds one), at any depth. The edits
// visit returns are spliced into the raw bytes: every other byte stays as
// it was, escapes included, so a sanitized file diffs only where a value
// changed.
type walker struct {
	// visit returns the edits to make to one decoded string, in order.
	visit func(w *walker, s string) []edit
	// rows are the seq and type of each row, in order, from learning; the
	// walker reads them itself when nil.
	rows []rowMeta
	seq  int64      // seq of the row being walked; -1 outside rows
	path []pathElem // where the walk is, for reports and errors
}

// edit replaces text[start:end] with repl. In a decoded string, repl is
// text; in a document, repl is raw JSON.
type edit struct {
	start, end int
	repl       string
}

type pathElem struct {
	key    string // object key, or "" for an array element
	index  int
	nested bool // the start of a JSON document inside a string
}

// document walks a whole history document and returns it with the edits
// made.
func (w *walker) document(src string) string {
	w.seq = -1
	var edits []edit
	gjson.Parse(src).ForEach(func(k, v gjson.Result) bool {
		edits = w.key(k, edits)
		if k.Str == "events" && v.IsArray() {
			// A row's path starts at its type: message.payload.text.
			i := 0
			v.ForEach(func(_, row gjson.Result) bool {
				if i < len(w.rows) {
					w.seq = w.rows[i].seq
					w.push(pathElem{key: w.rows[i].typ})
				} else {
					w.seq = row.Get("seq").Int()
					w.push(pathElem{key: row.Get("type").String()})
				}
				i++
				edits = w.value(row, edits)
				w.pop()
				w.seq = -1
				return true
			})
			return true
		}
		w.push(pathElem{key: k.Str})
		edits = w.value(v, edits)
		w.pop()
		return true
	})
	return apply(src, edits)
}

func (w *walker) value(v gjson.Result, edits []edit) []edit {
	switch {
	case v.Type == gjson.String:
		edits = w.token(v, w.str(v.Str), edits)
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			edits = w.key(k, edits)
			w.push(pathElem{key: k.Str})
			edits = w.value(val, edits)
			w.pop()
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			w.push(pathElem{index: i})
			edits = w.value(val, edits)
			w.pop()
			i++
			return true
		})
	}
	return edits
}

func (w *walker) key(k gjson.Result, edits []edit) []edit {
	w.push(pathElem{key: k.Str})
	edits = w.token(k, w.visit(w, k.Str), edits)
	w.pop()
	return edits
}

// str returns the edits to one decoded string: those of the document
// inside it, if it holds one, else those of the visit.
func (w *walker) str(s string) []edit {
	if looksLikeJSON(s) && gjson.Valid(s) {
		w.push(pathElem{nested: true})
		edits := w.value(gjson.Parse(s), nil)
		w.pop()
		return edits
	}
	return w.visit(w, s)
}

func looksLikeJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return len(t) > 1 && (t[0] == '{' || t[0] == '[')
}

// token turns edits of a string's decoded text into edits of its raw JSON
// token at tok.Index: each lands on the escaped bytes it replaces. Where an
// edit would split an escape, the whole token is written again instead.
func (w *walker) token(tok gjson.Result, decoded []edit, edits []edit) []edit {
	if len(decoded) == 0 {
		return edits
	}
	pos, ok := rawOffsets(tok.Raw, tok.Str)
	if ok {
		for _, e := range decoded {
			if !pos.boundary(e.start) || !pos.boundary(e.end) {
				ok = false
				break
			}
		}
	}
	if !ok {
		return append(edits, edit{tok.Index, tok.Index + len(tok.Raw), string(jsonstr.Append(nil, apply(tok.Str, decoded)))})
	}
	for _, e := range decoded {
		q := jsonstr.Append(nil, e.repl)
		edits = append(edits, edit{tok.Index + pos[e.start], tok.Index + pos[e.end], string(q[1 : len(q)-1])})
	}
	return edits
}

// offsets maps each byte of a decoded JSON string to the offset in the raw
// token where the character it belongs to starts; one more entry maps the
// end.
type offsets []int

func (p offsets) boundary(i int) bool { return i == 0 || i == len(p)-1 || p[i] != p[i-1] }

// rawOffsets decodes a raw JSON string token, recording where each decoded
// byte came from. It reports false if the decoding differs from want (the
// decoder's), so edits are never misplaced.
func rawOffsets(raw, want string) (offsets, bool) {
	if len(raw) < 2 {
		return nil, false
	}
	pos := make(offsets, 0, len(want)+1)
	dec := make([]byte, 0, len(want))
	end := len(raw) - 1
	for i := 1; i < end; {
		c := raw[i]
		if c != '\\' {
			dec = append(dec, c)
			pos = append(pos, i)
			i++
			continue
		}
		if i+1 >= end {
			return nil, false
		}
		start := i
		var r rune
		switch raw[i+1] {
		case '"', '\\', '/':
			r, i = rune(raw[i+1]), i+2
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
			if i+6 > end {
				return nil, false
			}
			v, err := strconv.ParseUint(raw[i+2:i+6], 16, 32)
			if err != nil {
				return nil, false
			}
			r, i = rune(v), i+6
			if utf16.IsSurrogate(r) && i+6 <= end && raw[i] == '\\' && raw[i+1] == 'u' {
				if v2, err := strconv.ParseUint(raw[i+2:i+6], 16, 32); err == nil {
					if pair := utf16.DecodeRune(r, rune(v2)); pair != utf8.RuneError {
						r, i = pair, i+6
					}
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
		default:
			return nil, false
		}
		n := len(dec)
		dec = utf8.AppendRune(dec, r)
		for range len(dec) - n {
			pos = append(pos, start)
		}
	}
	pos = append(pos, end)
	return pos, string(dec) == want
}

// apply returns text with the edits, given in order and not overlapping,
// made.
func apply(text string, edits []edit) string {
	if len(edits) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 64)
	pos := 0
	for _, e := range edits {
		b.WriteString(text[pos:e.start])
		b.WriteString(e.repl)
		pos = e.end
	}
	b.WriteString(text[pos:])
	return b.String()
}

func (w *walker) push(e pathElem) { w.path = append(w.path, e) }
func (w *walker) pop()            { w.path = w.path[:len(w.path)-1] }

// where returns the path of the walk, such as
// message.payload.message>content[1].text: the row type, then the path
// inside the row, with > where a string's JSON document starts. With
// collapse, array indexes become #.
func (w *walker) where(collapse bool) string {
	var b strings.Builder
	for _, e := range w.path {
		switch {
		case e.nested:
			b.WriteByte('>')
		case e.key == "":
			if collapse {
				b.WriteString("[#]")
			} else {
				b.WriteString("[" + strconv.Itoa(e.index) + "]")
			}
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, ">") {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		}
	}
	return b.String()
}
