package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/jsontest"
)

const row0 = `{"createdAtMs":1790889786037,"historyVersion":0,"idempotencyKey":"message:m1","payload":{"role":"user","text":"hi","messageId":"m1"},"schemaVersion":1,"seq":0,"type":"message"}`

func doc(events ...string) string {
	return `{"version":1,"surface":"web","events":[` + strings.Join(events, ",") + `]}`
}

func withRow(field, value string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(row0), &m); err != nil {
		panic(err)
	}
	if value == "" {
		delete(m, field)
	} else {
		m[field] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestReadRejectsBadDocuments(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		field  string // the field the error names
		index  int    // for row errors; -1 for document errors
		seq    int64
		reason string // part of the message
	}{
		{"empty input", ``, "", -1, 0, "empty input"},
		{"top level array", `[1]`, "", -1, 0, "must be a JSON object"},
		{"malformed JSON", `{"version":1,`, "", -1, 0, "truncated"},
		{"bad syntax", `{"version":1 "surface":"web"}`, "", -1, 0, "malformed JSON"},
		{"wrong version", `{"version":2,"surface":"web","events":[]}`, "version", -1, 0, "2 is not supported"},
		{"version as string", `{"version":"1","surface":"web","events":[]}`, "version", -1, 0, "must be the number 1"},
		{"missing version", `{"surface":"web","events":[]}`, "version", -1, 0, "missing"},
		{"unknown surface", `{"version":1,"surface":"teams","events":[]}`, "surface", -1, 0, `unknown surface "teams"`},
		{"surface not a string", `{"version":1,"surface":3,"events":[]}`, "surface", -1, 0, "must be a string"},
		{"missing surface", `{"version":1,"events":[]}`, "surface", -1, 0, "missing"},
		{"missing events", `{"version":1,"surface":"web"}`, "events", -1, 0, "missing"},
		{"events not an array", `{"version":1,"surface":"web","events":{}}`, "events", -1, 0, "must be an array"},
		{"events twice", `{"version":1,"surface":"web","events":[],"events":[]}`, "events", -1, 0, "appears twice"},
		{"trailing data", doc() + `{}`, "", -1, 0, "data after the end"},
		{"truncated in events", doc(row0)[:60], "", 0, -1, "truncated"},
		{"row not an object", doc(`5`), "", 0, -1, "must be an event row object"},
		{"duplicate seq", doc(row0, withRow("idempotencyKey", `null`)), "seq", 1, 0, "duplicate seq 0"},
		{"payload not an object", doc(withRow("payload", `"text"`)), "payload", 0, 0, "must be a JSON object"},
		{"payload array", doc(withRow("payload", `[1]`)), "payload", 0, 0, "must be a JSON object"},
		{"payload missing", doc(withRow("payload", ``)), "payload", 0, 0, "missing"},
		{"seq as string", doc(withRow("seq", `"0"`)), "seq", 0, -1, "must be an integer"},
		{"seq fraction", doc(withRow("seq", `1.5`)), "seq", 0, -1, "must be an integer"},
		{"seq negative", doc(withRow("seq", `-1`)), "seq", 0, -1, "out of range"},
		{"seq missing", doc(withRow("seq", ``)), "seq", 0, -1, "missing"},
		{"type missing", doc(withRow("type", ``)), "type", 0, 0, "missing"},
		{"type empty", doc(withRow("type", `""`)), "type", 0, 0, "must not be empty"},
		{"type number", doc(withRow("type", `7`)), "type", 0, 0, "must be a string"},
		{"historyVersion string", doc(withRow("historyVersion", `"0"`)), "historyVersion", 0, 0, "must be an integer"},
		{"schemaVersion missing", doc(withRow("schemaVersion", ``)), "schemaVersion", 0, 0, "missing"},
		{"createdAtMs float", doc(withRow("createdAtMs", `1.5e12`)), "createdAtMs", 0, 0, "must be an integer"},
		{"idempotencyKey number", doc(withRow("idempotencyKey", `12`)), "idempotencyKey", 0, 0, "must be a string or null"},
		{"actorIdentityId object", doc(withRow("actorIdentityId", `{}`)), "actorIdentityId", 0, 0, "must be a string or null"},
		{"identities not array", `{"version":1,"surface":"web","identities":{},"events":[]}`, "identities", -1, 0, "must be an array"},
		{"identity without id", `{"version":1,"surface":"web","identities":[{"kind":"user","provider":"slack","providerSubjectId":"U1"}],"events":[]}`, "identities[0].id", -1, 0, "missing"},
		{"identity duplicate", `{"version":1,"surface":"web","identities":[` + identity("i1") + `,` + identity("i1") + `],"events":[]}`, "identities[1].id", -1, 0, "duplicate identity"},
		{"identities after events", `{"version":1,"surface":"web","events":[],"identities":[]}`, "identities", -1, 0, "comes after events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.input), "bad.json")
			if err == nil {
				t.Fatal("Read succeeded; want an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q: want the file name and %q", err, tt.reason)
			}
			if tt.index < 0 {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %T %v; want *FormatError", err, err)
				}
				if fe.Field != tt.field {
					t.Errorf("Field = %q; want %q", fe.Field, tt.field)
				}
				return
			}
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v; want *RowError", err, err)
			}
			if re.Index != tt.index || re.Seq != tt.seq || re.Field != tt.field {
				t.Errorf("RowError{Index %d, Seq %d, Field %q}; want {%d, %d, %q}", re.Index, re.Seq, re.Field, tt.index, tt.seq, tt.field)
			}
		})
	}
}

func identity(id string) string {
	return `{"id":"` + id + `","kind":"user","provider":"slack","providerTenantId":"T1","providerSubjectId":"U1"}`
}

func TestReadIgnoresUnknownKeys(t *testing.T) {
	in := `{"version":1,"future":{"x":[1,2]},"surface":"slack","events":[` + withRow("extra", `true`) + `],"after":1}`
	rec, err := Read(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Surface != SurfaceSlack || len(rec.Events) != 1 || rec.Events[0].Type != "message" {
		t.Fatalf("got %+v", rec)
	}
}

func TestReadHeaderAfterEvents(t *testing.T) {
	in := `{"events":[` + row0 + `],"identities":[` + identity("i1") + `],"surface":"web","version":1}`
	r := NewReader(strings.NewReader(in), "late.json")
	h, err := r.Header()
	if err != nil {
		t.Fatal(err)
	}
	if h.Surface != SurfaceWeb || len(h.Identities) != 1 {
		t.Fatalf("header %+v", h)
	}
	ev, err := r.Next()
	if err != nil || ev.Seq != 0 {
		t.Fatalf("Next = %+v, %v", ev, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after last = %v; want io.EOF", err)
	}
}

func TestReadErrorIsSticky(t *testing.T) {
	r := NewReader(strings.NewReader(doc(withRow("payload", `1`))), "x")
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("errors %v then %v; want the same error twice", err1, err2)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestReadPassesOnIOErrors(t *testing.T) {
	cause := errors.New("disk on fire")
	_, err := Read(io.MultiReader(strings.NewReader(`{"version":1,"surface":"web","events":[`), failingReader{cause}), "f.json")
	if !errors.Is(err, cause) {
		t.Fatalf("error %v does not wrap the read error", err)
	}
	if errors.Is(err, ErrInvalid) {
		t.Fatalf("a read error %v must not count as invalid input", err)
	}
}

func TestRoundTripJuniorRecording(t *testing.T) {
	path := filepath.Join("testdata", "launch-planning.json")
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Read(bytes.NewReader(in), path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Surface != SurfaceWeb || len(rec.Events) != 37 {
		t.Fatalf("surface %q, %d events; want web, 37", rec.Surface, len(rec.Events))
	}
	var out bytes.Buffer
	if err := Write(&out, rec); err != nil {
		t.Fatal(err)
	}
	if !jsontest.Equal(t, in, out.Bytes()) {
		t.Fatal("the written document differs from the recording as JSON")
	}

	again, err := Read(&out, "written")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(compactEvents(t, rec.Events), compactEvents(t, again.Events)) {
		t.Fatal("events differ after a write and a read")
	}
	// The encoded model message is a string and must come back unchanged.
	want := mustString(t, rec.Events[8].Payload, "message")
	if got := mustString(t, again.Events[8].Payload, "message"); got != want {
		t.Fatalf("payload.message changed:\n got %q\nwant %q", got, want)
	}
}

func TestWriterKeepsExtensions(t *testing.T) {
	actor := "ident-1"
	name := "Ada <Lovelace> & co"
	rec := &Recording{
		Header: Header{
			Version:    Version,
			Surface:    SurfaceSlack,
			Exporter:   &Exporter{Tool: "agentvcr", Profile: "junior", ConversationID: "slack:C1:1.2"},
			Identities: []Identity{{ID: actor, Kind: "user", Provider: "slack", ProviderTenantID: "T1", ProviderSubjectID: "U1", DisplayName: &name}},
		},
		Events: []Event{{Seq: 3, Type: "message", SchemaVersion: 1, CreatedAtMs: 5, Payload: json.RawMessage(`{"text":"a\u2028b <x>"}`), ActorIdentityID: &actor}},
	}
	var out bytes.Buffer
	if err := Write(&out, rec); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"displayName": "Ada <Lovelace> & co"`) {
		t.Errorf("identity name was escaped:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"text": "a\u2028b <x>"`) {
		t.Errorf("payload string was re-encoded:\n%s", out.String())
	}
	got, err := Read(&out, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Header, rec.Header) {
		t.Errorf("header %+v; want %+v", got.Header, rec.Header)
	}
	if e := got.Events[0]; e.ActorIdentityID == nil || *e.ActorIdentityID != actor || e.Seq != 3 {
		t.Errorf("event %+v", e)
	}
}

func TestWriterRefusesBadInput(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, Header{Surface: "teams"})
	if err := w.Write(Event{Payload: json.RawMessage(`{}`)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown surface: %v", err)
	}
	w = NewWriter(&out, Header{Surface: SurfaceWeb})
	err := w.Write(Event{Seq: 4, Payload: json.RawMessage(`[]`)})
	var re *RowError
	if !errors.As(err, &re) || re.Seq != 4 || re.Field != "payload" {
		t.Fatalf("array payload: %v", err)
	}
}

func TestWriteEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, &Recording{Header: Header{Surface: SurfaceWeb}}); err != nil {
		t.Fatal(err)
	}
	rec, err := Read(&out, "")
	if err != nil || len(rec.Events) != 0 {
		t.Fatalf("%+v, %v", rec, err)
	}
}

func compactEvents(t *testing.T, events []Event) []Event {
	t.Helper()
	out := make([]Event, len(events))
	for i, e := range events {
		var buf bytes.Buffer
		if err := json.Compact(&buf, e.Payload); err != nil {
			t.Fatal(err)
		}
		e.Payload = buf.Bytes()
		out[i] = e
	}
	return out
}

func mustString(t *testing.T, payload json.RawMessage, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(m[key], &s); err != nil {
		t.Fatalf("payload.%s: %v", key, err)
	}
	return s
}

func FuzzReadHistory(f *testing.F) {
	f.Add([]byte(doc(row0)))
	f.Add([]byte(`{"events":[` + row0 + `],"surface":"slack","version":1}`))
	f.Add([]byte(`{"version":1,"surface":"web","identities":[` + identity("i") + `],"events":[]}`))
	f.Add([]byte(doc(row0, withRow("seq", "1"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		var out bytes.Buffer
		if err := Write(&out, rec); err != nil {
			t.Fatalf("Write of a readable document: %v", err)
		}
		again, err := Read(&out, "again")
		if err != nil {
			t.Fatalf("reading what Write wrote: %v\n%s", err, out.String())
		}
		if len(again.Events) != len(rec.Events) {
			t.Fatalf("%d events after a round trip; want %d", len(again.Events), len(rec.Events))
		}
	})
}
