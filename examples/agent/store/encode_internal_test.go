package store

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Rows are written as Junior's JSON.stringify writes them: what
// encoding/json escapes and JavaScript does not (<, >, &, U+2028, and in
// a model's raw tool arguments any \uXXXX of a plain character, \/) is
// written as it is, in a payload and in the message a v2 row carries as a
// string; quotes, backslashes, control characters and lone surrogates
// stay escaped, as JSON.stringify escapes them. Each reads back as what
// was written. (That PostgreSQL keeps the text, and a search for a tag
// finds it, fixturetest's TestTurnsWriteTheRowsJuniorWrites shows.)
func TestRowsAreWrittenAsJuniorWritesThem(t *testing.T) {
	args := json.RawMessage(`{"q":"\u003cx\u003e \u0026 \u00e9 \ud83d\ude00 \/ \\u003c \"\u0022 \u0001\u0008 \ud800"}`)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"a payload", map[string]any{"note": "<b>&</b>\u2028", "quote": `"a"\b` + "\n\x01"},
			`{"note":"<b>&</b>` + "\u2028" + `","quote":"\"a\"\\b\n\u0001"}`},
		{"a user message", json.RawMessage(UserText("<current-instruction>\nQ&A\n</current-instruction>", 1)),
			`{"content":[{"type":"text","text":"<current-instruction>\nQ&A\n</current-instruction>"}],"timestamp":1}`},
		{"raw tool arguments", map[string]any{"arguments": args},
			`{"arguments":{"q":"<x> & é 😀 / \\u003c \"\" \u0001\b \ud800"}}`},
	}
	for _, tt := range tests {
		b, err := marshal(tt.v)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(b) != tt.want {
			t.Errorf("%s:\n %s\nwant\n %s", tt.name, b, tt.want)
		}
		var got, want any
		orig, _ := json.Marshal(tt.v)
		json.Unmarshal(b, &got)
		json.Unmarshal(orig, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s reads back as %v; encoding/json's as %v", tt.name, got, want)
		}
	}
}
