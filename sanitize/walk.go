package sanitize

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// walker visits every string of a recorded-history document, object keys
// included, decoded, and every string of every JSON document nested inside
// a string (schema-version-2 payload.message holds one), at any depth,
// knowing the row and JSON path of each. Check looks at files with it.
type walker struct {
	visit func(w *walker, s string)
	seq   int64      // seq of the row being walked; -1 outside rows
	path  []pathElem // where the walk is
}

type pathElem struct {
	key    string // object key, or "" for an array element
	index  int
	nested bool // the start of a JSON document inside a string
}

// document walks a whole history document.
func (w *walker) document(src string) {
	w.seq = -1
	gjson.Parse(src).ForEach(func(k, v gjson.Result) bool {
		w.key(k)
		if k.Str == "events" && v.IsArray() {
			// A row's path starts at its type: message.payload.text.
			v.ForEach(func(_, row gjson.Result) bool {
				w.seq = row.Get("seq").Int()
				w.push(pathElem{key: row.Get("type").String()})
				w.value(row)
				w.pop()
				w.seq = -1
				return true
			})
			return true
		}
		w.push(pathElem{key: k.Str})
		w.value(v)
		w.pop()
		return true
	})
}

func (w *walker) value(v gjson.Result) {
	switch {
	case v.Type == gjson.String:
		if looksLikeJSON(v.Str) && gjson.Valid(v.Str) {
			w.push(pathElem{nested: true})
			w.value(gjson.Parse(v.Str))
			w.pop()
		} else {
			w.visit(w, v.Str)
		}
	case v.IsObject():
		v.ForEach(func(k, val gjson.Result) bool {
			w.key(k)
			w.push(pathElem{key: k.Str})
			w.value(val)
			w.pop()
			return true
		})
	case v.IsArray():
		i := 0
		v.ForEach(func(_, val gjson.Result) bool {
			w.push(pathElem{index: i})
			w.value(val)
			w.pop()
			i++
			return true
		})
	}
}

func (w *walker) key(k gjson.Result) {
	w.push(pathElem{key: k.Str})
	w.visit(w, k.Str)
	w.pop()
}

func looksLikeJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return len(t) > 1 && (t[0] == '{' || t[0] == '[')
}

func (w *walker) push(e pathElem) { w.path = append(w.path, e) }
func (w *walker) pop()            { w.path = w.path[:len(w.path)-1] }

// where returns the path of the walk, such as
// message.payload.message>content[1].text: the row type, then the path
// inside the row, with > where a string's JSON document starts.
func (w *walker) where() string {
	var b strings.Builder
	for _, e := range w.path {
		switch {
		case e.nested:
			b.WriteByte('>')
		case e.key == "":
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, ">") {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		}
	}
	return b.String()
}

// collapse turns the array indexes of a path into #.
func collapse(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '[' {
			if j := strings.IndexByte(path[i:], ']'); j > 0 {
				b.WriteString("[#]")
				i += j
				continue
			}
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// pathAt returns the path, in the walker's notation, of the value at byte
// off of a history document, into documents nested in strings too.
func pathAt(doc string, off int) string {
	w := &walker{}
	v := gjson.Parse(doc)
	base := 0
	top := true
	for {
		var (
			next  gjson.Result
			found bool
		)
		i := 0
		v.ForEach(func(k, val gjson.Result) bool {
			if base+k.Index <= off && off < base+val.Index+len(val.Raw) {
				switch {
				case top && k.Str == "events":
				case v.IsArray() && top:
				case v.IsArray():
					w.push(pathElem{index: i})
				default:
					w.push(pathElem{key: k.Str})
				}
				next, found = val, true
				return false
			}
			i++
			return true
		})
		if !found {
			return w.where()
		}
		if top && v.IsArray() {
			// A row of events: its path starts at its type.
			w.push(pathElem{key: next.Get("type").String()})
		}
		top = top && (v.IsObject() && next.IsArray())
		switch {
		case next.Type == gjson.String && looksLikeJSON(next.Str) && gjson.Valid(next.Str):
			pos, ok := rawOffsets(next.Raw, next.Str)
			if !ok {
				return w.where()
			}
			rel := off - (base + next.Index)
			inner := 0
			for inner < len(pos)-1 && pos[inner+1] <= rel {
				inner++
			}
			w.push(pathElem{nested: true})
			v, base, off, top = gjson.Parse(next.Str), 0, inner, false
		case next.IsObject() || next.IsArray():
			base += next.Index
			v = gjson.Parse(next.Raw)
		default:
			return w.where()
		}
	}
}

// offsets maps each byte of a decoded JSON string to the offset in the raw
// token where the character it belongs to starts; one more entry maps the
// end.
type offsets []int

// rawOffsets decodes a raw JSON string token, recording where each decoded
// byte came from. It reports false if the decoding differs from want (the
// decoder's).
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
