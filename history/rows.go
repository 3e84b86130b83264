package history

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// encoding/json's Decoder reads a row three times (it finds the value's
// end, checks it, then decodes it by reflection) and copies every field it
// keeps: most of the cost of reading a document. A Reader reads the rows
// of the events array with a scanner of its own instead, which finds a
// row's end and checks its syntax in one pass, then picks its fields out
// of the bytes. It takes only what it is sure of: a row that is an object
// of valid JSON whose keys are the fields' own names, written plainly.
// Anything else (a syntax error, a truncated document, a row that is no
// object, a key with an escape, a key that is a field's name in another
// letter case, a document nested deeper than encoding/json allows) is
// handed back to a json.Decoder positioned where the scanner stopped, so
// that every document reads, and fails, exactly as it did.

// rowScanner reads the rows of an events array from a stream.
type rowScanner struct {
	src io.Reader
	buf []byte
	pos int // the next byte to read in buf
	// mark is where the row being read starts: fill keeps buf[mark:].
	mark int
	off  int64 // the offset of buf[0] in the document
	eof  bool
	// elements is how many rows the scanner has read.
	elements int
	fields   []member // of the row just read
}

// maxRowDepth is how deep a row may nest: encoding/json's limit of
// 10,000, less the document's object and the events array.
const maxRowDepth = 10000 - 2

// Where a Decoder takes over from the scanner: the document up to there,
// as far as the Decoder needs to know it.
const (
	beforeColon = `{"events"`     // the colon after "events" is next
	firstRow    = `{"events":[`   // the first row, or ], is next
	afterRow    = `{"events":[{}` // a comma, or ], is next
	afterArray  = `{"events":[]`  // the rest of the document is next
)

// startRows takes over the stream after the key "events" (the Decoder has
// not read its colon yet), reads up to the array's first row, and hands
// back to a Decoder when the stream does not go on as expected.
func (r *Reader) startRows() error {
	sc := &rowScanner{src: io.MultiReader(r.dec.Buffered(), r.src), off: r.dec.InputOffset()}
	ok := sc.skipSpace() && sc.buf[sc.pos] == ':'
	if ok {
		sc.pos++
		ok = sc.skipSpace() && sc.buf[sc.pos] == '['
	}
	if !ok {
		// Let the Decoder say what is wrong, from the colon on.
		sc.pos = sc.mark
		if err := r.fallBack(sc, beforeColon); err != nil {
			return err
		}
		return r.openArray(r.dec)
	}
	sc.pos++
	sc.mark = sc.pos
	r.scan = sc
	return nil
}

// fallBack hands the rest of the stream, from sc.pos, to a new Decoder in
// the state the Reader's own Decoder would be in after prefix.
func (r *Reader) fallBack(sc *rowScanner, prefix string) error {
	rest := io.MultiReader(strings.NewReader(prefix), bytes.NewReader(sc.buf[sc.pos:]), sc.src)
	dec := json.NewDecoder(rest)
	dec.UseNumber()
	tokens := 2 // {, "events"
	switch prefix {
	case firstRow, afterRow:
		tokens = 3
	case afterArray:
		tokens = 4
	}
	for range tokens {
		if _, err := dec.Token(); err != nil {
			return err // cannot happen: the prefix is valid
		}
	}
	if prefix == afterRow {
		var row json.RawMessage
		if err := dec.Decode(&row); err != nil {
			return err
		}
	}
	r.base = sc.off + int64(sc.pos) - int64(len(prefix))
	r.dec, r.rows, r.scan = dec, dec, nil
	return nil
}

// nextRow reads the next row. ok is false when it handed back to a
// Decoder, which reads on.
func (r *Reader) nextRow() (ev Event, err error, ok bool) {
	sc := r.scan
	sc.mark = sc.pos
	prefix := firstRow
	if sc.elements > 0 {
		prefix = afterRow
	}
	fallBack := func() (Event, error, bool) {
		sc.pos = sc.mark
		return Event{}, r.fallBack(sc, prefix), false
	}
	if !sc.skipSpace() {
		return fallBack()
	}
	if sc.buf[sc.pos] == ']' {
		sc.pos++
		if err := r.fallBack(sc, afterArray); err != nil {
			return Event{}, err, true
		}
		if err := r.readRest(nil); err != nil {
			return Event{}, err, true
		}
		return Event{}, io.EOF, true
	}
	if sc.elements > 0 {
		if sc.buf[sc.pos] != ',' {
			return fallBack()
		}
		sc.pos++
		if !sc.skipSpace() {
			return fallBack()
		}
	}
	end, whole := sc.object()
	if !whole {
		return fallBack()
	}
	var raw rawEvent
	if !pickFields(sc.buf, sc.fields, &raw) {
		return fallBack()
	}
	sc.pos = end
	sc.elements++
	if raw.Payload != nil {
		raw.Payload = bytes.Clone(raw.Payload)
	}
	ev, err = r.rowEvent(&raw)
	return ev, err, true
}

// rowEvent checks a row's fields, as next does.
func (r *Reader) rowEvent(raw *rawEvent) (Event, error) {
	ev, err := raw.event(r.name, r.index)
	if err != nil {
		return Event{}, err
	}
	if !r.seqs.add(ev.Seq) {
		return Event{}, &RowError{File: r.name, Index: r.index, Seq: ev.Seq, Field: "seq",
			Err: invalidf("duplicate seq %d: each row of a conversation has its own seq", ev.Seq)}
	}
	r.index++
	return ev, nil
}

// seqSet is the seqs of the rows read, to find a duplicate. Rows come in
// seq order, as the product and our exporter write them: while they do,
// their seqs are appended to a sorted slice, which a new seq above the
// last cannot be in. A map, a probe of a large table per row (a tenth of
// a load's reading), holds only the seqs from the first row out of order
// on.
type seqSet struct {
	sorted []int64
	rest   map[int64]struct{}
}

// add adds seq to the set, and reports false when it was there already.
func (s *seqSet) add(seq int64) bool {
	if s.rest == nil && (len(s.sorted) == 0 || seq > s.sorted[len(s.sorted)-1]) {
		s.sorted = append(s.sorted, seq)
		return true
	}
	if _, found := slices.BinarySearch(s.sorted, seq); found {
		return false
	}
	if _, found := s.rest[seq]; found {
		return false
	}
	if s.rest == nil {
		s.rest = make(map[int64]struct{})
	}
	s.rest[seq] = struct{}{}
	return true
}

// fill reads more of the stream into buf, dropping what is before mark.
func (sc *rowScanner) fill() bool {
	if sc.eof {
		return false
	}
	if sc.mark > 0 {
		n := copy(sc.buf, sc.buf[sc.mark:])
		sc.buf = sc.buf[:n]
		sc.pos -= sc.mark
		sc.off += int64(sc.mark)
		sc.mark = 0
	}
	if cap(sc.buf)-len(sc.buf) < 4096 {
		grown := make([]byte, len(sc.buf), max(2*cap(sc.buf), 64<<10))
		copy(grown, sc.buf)
		sc.buf = grown
	}
	n, err := io.ReadAtLeast(sc.src, sc.buf[len(sc.buf):cap(sc.buf)], 1)
	sc.buf = sc.buf[:len(sc.buf)+n]
	if err != nil {
		sc.eof = true
	}
	return n > 0
}

// skipSpace skips white space, reading on as needed, and reports whether
// a byte follows.
func (sc *rowScanner) skipSpace() bool {
	for {
		for sc.pos < len(sc.buf) {
			switch sc.buf[sc.pos] {
			case ' ', '\t', '\n', '\r':
				sc.pos++
			default:
				return true
			}
		}
		if !sc.fill() {
			return false
		}
	}
}

// object finds the end of the object at sc.pos, reading on as needed,
// and reports whether it is whole and valid; sc.members are then the
// spans of its keys and values.
func (sc *rowScanner) object() (int, bool) {
	for {
		end, ok := sc.members(sc.buf, sc.pos)
		if ok {
			return end, true
		}
		// A syntax error well before the end of what is read is one; at
		// the end, more may make it whole.
		if end+16 < len(sc.buf) || !sc.fill() {
			return 0, false
		}
	}
}

// member is where a key (without its quotes) and its value are in buf.
type member struct{ key, value [2]int }

// members scans the object at b[i] as scanValue does, keeping the spans
// of its members.
func (sc *rowScanner) members(b []byte, i int) (int, bool) {
	sc.fields = sc.fields[:0]
	if b[i] != '{' {
		return i, false
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		var m member
		var ok bool
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		m.key[0] = i + 1
		if i, ok = scanString(b, i); !ok {
			return i, false
		}
		m.key[1] = i - 1
		if i = space(b, i); i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = space(b, i+1)
		m.value[0] = i
		depth := 1
		if i, ok = scanValue(b, i, &depth); !ok {
			return i, false
		}
		m.value[1] = i
		sc.fields = append(sc.fields, m)
		if i = space(b, i); i >= len(b) {
			return i, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = space(b, i+1)
	}
}

// scanValue returns the end of the JSON value at b[i], and whether it is
// valid: RFC 8259, as encoding/json checks it.
func scanValue(b []byte, i int, depth *int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if *depth++; *depth > maxRowDepth {
			return len(b), false // not a syntax error the scanner may call
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = space(b, i+1)
		if i < len(b) && b[i] == closing {
			*depth--
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				if i, ok = scanString(b, i); !ok {
					return i, false
				}
				if i = space(b, i); i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = space(b, i+1)
			}
			if i, ok = scanValue(b, i, depth); !ok {
				return i, false
			}
			if i = space(b, i); i >= len(b) {
				return i, false
			}
			if b[i] == closing {
				*depth--
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = space(b, i+1)
		}
	case c == '"':
		return scanString(b, i)
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) {
		return len(b), false
	}
	if string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func scanString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		for j < len(b) && plain[b[j]] {
			j++
		}
		if j >= len(b) {
			return j, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		}
		if j+1 >= len(b) {
			return len(b), false
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if j+6 > len(b) {
				return len(b), false
			}
			for _, h := range b[j+2 : j+6] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return j, false
				}
			}
			j += 6
		default:
			return j, false
		}
	}
}

// scanNumber returns the end of -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?; a
// number is whole only with a byte after it.
func scanNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, i < len(b)
}

// pickFields sets the fields of raw from the members of a valid row
// object, as encoding/json would (the last of a repeated key wins), and
// reports false for a key encoding/json may match otherwise: one with an
// escape, or one that is a field's name in another letter case.
func pickFields(b []byte, fields []member, raw *rawEvent) bool {
	for _, m := range fields {
		value := json.RawMessage(b[m.value[0]:m.value[1]:m.value[1]])
		switch key := b[m.key[0]:m.key[1]]; string(key) {
		case "seq":
			raw.Seq = value
		case "type":
			raw.Type = value
		case "historyVersion":
			raw.HistoryVersion = value
		case "schemaVersion":
			raw.SchemaVersion = value
		case "idempotencyKey":
			raw.IdempotencyKey = value
		case "createdAtMs":
			raw.CreatedAtMs = value
		case "payload":
			raw.Payload = value
		case "actorIdentityId":
			raw.ActorIdentityID = value
		default:
			if !plainKey(key) {
				return false
			}
		}
	}
	return true
}

var fieldNames = []string{"seq", "type", "historyVersion", "schemaVersion", "idempotencyKey", "createdAtMs", "payload", "actorIdentityId"}

// plainKey reports whether a key that is no field's own name is surely
// none of them to encoding/json: no escape, no byte outside ASCII (its
// folding maps some letters onto ASCII ones: ſ onto s, K onto k), and no
// field's name in another letter case.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	for _, f := range fieldNames {
		if len(f) == len(key) && strings.EqualFold(f, string(key)) {
			return false
		}
	}
	return true
}
