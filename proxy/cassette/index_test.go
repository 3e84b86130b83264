package cassette

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// serveAll asks x for each request of c in turn, and twice for the first,
// and returns what it served.
func serveAll(t *testing.T, m *Matcher, x *Index, c *Cassette) []*Interaction {
	t.Helper()
	var got []*Interaction
	for _, in := range append(c.Interactions, c.Interactions[0]) {
		key := m.Key(&in.Request)
		served, ok, err := x.Next(key)
		if err != nil || !ok {
			t.Fatalf("interaction %d: %v, %v", in.ID, ok, err)
		}
		got = append(got, served)
	}
	return got
}

// TestOpenServesWhatLoadServes replays cassettes from an index made by
// Open and from one of Load's interactions: each request must be served
// the same recording, in the same order.
func TestOpenServesWhatLoadServes(t *testing.T) {
	m := &Matcher{}
	dup := streamCassette(3)
	dup.Interactions[2].Request = dup.Interactions[0].Request // a request made twice
	tricky := trickyCassette()
	readable := tricky.Interactions[:0]
	for _, in := range tricky.Interactions {
		// yaml.v3 cannot read back a header's value of many lines that
		// starts with a space or a newline, as it writes it.
		if s := in.Request.Body; !strings.Contains(s, "\n") || s[0] != ' ' && s[0] != '\n' {
			readable = append(readable, in)
		}
	}
	tricky.Interactions = readable
	tests := map[string]*Cassette{"streams": streamCassette(20), "a repeated request": dup, "tricky": tricky}
	for name, c := range tests {
		t.Run(name, func(t *testing.T) {
			for _, in := range c.Interactions {
				in.Key = m.Key(&in.Request)
			}
			path := filepath.Join(t.TempDir(), "model.yaml")
			if err := c.Write(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			whole := NewIndex()
			for _, in := range loaded.Interactions {
				whole.Add(m, in)
			}
			opened, err := Open(m, path)
			if err != nil {
				t.Fatal(err)
			}
			want, got := serveAll(t, m, whole, loaded), serveAll(t, m, opened, loaded)
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("request %d: Open serves %d, Load %d", i, got[i].ID, want[i].ID)
				}
			}
		})
	}
}

// edit writes a cassette of streamCassette(3) and changes its text.
func edit(t *testing.T, m *Matcher, old, new string) (string, *Cassette) {
	t.Helper()
	c := streamCassette(3)
	path := filepath.Join(t.TempDir(), "model.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("no %q in the cassette", old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, c
}

// TestOpenRereadsAHandEditedRequest edits a request in the file and leaves
// its stored key as it was: the edited request must match, and the one
// it replaced must not.
func TestOpenRereadsAHandEditedRequest(t *testing.T) {
	m := &Matcher{}
	for _, first := range []string{"old", "edited"} {
		t.Run("asked first for the "+first+" request", func(t *testing.T) {
			path, c := edit(t, m, "turn 1,", "turn one,")
			x, err := Open(m, path)
			if err != nil {
				t.Fatal(err)
			}
			old := c.Interactions[1].Request
			edited := old
			edited.Body = strings.Replace(old.Body, "turn 1,", "turn one,", 1)
			asks := []Request{old, edited}
			if first == "edited" {
				asks = []Request{edited, old}
			}
			for _, r := range asks {
				key := m.Key(&r)
				in, ok, err := x.Next(key)
				if err != nil {
					t.Fatal(err)
				}
				if want := r.Body == edited.Body; ok != want || ok && in.ID != 1 {
					t.Fatalf("%.60s: served %v (%v); want %v", r.Body, in, ok, want)
				}
			}
		})
	}
}

// TestOpenNamesABrokenInteraction breaks one interaction by hand: the
// others are served, and it gets an error that names the file and the
// line.
func TestOpenNamesABrokenInteraction(t *testing.T) {
	m := &Matcher{}
	tests := []struct {
		name, old, new, want string
	}{
		{"no method", "        method: POST\n      response:", "      response:", "line 3: interaction 0 has no request method"},
		{"not YAML", "        status: 200 OK\n", "        status: [200 OK\n", "model.yaml: yaml: line"},
		{"a chunk past its body", "          after_ms: 49\n", "          after_ms: 49\n        - end: 99999\n          after_ms: 50\n", "interaction 0: chunk 50 ends at 99999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, c := edit(t, m, tt.old, tt.new)
			x, err := Open(m, path)
			if err != nil {
				t.Fatal(err)
			}
			var failed int
			for _, in := range c.Interactions {
				key := m.Key(&in.Request)
				if _, _, err := x.Next(key); err != nil {
					failed++
					if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
						t.Errorf("error %q; want the file and %q", err, tt.want)
					}
				}
			}
			if failed == 0 {
				t.Fatal("the broken interaction was served")
			}
		})
	}
}

// TestOpenKeepsTheCassetteItIndexed writes another cassette over the file
// after Open: the index serves the one it indexed.
func TestOpenKeepsTheCassetteItIndexed(t *testing.T) {
	m := &Matcher{}
	c := streamCassette(2)
	path := filepath.Join(t.TempDir(), "model.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	x, err := Open(m, path)
	if err != nil {
		t.Fatal(err)
	}
	other := streamCassette(2)
	other.Interactions[0], other.Interactions[1] = other.Interactions[1], other.Interactions[0]
	for _, in := range other.Interactions {
		in.Response.Body = strings.ReplaceAll(in.Response.Body, "word", "WORD")
	}
	if err := other.Write(path); err != nil {
		t.Fatal(err)
	}
	for _, in := range c.Interactions {
		key := m.Key(&in.Request)
		got, ok, err := x.Next(key)
		if err != nil || !ok || got.Response.Body != in.Response.Body {
			t.Fatalf("interaction %d: %v %v, body %.40q", in.ID, ok, err, got.Response.Body)
		}
	}
}
