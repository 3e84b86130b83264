package cassette

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A cassette in the layout Write produces (yaml.v3's, four spaces an
// indent, one "    - " item per interaction, each field of an item six
// spaces in) can be cut into its interactions by lines, and each one
// decoded alone, without a YAML parser over the whole file: that is what
// lets a replay start on 10,000 interactions without reading them, and
// read one in microseconds when it is replayed.
//
// The fast decoder below reads only what yaml.v3's encoder writes for an
// Interaction: block mappings and sequences, plain, quoted and literal
// scalars, {} and []. Anything else, and anything it is not sure of, it
// refuses (errLayout); the caller then decodes the file with yaml.v3, so
// a refusal costs time, never a difference. What it accepts, it decodes
// as yaml.v3 does: FuzzLayoutMatchesYAML holds it to that.

// errLayout is a file or an interaction the fast path does not read.
var errLayout = errors.New("not in the layout Write produces")

// extent is one interaction's bytes in a cassette file.
type extent struct {
	off, end int64  // the bytes, from the item's "    - " to its last newline
	line     int    // the item's first line, from 1
	key      string // the stored agentvcr_key, "" if none
}

const (
	itemPrefix   = "    - "
	fieldPrefix  = "      "
	keyLinePlain = fieldPrefix + "agentvcr_key: "
)

// split cuts a cassette into its interactions' spans, reading it once
// and keeping nothing but the spans. It returns errLayout when the file
// is not in Write's layout.
//
// A line that starts an item is the start of an interaction only where
// no scalar goes on over it: split follows literal blocks, and refuses a
// quoted scalar that does not end on its line (yaml.v3 reads one on, at
// any indentation, so that an interaction could hide in another's body)
// and any flow collection but {} and [].
func split(r io.Reader) ([]extent, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var spans []extent
	var off int64
	var long []byte // a whole line longer than the reader's buffer
	literal := -1   // in a literal block: the column its content is deeper than
	line := 0
	for {
		piece, err := br.ReadSlice('\n')
		start := off
		off += int64(len(piece))
		indent := countSpaces(piece)
		blank := indent == len(piece)-1 && piece[indent] == '\n'
		content := literal >= 0 && (blank || indent > literal)
		if err == nil && content {
			line++
			continue // most lines: a literal's, read no further
		}
		if err == nil && len(spans) > 0 && chunkLine(piece, indent) {
			line++
			literal = -1 // a literal, if any, ended above it
			continue
		}
		// The piece is the reader's buffer, good until the next read:
		// a line longer than the buffer is gathered whole, unless it is
		// a literal's content.
		whole := piece
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], piece...)
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = br.ReadSlice('\n')
				off += int64(len(more))
				if !content {
					long = append(long, more...)
				}
			}
			whole = long
		}
		if err == io.EOF {
			if off > start {
				return nil, errLayout // the last line has no newline
			}
			break
		}
		if err != nil {
			return nil, err
		}
		line++
		if content {
			continue
		}
		literal = -1
		switch {
		case line == 1:
			if string(whole) != "version: 2\n" {
				return nil, errLayout
			}
			continue
		case line == 2:
			switch string(whole) {
			case "interactions:\n":
			case "interactions: []\n":
				if _, err := br.ReadByte(); err != io.EOF {
					return nil, errLayout
				}
				return nil, nil
			default:
				return nil, errLayout
			}
			continue
		case bytes.HasPrefix(whole, []byte(itemPrefix)):
			if n := len(spans); n > 0 {
				spans[n-1].end = start
			}
			spans = append(spans, extent{off: start, line: line})
		case len(spans) == 0 || !bytes.HasPrefix(whole, []byte(fieldPrefix)):
			return nil, errLayout
		case bytes.HasPrefix(whole, []byte(keyLinePlain)):
			s := &spans[len(spans)-1]
			if s.key != "" {
				return nil, errLayout
			}
			s.key = storedKey(bytes.TrimSuffix(whole[len(keyLinePlain):], []byte("\n")))
		}
		var ok bool
		if literal, ok = lexLine(bytes.TrimSuffix(whole, []byte("\n"))); !ok {
			return nil, errLayout
		}
	}
	if line < 2 {
		return nil, errLayout
	}
	if n := len(spans); n > 0 {
		spans[n-1].end = off
	} else {
		return nil, errLayout // "interactions:" and nothing
	}
	return spans, nil
}

// chunkLine reports whether l, indented by indent, is a line of a chunk
// as Write writes it ("- end: N" or "after_ms: N"), which starts nothing
// that goes on to the next line.
func chunkLine(l []byte, indent int) bool {
	if indent < len(itemPrefix) {
		return false
	}
	t, ok := bytes.CutPrefix(l[indent:], []byte("- end: "))
	if !ok {
		if t, ok = bytes.CutPrefix(l[indent:], []byte("after_ms: ")); !ok {
			return false
		}
	}
	if len(t) < 2 || t[len(t)-1] != '\n' {
		return false
	}
	for _, c := range t[:len(t)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func countSpaces(b []byte) int {
	n := 0
	for n < len(b) && b[n] == ' ' {
		n++
	}
	return n
}

// lexLine checks a line of an interaction that is not a literal's
// content, as Write writes them: an indentation, maybe "- ", then a key
// and its value or a scalar alone. It returns, if the line starts a
// literal block, the column its content must be deeper than, else -1;
// ok is false for a line split does not read, such as a quoted scalar
// that goes on to the next line.
func lexLine(l []byte) (literal int, ok bool) {
	col := countSpaces(l)
	t := l[col:]
	rest, isItem := bytes.CutPrefix(t, []byte("- "))
	if isItem {
		if len(rest) > 0 && rest[0] == '|' {
			return col, true // a literal item: deeper than its dash
		}
		col += 2
		t = rest
	}
	if len(t) == 0 {
		return -1, false
	}
	value := t
	switch t[0] {
	case '\'', '"':
		after, ok := quotedEnd(t)
		if !ok {
			return -1, false
		}
		if len(after) == 0 {
			return -1, true // a quoted scalar alone
		}
		if !bytes.HasPrefix(after, []byte(": ")) && string(after) != ":" {
			return -1, false
		}
		value = bytes.TrimPrefix(after[1:], []byte(" "))
	case '#', '\t', '-', '?', ':', '{', '[', '&', '*', '!', '|', '>', '%', '@', '`':
		return -1, false
	default:
		if i := bytes.Index(t, []byte(": ")); i >= 0 {
			value = t[i+2:]
		} else if t[len(t)-1] == ':' {
			value = nil
		} else {
			return -1, true // a plain scalar alone
		}
	}
	if len(value) == 0 {
		return -1, true
	}
	switch value[0] {
	case '\'', '"':
		after, ok := quotedEnd(value)
		return -1, ok && len(after) == 0
	case '|':
		return col, true
	case '{', '[':
		return -1, string(value) == "{}" || string(value) == "[]"
	case '>', '&', '*', '!', '#', '\t':
		return -1, false
	}
	return -1, true
}

// quotedEnd returns what follows the quoted scalar t starts with, or false
// if it does not end in t.
func quotedEnd(t []byte) ([]byte, bool) {
	q := t[0]
	for i := 1; i < len(t); {
		j := bytes.IndexByte(t[i:], q)
		if q == '"' {
			if k := bytes.IndexByte(t[i:], '\\'); k >= 0 && (j < 0 || k < j) {
				i += k + 2 // an escape: the next byte is not the end
				continue
			}
		}
		if j < 0 {
			return nil, false
		}
		i += j
		if q == '\'' && i+1 < len(t) && t[i+1] == '\'' {
			i += 2 // a quote, doubled
			continue
		}
		return t[i+1:], true
	}
	return nil, false
}

// decode reads a cassette's bytes: by the fast path when they are in
// Write's layout, by yaml.v3 when not.
func decode(b []byte, name string) (*Cassette, error) {
	c, err := decodeLayout(b, name)
	if errors.Is(err, errLayout) {
		return Decode(bytes.NewReader(b), name)
	}
	return c, err
}

// decodeLayout reads a cassette in Write's layout, or returns errLayout.
func decodeLayout(b []byte, name string) (*Cassette, error) {
	exts, err := split(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := &Cassette{Version: FormatVersion, Interactions: make([]*Interaction, 0, len(exts))}
	for _, e := range exts {
		in, err := decodeSpan(b[e.off:e.end])
		if err != nil {
			return nil, err
		}
		c.Interactions = append(c.Interactions, in)
	}
	for i, in := range c.Interactions {
		if err := check(name, i, exts[i].line, in); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// storedKey reads a key as Write stores it: 32 hex digits, plain or, when
// they would read as a number, quoted.
func storedKey(b []byte) string {
	if len(b) == 34 && (b[0] == '\'' || b[0] == '"') && b[33] == b[0] {
		b = b[1:33]
	}
	if len(b) != 32 {
		return ""
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return string(b)
}

// decodeSpan decodes one interaction's span, or returns errLayout.
func decodeSpan(b []byte) (*Interaction, error) {
	if !printable(b) {
		return nil, errLayout
	}
	return decodePrintable(b, 0)
}

// decodePrintable is decodeSpan for a span known to be printable: one
// decoded before, read again from the same file, with chunks, its
// number of chunks then.
func decodePrintable(b []byte, chunks int) (*Interaction, error) {
	d := &spanDecoder{b: b, lineAt: -1}
	in := &Interaction{}
	if chunks > 0 {
		in.Chunks = make([]Chunk, 0, chunks)
	}
	rest, ok := bytes.CutPrefix(d.line(), []byte(itemPrefix))
	if !ok {
		return nil, errLayout
	}
	d.advance()
	d.virtual(len(itemPrefix), rest)
	if !d.interaction(in) || !d.eof() {
		return nil, errLayout
	}
	return in, nil
}

// printable reports whether b holds only what the fast decoder reads as
// yaml.v3 does: valid UTF-8, printable, no tabs, and no line break but
// '\n' (YAML 1.1 also breaks lines at '\r', NEL, LS and PS).
func printable(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i := 0; i < len(b); {
		// Eight bytes at once when they are printable ASCII or
		// newlines: none with its high bit set, below 0x20 but '\n', or
		// 0x7f. Otherwise those eight one by one. For bytes below 0x80
		// the sums below carry into no other byte, so each mask is
		// exact.
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			low := x & (0x7f * ones)
			below := ^(low + 0x60*ones) & highs // a high bit where a byte is below 0x20
			nl, del := x^0x0a*ones, x^0x7f*ones
			isNL := ^((nl&(0x7f*ones) + 0x7f*ones) | nl) & highs
			isDel := ^((del&(0x7f*ones) + 0x7f*ones) | del) & highs
			if x&highs|below&^isNL|isDel == 0 {
				i += 8
				continue
			}
		}
		for stop := min(i+8, len(b)); i < stop; {
			c := b[i]
			if c < utf8.RuneSelf {
				if c < 0x20 && c != '\n' || c == 0x7f {
					return false
				}
				i++
				continue
			}
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 || r == 0x85 || r < 0xa0 || r == 0x2028 || r == 0x2029 ||
				0xd800 <= r && r <= 0xdfff || r == 0xfeff || r == 0xfffe || r == 0xffff {
				return false
			}
			i += n
		}
	}
	return true
}

// spanDecoder reads a span line by line. A line may be virtual: the rest
// of a "- " sequence entry, read as a line that starts after the dash.
type spanDecoder struct {
	b   []byte
	pos int // where the next real line starts
	// lineAt is the pos whose line ends at lineEnd (its newline, or the
	// end of b): each line is searched for its end once.
	lineAt, lineEnd int

	hasVirtual bool
	vIndent    int
	vText      []byte
}

func (d *spanDecoder) virtual(indent int, text []byte) {
	d.hasVirtual, d.vIndent, d.vText = true, indent, text
}

func (d *spanDecoder) eof() bool { return !d.hasVirtual && d.pos >= len(d.b) }

// line returns the next real line, without its newline.
func (d *spanDecoder) line() []byte {
	if d.lineAt != d.pos {
		d.lineAt, d.lineEnd = d.pos, len(d.b)
		if i := bytes.IndexByte(d.b[d.pos:], '\n'); i >= 0 {
			d.lineEnd = d.pos + i
		}
	}
	return d.b[d.pos:d.lineEnd]
}

func (d *spanDecoder) advance() {
	d.line()
	d.pos = min(d.lineEnd+1, len(d.b))
}

// peek returns the next line's indentation and its text after it; ok is
// false at the end. A blank line has an empty text.
func (d *spanDecoder) peek() (indent int, text []byte, ok bool) {
	if d.hasVirtual {
		return d.vIndent, d.vText, true
	}
	if d.pos >= len(d.b) {
		return 0, nil, false
	}
	l := d.line()
	n := countSpaces(l)
	return n, l[n:], true
}

func (d *spanDecoder) next() {
	if d.hasVirtual {
		d.hasVirtual = false
		return
	}
	d.advance()
}

// mapping reads a block mapping deeper than parent, calling field for
// each key with the text after "key:" (empty when the value is a block
// below) and the mapping's indentation. A repeated key is refused, as
// yaml.v3 refuses it.
func (d *spanDecoder) mapping(parent int, field func(key, rest []byte, indent int) bool) bool {
	indent, _, ok := d.peek()
	if !ok || indent <= parent {
		return false
	}
	var seenBuf [8][]byte
	seen := seenBuf[:0]
	for {
		n, text, ok := d.peek()
		if !ok || n < indent {
			return true
		}
		if n > indent || len(text) == 0 {
			return false
		}
		key, rest, ok := splitKey(text)
		if !ok || slices.ContainsFunc(seen, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return false
		}
		seen = append(seen, key)
		d.next()
		if !field(key, rest, indent) {
			return false
		}
	}
}

// sequence reads a block sequence deeper than parent, calling item with
// the text after each "- " and the sequence's indentation.
func (d *spanDecoder) sequence(parent int, item func(rest []byte, indent int) bool) bool {
	indent, _, ok := d.peek()
	if !ok || indent <= parent {
		return false
	}
	for {
		n, text, ok := d.peek()
		if !ok || n < indent {
			return true
		}
		rest, isItem := bytes.CutPrefix(text, []byte("- "))
		if n > indent || !isItem || len(rest) == 0 || rest[0] == ' ' {
			return false
		}
		d.next()
		if !item(rest, indent) {
			return false
		}
	}
}

// maxKey bounds a line that holds a key: yaml.v3 refuses a key of 1,024
// characters or more.
const maxKey = 1000

// splitKey cuts "key: rest" or "key:" into the key and the rest.
func splitKey(text []byte) (key, rest []byte, ok bool) {
	if text[0] == '\'' || text[0] == '"' {
		s, after, ok := quoted(text)
		if !ok || len(text)-len(after) > maxKey || len(after) == 0 || after[0] != ':' {
			return nil, nil, false
		}
		after = after[1:]
		if len(after) > 0 {
			if after[0] != ' ' || len(after) == 1 || after[1] == ' ' {
				return nil, nil, false
			}
			after = after[1:]
		}
		return []byte(s), after, true
	}
	i := bytes.Index(text, []byte(": "))
	var k []byte
	if i < 0 {
		if text[len(text)-1] != ':' {
			return nil, nil, false
		}
		k = text[:len(text)-1]
	} else {
		k, rest = text[:i], text[i+2:]
		if len(rest) == 0 || rest[0] == ' ' {
			return nil, nil, false
		}
	}
	if len(k) > maxKey || !plainString(k) {
		return nil, nil, false
	}
	return k, rest, true
}

func (d *spanDecoder) interaction(in *Interaction) bool {
	return d.mapping(len(itemPrefix)-2, func(key, rest []byte, indent int) bool {
		switch string(key) {
		case "id":
			var ok bool
			in.ID, ok = plainInt(rest)
			return ok
		case "request":
			return len(rest) == 0 && d.request(&in.Request, indent)
		case "response":
			return len(rest) == 0 && d.response(&in.Response, indent)
		case "agentvcr_key":
			return d.str(&in.Key, rest, indent)
		case "agentvcr_rule":
			return d.str(&in.Rule, rest, indent)
		case "agentvcr_chunks":
			if len(rest) != 0 {
				return false
			}
			return d.sequence(indent, func(rest []byte, indent int) bool {
				if c, ok := d.chunk(rest, indent); ok {
					in.Chunks = append(in.Chunks, c)
					return true
				}
				var c Chunk
				d.virtual(indent+2, rest)
				ok := d.mapping(indent, func(key, rest []byte, _ int) bool {
					var ok bool
					switch string(key) {
					case "end":
						c.End, ok = plainInt(rest)
					case "after_ms":
						var v int
						v, ok = plainInt(rest)
						c.After = int64(v)
					}
					return ok
				})
				in.Chunks = append(in.Chunks, c)
				return ok
			})
		}
		return false
	})
}

// chunk reads a chunk as Write writes it, the entry's rest "end: N" and
// the next line "after_ms: M" below it, with nothing after; ok is false,
// having read nothing, for anything else.
func (d *spanDecoder) chunk(rest []byte, indent int) (Chunk, bool) {
	v, ok := bytes.CutPrefix(rest, []byte("end: "))
	if !ok || d.pos >= len(d.b) {
		return Chunk{}, false
	}
	end, ok := plainInt(v)
	if !ok {
		return Chunk{}, false
	}
	l := d.line()
	if len(l) < indent+2 || countSpaces(l[:indent+2]) != indent+2 {
		return Chunk{}, false
	}
	v, ok = bytes.CutPrefix(l[indent+2:], []byte("after_ms: "))
	if !ok {
		return Chunk{}, false
	}
	after, ok := plainInt(v)
	if !ok {
		return Chunk{}, false
	}
	pos := d.pos
	d.advance()
	if n, _, more := d.peek(); more && n >= indent+2 {
		d.pos = pos // a third line in the chunk: the general path says
		return Chunk{}, false
	}
	return Chunk{End: end, After: int64(after)}, true
}

// proto reads one of the protocol fields a request and a response share.
func (d *spanDecoder) proto(key string, rest []byte, indent int, proto *string, major, minor *int) bool {
	var ok bool
	switch key {
	case "proto":
		return d.str(proto, rest, indent)
	case "proto_major":
		*major, ok = plainInt(rest)
	default:
		*minor, ok = plainInt(rest)
	}
	return ok
}

func (d *spanDecoder) request(r *Request, parent int) bool {
	return d.mapping(parent, func(key, rest []byte, indent int) bool {
		switch string(key) {
		case "proto", "proto_major", "proto_minor":
			return d.proto(string(key), rest, indent, &r.Proto, &r.ProtoMajor, &r.ProtoMinor)
		case "host":
			return d.str(&r.Host, rest, indent)
		case "body":
			return d.str(&r.Body, rest, indent)
		case "form":
			m, ok := d.lists(rest, indent)
			r.Form = url.Values(m)
			return ok
		case "headers":
			m, ok := d.lists(rest, indent)
			r.Headers = http.Header(m)
			return ok
		case "url":
			return d.str(&r.URL, rest, indent)
		case "method":
			return d.str(&r.Method, rest, indent)
		}
		return false
	})
}

func (d *spanDecoder) response(r *Response, parent int) bool {
	return d.mapping(parent, func(key, rest []byte, indent int) bool {
		switch string(key) {
		case "proto", "proto_major", "proto_minor":
			return d.proto(string(key), rest, indent, &r.Proto, &r.ProtoMajor, &r.ProtoMinor)
		case "body":
			return d.str(&r.Body, rest, indent)
		case "headers":
			m, ok := d.lists(rest, indent)
			r.Headers = http.Header(m)
			return ok
		case "status":
			return d.str(&r.Status, rest, indent)
		case "code":
			var ok bool
			r.Code, ok = plainInt(rest)
			return ok
		case "duration":
			// yaml.v3 writes a Duration as its String, and reads one
			// back with ParseDuration only when it does not read as
			// a number: one with a unit letter never does, as "0" does.
			if !plainString(rest) || bytes.IndexFunc(rest, unicode.IsLetter) < 0 {
				return false
			}
			v, err := time.ParseDuration(string(rest))
			r.Duration = v
			return err == nil
		}
		return false
	})
}

// lists reads a header or form map: {} or a mapping of sequences of
// strings, each [] or a block sequence.
func (d *spanDecoder) lists(rest []byte, parent int) (map[string][]string, bool) {
	m := map[string][]string{}
	if string(rest) == "{}" {
		return m, true
	}
	if len(rest) != 0 {
		return nil, false
	}
	ok := d.mapping(parent, func(k, rest []byte, indent int) bool {
		key := string(k)
		if string(rest) == "[]" {
			m[key] = []string{}
			return true
		}
		if len(rest) != 0 {
			return false
		}
		var vs []string
		ok := d.sequence(indent, func(rest []byte, indent int) bool {
			var s string
			ok := d.str(&s, rest, indent)
			vs = append(vs, s)
			return ok
		})
		m[key] = vs
		return ok
	})
	return m, ok
}

// str reads a string scalar whose text starts at rest, in a block
// collection at indentation parent: plain, quoted on one line, or
// literal.
func (d *spanDecoder) str(out *string, rest []byte, parent int) bool {
	if len(rest) == 0 {
		return false
	}
	switch rest[0] {
	case '\'', '"':
		s, after, ok := quoted(rest)
		*out = s
		return ok && len(after) == 0
	case '|':
		s, ok := d.literal(rest[1:], parent)
		*out = s
		return ok
	}
	if !plainString(rest) {
		return false
	}
	*out = string(rest)
	return true
}

// literal reads a literal block scalar after its "|": an optional
// indentation digit and chomping sign, then the lines below.
func (d *spanDecoder) literal(header []byte, parent int) (string, bool) {
	chomp, increment := 0, 0
	for _, c := range header {
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = 1
			if c == '-' {
				chomp = -1
			}
		case '1' <= c && c <= '9' && increment == 0:
			increment = int(c - '0')
		default:
			return "", false
		}
	}
	indent := parent + increment
	if increment == 0 {
		// The first line sets it; one that is blank would leave it to
		// the longest of the blank lines, which Write never needs.
		n, text, ok := d.peek()
		if !ok || len(text) == 0 || n <= parent {
			return "", false
		}
		indent = n
	}
	var buf [256][]byte // a recorded stream's body is a few hundred lines
	lines := buf[:0]    // nil for a blank line
	d.literalLines(indent, func(text []byte) { lines = append(lines, text) })
	last := -1 // the last content line
	for i, l := range lines {
		if l != nil {
			last = i
		}
	}
	switch {
	case last < 0 && chomp != 1:
		return "", true
	case last < 0:
		return strings.Repeat("\n", len(lines)), true
	case chomp != 1:
		lines = lines[:last+1] // the trailing blank lines go
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if chomp == -1 {
		size-- // and so does the last newline
	}
	var s strings.Builder
	s.Grow(size)
	for _, l := range lines {
		s.Write(l)
		if s.Len() < size {
			s.WriteByte('\n')
		}
	}
	return s.String(), true
}

// literalLines calls line with each line of a literal block scalar at
// indent, without the indentation, or nil for a blank line, and leaves
// d after the scalar.
func (d *spanDecoder) literalLines(indent int, line func(text []byte)) {
	for d.pos < len(d.b) {
		l := d.line()
		if len(l) > indent && string(l[:indent]) == spaces[:min(indent, len(spaces))] {
			d.advance()
			line(l[indent:])
			continue
		}
		n := 0
		for n < len(l) && n < indent && l[n] == ' ' {
			n++
		}
		if n < indent && n < len(l) {
			return // a line less indented: the scalar has ended
		}
		d.advance()
		if n == len(l) {
			line(nil)
		} else {
			line(l[indent:])
		}
	}
}

// spaces is the indentation of most lines of a literal, compared at once.
const spaces = "                                "

// quoted reads a single- or double-quoted scalar that ends on its line,
// and returns what follows it.
func quoted(text []byte) (string, []byte, bool) {
	q := text[0]
	// Most have no escape: the text between the quotes is the value.
	if end := bytes.IndexByte(text[1:], q) + 1; end > 0 && (q == '"' && bytes.IndexByte(text[1:end], '\\') < 0 ||
		q == '\'' && (end+1 == len(text) || text[end+1] != '\'')) {
		return string(text[1:end]), text[end+1:], true
	}
	var s []byte
	for i := 1; i < len(text); i++ {
		c := text[i]
		switch {
		case c == q && q == '\'':
			if i+1 < len(text) && text[i+1] == '\'' {
				s = append(s, '\'')
				i++
				continue
			}
			return string(s), text[i+1:], true
		case c == q:
			return string(s), text[i+1:], true
		case c == '\\' && q == '"':
			if i+1 >= len(text) {
				return "", nil, false
			}
			i++
			var ok bool
			var n int
			s, n, ok = unescape(s, text[i:])
			if !ok {
				return "", nil, false
			}
			i += n - 1
		default:
			s = append(s, c)
		}
	}
	return "", nil, false // not closed on its line
}

// unescape appends the character a double-quoted escape stands for; b
// starts after the backslash. It returns how many bytes it read.
func unescape(s, b []byte) ([]byte, int, bool) {
	var r rune = -1
	switch b[0] {
	case '0':
		r = 0
	case 'a':
		r = '\a'
	case 'b':
		r = '\b'
	case 't':
		r = '\t'
	case 'n':
		r = '\n'
	case 'v':
		r = '\v'
	case 'f':
		r = '\f'
	case 'r':
		r = '\r'
	case 'e':
		r = 0x1b
	case ' ', '"', '\\':
		r = rune(b[0])
	case 'N':
		r = 0x85
	case '_':
		r = 0xa0
	case 'L':
		r = 0x2028
	case 'P':
		r = 0x2029
	}
	if r >= 0 {
		return utf8.AppendRune(s, r), 1, true
	}
	width := 0
	switch b[0] {
	case 'x':
		width = 2
	case 'u':
		width = 4
	case 'U':
		width = 8
	}
	if width == 0 || len(b) < 1+width {
		return nil, 0, false
	}
	v, err := strconv.ParseUint(string(b[1:1+width]), 16, 32)
	if err != nil || 0xd800 <= v && v <= 0xdfff || v > 0x10ffff {
		return nil, 0, false
	}
	return utf8.AppendRune(s, rune(v)), 1 + width, true
}

// plainString reports whether a plain scalar reads, into a string, as its
// own text: it starts with a letter, a digit, a non-ASCII character or
// one of `/.<(\$^_+=;)`, has no ": ", " #" or trailing space or colon, and is not
// a spelling of null or the merge key.
func plainString(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := b[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= utf8.RuneSelf || strings.IndexByte(`/.<(\$^_+=;)`, c) >= 0) {
		return false
	}
	if last := b[len(b)-1]; last == ' ' || last == ':' {
		return false
	}
	if bytes.Contains(b, []byte(": ")) || bytes.Contains(b, []byte(" #")) {
		return false
	}
	switch string(b) {
	case "null", "Null", "NULL", "<<":
		return false
	}
	return true
}

// plainInt reads a plain decimal int as yaml.v3 reads one into an int:
// no sign but '-', no leading zero, no underscore, no other base.
func plainInt(b []byte) (int, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	v := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if len(b) != len(digits) {
		v = -v
	}
	return v, true
}
