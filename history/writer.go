package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/agentvcr/agentvcr/internal/jsonstr"
)

// Writer writes a recorded-history document one event at a time, in the
// layout of Junior's recordings: two-space indentation, rows with their keys
// in alphabetical order. Payload bytes are re-indented, never re-encoded:
// keys, key order, numbers and strings stay exactly as given.
//
// The header goes first, so a Reader can stream the result.
type Writer struct {
	w       *bufio.Writer
	header  Header
	started bool
	rows    int
	buf     []byte
	err     error
}

// NewWriter returns a Writer that writes the document with header h to w.
// Nothing is written before the first Write or Close.
func NewWriter(w io.Writer, h Header) *Writer {
	if h.Version == 0 {
		h.Version = Version
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), header: h}
}

// Write appends one event row.
func (w *Writer) Write(ev Event) error {
	if w.err != nil {
		return w.err
	}
	if err := w.start(); err != nil {
		return err
	}
	if !isObject(ev.Payload) {
		w.err = &RowError{Index: w.rows, Seq: ev.Seq, Field: "payload", Err: invalidf("must be a JSON object")}
		return w.err
	}
	b := w.buf[:0]
	if w.rows > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n    {\n"...)
	if ev.ActorIdentityID != nil {
		b = appendField(b, "actorIdentityId")
		b = jsonstr.Append(b, *ev.ActorIdentityID)
		b = append(b, ",\n"...)
	}
	b = appendField(b, "createdAtMs")
	b = strconv.AppendInt(b, ev.CreatedAtMs, 10)
	b = append(b, ",\n"...)
	b = appendField(b, "historyVersion")
	b = strconv.AppendInt(b, ev.HistoryVersion, 10)
	b = append(b, ",\n"...)
	b = appendField(b, "idempotencyKey")
	if ev.IdempotencyKey == nil {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, *ev.IdempotencyKey)
	}
	b = append(b, ",\n"...)
	b = appendField(b, "payload")
	b, err := indentPayload(b, ev.Payload)
	if err != nil {
		w.err = &RowError{Index: w.rows, Seq: ev.Seq, Field: "payload", Err: invalidf("malformed JSON: %v", err)}
		return w.err
	}
	b = append(b, ",\n"...)
	b = appendField(b, "schemaVersion")
	b = strconv.AppendInt(b, ev.SchemaVersion, 10)
	b = append(b, ",\n"...)
	b = appendField(b, "seq")
	b = strconv.AppendInt(b, ev.Seq, 10)
	b = append(b, ",\n"...)
	b = appendField(b, "type")
	b = jsonstr.Append(b, ev.Type)
	b = append(b, "\n    }"...)
	w.buf = b
	w.rows++
	_, w.err = w.w.Write(b)
	return w.err
}

// Close writes the end of the document and flushes it. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.start(); err != nil {
		return err
	}
	if w.rows > 0 {
		w.w.WriteString("\n  ]\n}\n")
	} else {
		w.w.WriteString("]\n}\n")
	}
	if err := w.w.Flush(); err != nil {
		w.err = err
		return err
	}
	w.err = errClosed
	return nil
}

var errClosed = errors.New("history: Writer used after Close")

func (w *Writer) start() error {
	if w.started {
		return nil
	}
	w.started = true
	h := w.header
	if _, err := ParseSurface(string(h.Surface)); err != nil {
		w.err = &FormatError{Offset: -1, Field: "surface", Err: invalidf("%v", err)}
		return w.err
	}
	b := []byte("{\n  \"version\": ")
	b = strconv.AppendInt(b, int64(h.Version), 10)
	b = append(b, ",\n  \"surface\": "...)
	b = jsonstr.Append(b, string(h.Surface))
	b = append(b, ",\n"...)
	if h.Exporter != nil {
		v, err := marshalIndent(h.Exporter)
		if err != nil {
			w.err = err
			return err
		}
		b = append(b, "  \"exporter\": "...)
		b = append(b, v...)
		b = append(b, ",\n"...)
	}
	if len(h.Identities) > 0 {
		v, err := marshalIndent(h.Identities)
		if err != nil {
			w.err = err
			return err
		}
		b = append(b, "  \"identities\": "...)
		b = append(b, v...)
		b = append(b, ",\n"...)
	}
	b = append(b, "  \"events\": ["...)
	_, w.err = w.w.Write(b)
	return w.err
}

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func appendField(b []byte, name string) []byte {
	b = append(b, "      \""...)
	b = append(b, name...)
	return append(b, "\": "...)
}

// Write writes a whole recording to w.
func Write(w io.Writer, rec *Recording) error {
	hw := NewWriter(w, rec.Header)
	for _, ev := range rec.Events {
		if err := hw.Write(ev); err != nil {
			return err
		}
	}
	return hw.Close()
}
