package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"
)

// Reader reads a recorded-history document one event at a time.
//
// Header reads everything before the events array; Next then returns the
// rows in file order. Writers put version, surface, exporter and identities
// before events (Junior's writer and ours both do), so a Reader holds one
// row at a time. A document whose version or surface comes after its events
// is still read correctly, with its events held in memory.
type Reader struct {
	name string
	src  io.Reader
	dec  *json.Decoder
	// scan reads the rows while the document lets it (rows.go); base is
	// the offset in the document of the byte a Decoder that took over
	// from it counts as 0.
	scan *rowScanner
	base int64
	// decodeRows, set by tests, leaves every row to the Decoder.
	decodeRows bool

	header    Header
	headerErr error
	started   bool

	// rows decodes the events array: dec itself when streaming, or a
	// decoder over the buffered array when the header came after it.
	rows  *json.Decoder
	index int
	seqs  seqSet
	done  bool
	err   error
}

// NewReader returns a Reader of the document in r. The name is used in
// errors; pass the file name, or "" for standard input.
func NewReader(r io.Reader, name string) *Reader {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return &Reader{name: name, src: r, dec: dec}
}

// Header reads the document up to its events and returns the rest of the
// document: version, surface, exporter and identities. It validates them and
// returns a *FormatError for any problem. Calling it again returns the same.
func (r *Reader) Header() (*Header, error) {
	if !r.started {
		r.started = true
		r.headerErr = r.readHeader()
		if r.headerErr != nil {
			r.err = r.headerErr
		}
	}
	if r.headerErr != nil {
		return nil, r.headerErr
	}
	return &r.header, nil
}

// Next returns the next event row. After the last row it reads and checks
// the rest of the document and returns io.EOF. Validation problems are
// returned as *RowError or *FormatError; after an error Next returns the
// same error again.
func (r *Reader) Next() (Event, error) {
	if _, err := r.Header(); err != nil {
		return Event{}, err
	}
	if r.err != nil {
		return Event{}, r.err
	}
	if r.done {
		return Event{}, io.EOF
	}
	ev, err := r.next()
	if err != nil {
		r.err = err
		if err == io.EOF {
			r.done = true
			r.err = nil
		}
	}
	return ev, err
}

func (r *Reader) next() (Event, error) {
	if r.scan != nil {
		if ev, err, ok := r.nextRow(); ok {
			return ev, err
		}
	}
	if !r.rows.More() {
		if err := r.closeArray(); err != nil {
			return Event{}, err
		}
		if r.rows == r.dec {
			if err := r.readRest(nil); err != nil {
				return Event{}, err
			}
		}
		return Event{}, io.EOF
	}
	var raw rawEvent
	if err := r.rows.Decode(&raw); err != nil {
		return Event{}, r.syntaxError(r.rows, fmt.Sprintf("events[%d]", r.index), err)
	}
	return r.rowEvent(&raw)
}

func (r *Reader) closeArray() error {
	tok, err := r.rows.Token()
	if err != nil {
		return r.syntaxError(r.rows, "events", err)
	}
	if tok != json.Delim(']') {
		return r.formatError(r.rows, "events", invalidf("unexpected %v", tok))
	}
	return nil
}

func (r *Reader) readHeader() error {
	tok, err := r.dec.Token()
	if err != nil {
		if err == io.EOF {
			return r.formatError(r.dec, "", invalidf("empty input: not a recorded-history document"))
		}
		return r.syntaxError(r.dec, "", err)
	}
	if tok != json.Delim('{') {
		return r.formatError(r.dec, "", invalidf("not a recorded-history document: the top level must be a JSON object"))
	}
	var seen fields
	for r.dec.More() {
		key, err := r.key(r.dec)
		if err != nil {
			return err
		}
		if key == "events" {
			seen.events = true
			if seen.version && seen.surface {
				if r.decodeRows {
					return r.openArray(r.dec)
				}
				return r.startRows()
			}
			// The header comes after the events: hold the array and
			// read on, so Header can still answer before Next.
			var buf json.RawMessage
			if err := r.dec.Decode(&buf); err != nil {
				return r.syntaxError(r.dec, "events", err)
			}
			if err := r.readRest(&seen); err != nil {
				return err
			}
			r.rows = json.NewDecoder(bytes.NewReader(buf))
			r.rows.UseNumber()
			return r.openArray(r.rows)
		}
		if err := r.headerField(key, &seen); err != nil {
			return err
		}
	}
	if err := r.endObject(); err != nil {
		return err
	}
	if err := seen.check(r); err != nil {
		return err
	}
	return r.formatError(r.dec, "events", invalidf("missing: a recorded-history document has an events array"))
}

// readRest reads the top-level fields after the events array, up to the end
// of the document, and checks that nothing follows it. seen is nil when the
// header was complete before the events.
func (r *Reader) readRest(seen *fields) error {
	if seen == nil {
		seen = &fields{version: true, surface: true, events: true}
	}
	for r.dec.More() {
		key, err := r.key(r.dec)
		if err != nil {
			return err
		}
		if key == "events" {
			return r.formatError(r.dec, "events", invalidf("appears twice"))
		}
		if seen.version && seen.surface && (key == "identities" || key == "exporter") {
			// Events already went to the caller, who could not use these.
			return r.formatError(r.dec, key, invalidf("comes after events: write it before the events array"))
		}
		if err := r.headerField(key, seen); err != nil {
			return err
		}
	}
	if err := r.endObject(); err != nil {
		return err
	}
	return seen.check(r)
}

func (r *Reader) endObject() error {
	if _, err := r.dec.Token(); err != nil {
		return r.syntaxError(r.dec, "", err)
	}
	if _, err := r.dec.Token(); err != io.EOF {
		if err == nil {
			return r.formatError(r.dec, "", invalidf("data after the end of the document"))
		}
		return r.syntaxError(r.dec, "", err)
	}
	return nil
}

func (r *Reader) openArray(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return r.syntaxError(dec, "events", err)
	}
	if tok != json.Delim('[') {
		return r.formatError(dec, "events", invalidf("must be an array, got %s", describe(tok)))
	}
	r.rows = dec
	return nil
}

func (r *Reader) key(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", r.syntaxError(dec, "", err)
	}
	key, _ := tok.(string)
	return key, nil
}

// fields records which header fields a document had.
type fields struct{ version, surface, events bool }

func (f *fields) check(r *Reader) error {
	switch {
	case !f.version:
		return r.formatError(r.dec, "version", invalidf("missing: a recorded-history document has \"version\": 1"))
	case !f.surface:
		return r.formatError(r.dec, "surface", invalidf("missing: want %q or %q", SurfaceSlack, SurfaceWeb))
	}
	return nil
}

func (r *Reader) headerField(key string, seen *fields) error {
	var raw json.RawMessage
	if err := r.dec.Decode(&raw); err != nil {
		return r.syntaxError(r.dec, key, err)
	}
	switch key {
	case "version":
		seen.version = true
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return r.formatError(r.dec, key, invalidf("must be the number 1, got %s", clip(raw)))
		}
		if n != Version {
			return r.formatError(r.dec, key, invalidf("%d is not supported: this reader reads version %d", n, Version))
		}
		r.header.Version = int(n)
	case "surface":
		seen.surface = true
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return r.formatError(r.dec, key, invalidf("must be a string, got %s", clip(raw)))
		}
		surface, err := ParseSurface(s)
		if err != nil {
			return r.formatError(r.dec, key, invalidf("%v", err))
		}
		r.header.Surface = surface
	case "exporter":
		if !isObject(raw) {
			return r.formatError(r.dec, key, invalidf("must be an object, got %s", clip(raw)))
		}
		var ex Exporter
		if err := json.Unmarshal(raw, &ex); err != nil {
			return r.formatError(r.dec, key, invalidf("%v", err))
		}
		r.header.Exporter = &ex
	case "identities":
		ids, err := parseIdentities(raw)
		if err != nil {
			return r.formatError(r.dec, err.field, err.err)
		}
		r.header.Identities = ids
	}
	return nil
}

type fieldError struct {
	field string
	err   error
}

func parseIdentities(raw json.RawMessage) ([]Identity, *fieldError) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || raw[0] != '[' {
		return nil, &fieldError{"identities", invalidf("must be an array of identity objects")}
	}
	ids := make([]Identity, 0, len(items))
	byID := make(map[string]bool, len(items))
	for i, item := range items {
		field := fmt.Sprintf("identities[%d]", i)
		if !isObject(item) {
			return nil, &fieldError{field, invalidf("must be an object, got %s", clip(item))}
		}
		var id Identity
		if err := json.Unmarshal(item, &id); err != nil {
			return nil, &fieldError{field, invalidf("%v", err)}
		}
		for _, req := range []struct{ name, value string }{
			{"id", id.ID}, {"kind", id.Kind}, {"provider", id.Provider}, {"providerSubjectId", id.ProviderSubjectID},
		} {
			if req.value == "" {
				return nil, &fieldError{field + "." + req.name, invalidf("missing or empty")}
			}
		}
		if id.User != nil && id.User.ID == "" {
			return nil, &fieldError{field + ".user.id", invalidf("missing or empty")}
		}
		if byID[id.ID] {
			return nil, &fieldError{field + ".id", invalidf("duplicate identity id %q", id.ID)}
		}
		byID[id.ID] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// rawEvent is a row as it stands in the file, checked field by field so that
// an error can name the field.
type rawEvent struct {
	Seq             json.RawMessage `json:"seq"`
	Type            json.RawMessage `json:"type"`
	HistoryVersion  json.RawMessage `json:"historyVersion"`
	SchemaVersion   json.RawMessage `json:"schemaVersion"`
	IdempotencyKey  json.RawMessage `json:"idempotencyKey"`
	CreatedAtMs     json.RawMessage `json:"createdAtMs"`
	Payload         json.RawMessage `json:"payload"`
	ActorIdentityID json.RawMessage `json:"actorIdentityId"`
}

func (raw *rawEvent) event(file string, index int) (Event, error) {
	ev := Event{Seq: -1}
	fail := func(field string, err error) (Event, error) {
		return Event{}, &RowError{File: file, Index: index, Seq: ev.Seq, Field: field, Err: err}
	}
	if raw.Seq == nil && raw.Type == nil && raw.Payload == nil {
		return fail("", invalidf("must be an event row object with seq, type and payload"))
	}
	seq, err := integer(raw.Seq, 0, math.MaxInt32)
	if err != nil {
		return fail("seq", err)
	}
	ev.Seq = seq
	if ev.Type, err = str(raw.Type); err != nil || ev.Type == "" {
		if err == nil {
			err = invalidf("must not be empty")
		}
		return fail("type", err)
	}
	if ev.HistoryVersion, err = integer(raw.HistoryVersion, 0, math.MaxInt32); err != nil {
		return fail("historyVersion", err)
	}
	if ev.SchemaVersion, err = integer(raw.SchemaVersion, 0, math.MaxInt32); err != nil {
		return fail("schemaVersion", err)
	}
	if ev.CreatedAtMs, err = integer(raw.CreatedAtMs, math.MinInt64, math.MaxInt64); err != nil {
		return fail("createdAtMs", err)
	}
	if ev.IdempotencyKey, err = optionalStr(raw.IdempotencyKey); err != nil {
		return fail("idempotencyKey", err)
	}
	if ev.ActorIdentityID, err = optionalStr(raw.ActorIdentityID); err != nil {
		return fail("actorIdentityId", err)
	}
	if raw.Payload == nil {
		return fail("payload", invalidf("missing"))
	}
	if !isObject(raw.Payload) {
		return fail("payload", invalidf("must be a JSON object, got %s", clip(raw.Payload)))
	}
	ev.Payload = raw.Payload
	return ev, nil
}

func integer(raw json.RawMessage, lo, hi int64) (int64, error) {
	if raw == nil {
		return 0, invalidf("missing")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, invalidf("must be an integer, got %s", clip(raw))
	}
	if n < lo || n > hi {
		return 0, invalidf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

func str(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", invalidf("missing")
	}
	if raw[0] != '"' {
		return "", invalidf("must be a string, got %s", clip(raw))
	}
	if plainString(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", invalidf("must be a string, got %s", clip(raw))
	}
	return s, nil
}

// plainString reports whether a JSON string token decodes to its bytes
// between the quotes: no escape, no control character, valid UTF-8.
func plainString(raw json.RawMessage) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(body)
}

func optionalStr(raw json.RawMessage) (*string, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	s, err := str(raw)
	if err != nil {
		return nil, invalidf("must be a string or null, got %s", clip(raw))
	}
	return &s, nil
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// clip shortens a JSON value for an error message.
func clip(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return string(v)
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

func (r *Reader) formatError(dec *json.Decoder, field string, err error) error {
	off := int64(-1)
	if dec == r.dec {
		off = r.base + dec.InputOffset()
	}
	return &FormatError{File: r.name, Offset: off, Field: field, Err: err}
}

// syntaxError turns a decoder error into a *FormatError, or a *RowError
// inside the events array; a cut-off document says so, and an error reading
// the input is passed on as it is.
func (r *Reader) syntaxError(dec *json.Decoder, field string, err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		err = invalidf("unexpected end of input: the document is truncated")
	case errors.As(err, &syn):
		err = invalidf("malformed JSON: %v", syn)
	case errors.As(err, &typ):
		err = invalidf("must be an event row object, got a %s", typ.Value)
	default:
		return &FormatError{File: r.name, Offset: -1, Field: field, Err: fmt.Errorf("read: %w", err)}
	}
	if r.rows != nil && dec == r.rows && field != "events" {
		return &RowError{File: r.name, Index: r.index, Seq: -1, Err: err}
	}
	return r.formatError(dec, field, err)
}

// Read reads a whole document into memory.
func Read(r io.Reader, name string) (*Recording, error) {
	hr := NewReader(r, name)
	h, err := hr.Header()
	if err != nil {
		return nil, err
	}
	rec := &Recording{Header: *h}
	for {
		ev, err := hr.Next()
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
		rec.Events = append(rec.Events, ev)
	}
}

// ReadFile reads the document in the named file into memory.
func ReadFile(name string) (*Recording, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, name)
}
