package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// Rows are stored as Junior's JSON.stringify writes them: <, > and &
// (and U+2028) as they are, in a payload and in the message a v2 row
// carries as a string, tool arguments included, so a text search finds
// the agent's rows as it finds Junior's. Quotes, backslashes and control
// characters stay escaped.
func TestRowsAreStoredAsJuniorWritesThem(t *testing.T) {
	ctx := t.Context()
	st := open(t)
	const id = "local:web:plain"
	text := "<current-instruction>\nQ&A: \"a\" > b\\c\u2028\x01\n</current-instruction>"
	pi := store.Assistant{Content: []store.Content{{Type: "toolCall", ID: "c1", Name: "webFetch",
		Arguments: json.RawMessage(`{"q":"\u003cx\u003e \u0026 \u00e9 \ud83d\ude00 \/ \\u003c \"\u0022"}`)}}}
	if _, err := st.Create(ctx, store.Conversation{ID: id, Source: "web", SourceJS: json.RawMessage(`{}`)},
		store.Row{Type: "user_message", SchemaVersion: 2, Payload: map[string]any{"message": store.UserText(text, 1), "note": "<b>&</b>"}},
		store.Row{Type: "assistant_message", SchemaVersion: 2, Payload: map[string]any{"message": store.Encode(pi)}}); err != nil {
		t.Fatal(err)
	}
	events, err := st.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		row        int
		want, not  []string
		roundTrip  string // the message's text, decoded
		argsDecode string // the tool call's q, decoded
	}{
		{row: 0,
			want: []string{`<current-instruction>`, `Q&A: \\\"a\\\" > b\\\\c` + "\u2028" + `\\u0001`, `"note": "<b>&</b>"`},
			not:  []string{`\u003c`, `\u0026`, `\u2028`}, roundTrip: text},
		{row: 1,
			want: []string{`<x> & é 😀 / \\\\u003c \\\"\\\"`},
			not:  []string{`\u003cx`, `\u0026`, `\u00e9`, `\ud83d`, `\\/`}, argsDecode: "<x> & é 😀 / \\u003c \"\""},
	}
	for _, tt := range tests {
		raw := string(events[tt.row].Payload)
		for _, w := range tt.want {
			if !strings.Contains(raw, w) {
				t.Errorf("row %d is stored as %s; it lacks %s", tt.row, raw, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(raw, n) {
				t.Errorf("row %d is stored as %s, with %s", tt.row, raw, n)
			}
		}
		var p struct{ Message string }
		if err := json.Unmarshal(events[tt.row].Payload, &p); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Content []struct {
				Text      string
				Arguments struct{ Q string }
			}
		}
		if err := json.Unmarshal([]byte(p.Message), &m); err != nil {
			t.Fatalf("row %d: the message does not decode: %v", tt.row, err)
		}
		if got := m.Content[0].Text; tt.roundTrip != "" && got != tt.roundTrip {
			t.Errorf("row %d: the text reads back as %q; want %q", tt.row, got, tt.roundTrip)
		}
		if got := m.Content[0].Arguments.Q; tt.argsDecode != "" && got != tt.argsDecode {
			t.Errorf("row %d: the arguments read back as %q; want %q", tt.row, got, tt.argsDecode)
		}
	}
}
