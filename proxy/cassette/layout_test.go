package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// trickyStrings are texts whose YAML takes every form yaml.v3 writes:
// plain, single- and double-quoted, literal with each chomping and an
// indentation digit, and what reads as another type unquoted.
var trickyStrings = []string{
	"", "a", "POST", "200 OK", "https://api.anthropic.com/v1/messages?beta=true&x=1",
	"null", "Null", "~", "true", "no", "123", "0x1F", "1e3", "-1", ".5", "2026-11-29", "2026-11-29T12:00:00Z",
	"key: value", "a #b", "#c", "- item", "? q", "[x]", "{y}", "*ref", "&anchor", "!tag", "%d", "@at", "`tick`", "'quote'", "\"dq\"",
	" leading", "trailing ", "  ", "a  b", "back\\slash", "tab\there", "cr\rhere", "crlf\r\nline",
	"line\n", "line", "two\nlines", "two\nlines\n", "trail\n\n", "trail\n\n\n", "\n", "\n\n", "\nlead", "  indented\nnext",
	"event: a\ndata: {\"x\":1}\n\n", "spaces \nbefore break\n", "a\n  deeper\nback\n", "a\n\n\nb",
	"café ☕ 😀", "caf\ufffd", "nel\u0085x", "ls\u2028x", "nbsp\u00a0x", "bom\ufeffx", "ctl\x01x", "del\x7fx", "\xff\xfe bad utf8",
	strings.Repeat("long ", 400), strings.Repeat("x", 2000) + "\n" + strings.Repeat("y", 2000),
	"--- \n...\n", "a: b\n- c\n", "|\n>", "'", "\"", "\\", "a'b", "a\"b",
}

// trickyCassette is a cassette of an interaction per tricky string, the
// string in every place a string goes.
func trickyCassette() *Cassette {
	c := &Cassette{Version: FormatVersion}
	for i, s := range trickyStrings {
		body := "event: a\n\n" + s
		in := &Interaction{ID: i, Key: fmt.Sprintf("%032x", i*7919), Rule: "model",
			Request: Request{Method: "POST", URL: "https://x.test/" + url.PathEscape(s), Host: s, Body: s,
				Headers: http.Header{"Content-Type": {"application/json"}, "X-Value": {s, s}, "X-Empty": {}},
				Form:    url.Values{"text": {s}}},
			Response: Response{Code: 200, Status: s, Body: body, Headers: http.Header{"Content-Type": {"text/event-stream"}},
				Duration: time.Duration(i) * 1500 * time.Microsecond},
			Chunks: []Chunk{{End: 10, After: 0}, {End: len(body), After: int64(i)}}}
		if !strings.Contains(s, "\n") {
			in.Request.Form[s] = []string{"v"} // yaml.v3 writes a key of many lines as "? |", left to it
		}
		if i%3 == 0 {
			in.Response.Proto, in.Response.ProtoMajor, in.Response.ProtoMinor = "HTTP/1.1", 1, 1
			in.Request.Headers = http.Header{}
			in.Chunks = nil
		}
		c.Interactions = append(c.Interactions, in)
	}
	return c
}

// streamCassette is n model requests and their 50-chunk streams, as
// the proxy records them.
func streamCassette(n int) *Cassette {
	c := &Cassette{}
	m := &Matcher{}
	for i := range n {
		var body strings.Builder
		var chunks []Chunk
		for j := range 50 {
			fmt.Fprintf(&body, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", j)
			chunks = append(chunks, Chunk{End: body.Len(), After: int64(j)})
		}
		in := &Interaction{ID: i, Rule: "model", Chunks: chunks,
			Request: Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
				Body:    fmt.Sprintf(`{"model":"claude-haiku-4-5","stream":true,"messages":[{"role":"user","content":"turn %d, at 2026-11-29T12:00:00Z"}]}`, i),
				Headers: http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"<<redacted>>"}}},
			Response: Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"text/event-stream"}}, Body: body.String()}}
		key := m.Key(&in.Request)
		in.Key = key
		c.Interactions = append(c.Interactions, in)
	}
	return c
}

// written is what Write writes for c.
func written(t testing.TB, c *Cassette) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameAsYAML checks the fast path against yaml.v3 on data: when it reads
// data, it must read what yaml.v3 reads, or fail as yaml.v3 fails. It
// reports whether the fast path read it.
func sameAsYAML(t *testing.T, data []byte) bool {
	t.Helper()
	fast, err := decodeLayout(data, "c.yaml")
	if errors.Is(err, errLayout) {
		return false
	}
	want, wantErr := Decode(bytes.NewReader(data), "c.yaml")
	switch {
	case err != nil && wantErr == nil:
		t.Fatalf("the fast path fails (%v) where yaml.v3 reads the cassette", err)
	case err != nil && err.Error() != wantErr.Error():
		t.Fatalf("the fast path fails with %q; yaml.v3 with %q", err, wantErr)
	case err == nil && wantErr != nil:
		t.Fatalf("the fast path reads a cassette yaml.v3 refuses (%v):\n%s", wantErr, data)
	case err == nil && !reflect.DeepEqual(fast, want):
		for i := range want.Interactions {
			if i < len(fast.Interactions) && !reflect.DeepEqual(fast.Interactions[i], want.Interactions[i]) {
				t.Fatalf("interaction %d: the fast path reads\n%#v\nyaml.v3 reads\n%#v", i, fast.Interactions[i], want.Interactions[i])
			}
		}
		t.Fatalf("the fast path reads %d interactions; yaml.v3 %d", len(fast.Interactions), len(want.Interactions))
	}
	return true
}

func TestLayoutReadsWhatYAMLReads(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "recorded.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		fast bool // the fast path must read it
	}{
		{"recorded", recorded, false}, // one body holds a raw U+2028
		{"streams", written(t, streamCassette(3)), true},
		{"empty", written(t, &Cassette{}), true},
		{"tricky", written(t, trickyCassette()), false},
		{"go-vcr's two-space indent", []byte("version: 2\ninteractions:\n  - id: 0\n    request:\n      url: https://x\n      method: GET\n"), false},
		{"no method", []byte("version: 2\ninteractions:\n    - id: 0\n      request:\n        url: https://x\n"), true},
		{"chunk past the body", []byte("version: 2\ninteractions:\n    - id: 0\n      request:\n        url: https://x\n        method: GET\n      response:\n        body: abc\n      agentvcr_chunks:\n        - end: 4\n          after_ms: 0\n"), true},
		{"no newline at the end", []byte("version: 2\ninteractions:\n    - id: 0\n      request:\n        url: https://x\n        method: GET"), false},
		{"comment", []byte("version: 2\ninteractions:\n    - id: 0 # first\n      request:\n        url: https://x\n        method: GET\n"), false},
		{"an escaped slash, which yaml.v3 refuses", []byte("version: 2\ninteractions:\n    - id: 0\n      request:\n        url: https://x\n        method: GET\n        body: \"a\\/b\"\n"), false},
		{"repeated key", []byte("version: 2\ninteractions:\n    - id: 0\n      request:\n        url: https://x\n        url: https://y\n        method: GET\n"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if fast := sameAsYAML(t, tt.data); tt.fast && !fast {
				t.Fatal("the fast path does not read it")
			}
		})
	}
}

// TestLayoutReadsMostTrickyStrings holds the fast path to reading each of
// the tricky strings but those it is meant to leave to yaml.v3, so that a
// decoder that refuses everything does not pass as correct.
func TestLayoutReadsMostTrickyStrings(t *testing.T) {
	slow := 0
	for i, in := range trickyCassette().Interactions {
		data := written(t, &Cassette{Interactions: []*Interaction{in}})
		if !sameAsYAML(t, data) {
			slow++
			// Left to yaml.v3: what the fast path refuses to read
			// (tabs, other line breaks, what is not printable), and a
			// key too long to be a simple one.
			s := trickyStrings[i]
			refused := strings.ContainsAny(s, "\t\r\x01\x7f\u0085\u2028\ufeff") || !utf8.ValidString(s)
			if !refused && len(s) <= maxKey {
				t.Errorf("the fast path does not read %q", s)
			}
		}
	}
	if slow > 8 {
		t.Errorf("%d of %d left to yaml.v3", slow, len(trickyStrings))
	}
}

// FuzzLayoutMatchesYAML mutates written cassettes: whatever the fast path
// reads, yaml.v3 must read the same.
func FuzzLayoutMatchesYAML(f *testing.F) {
	f.Add(written(f, trickyCassette()))
	f.Add(written(f, streamCassette(2)))
	for _, in := range trickyCassette().Interactions[:20] {
		f.Add(written(f, &Cassette{Interactions: []*Interaction{in}}))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "recorded.yaml")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsYAML(t, data)
	})
}

// printableByRune is printable one rune at a time, as its comment says.
func printableByRune(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			return false
		case r == '\n':
		case r < 0x20, r == 0x7f, 0x80 <= r && r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return false
		}
		b = b[n:]
	}
	return true
}

// FuzzPrintable holds printable's eight-bytes-at-once path to the rune
// by rune reading of what it accepts.
func FuzzPrintable(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add([]byte(s + "        plain ASCII, eight at a time\n" + s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := printable(b), printableByRune(b); got != want {
			t.Fatalf("printable(%q) = %v; want %v", b, got, want)
		}
	})
}
