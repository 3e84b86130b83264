package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a "quote" and \ back`, `"a \"quote\" and \\ back"`},
		{"<@U1|Ada> & co", `"<@U1|Ada> & co"`},
		{"line\nbreak\ttab\r\b\f", `"line\nbreak\ttab\r\b\f"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"café \u2028", "\"café \u2028\""},
		{"bad \xff byte", "\"bad \ufffd byte\""},
	}
	for _, tt := range tests {
		got := string(Append(nil, tt.in))
		if got != tt.want {
			t.Errorf("Append(%q) = %s; want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("Append(%q) is not JSON: %v", tt.in, err)
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("seed \" \\ \n <>")
	f.Fuzz(func(t *testing.T, s string) {
		var back string
		if err := json.Unmarshal(Append(nil, s), &back); err != nil {
			t.Fatalf("Append(%q) is not JSON: %v", s, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	})
}
