package cassette

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	tests := map[string]*Cassette{"streams": streamCassette(20), "a repeated request": dup, "tricky": trickyCassette()}
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
			want := slices.Concat(serveAll(t, m, whole, loaded), serveAll(t, m, whole, loaded))
			// Kept decoded once served, and read again each time.
			for _, keep := range []int64{keepDecoded, 0} {
				opened, err := Open(m, path)
				if err != nil {
					t.Fatal(err)
				}
				opened.keep = keep
				got := slices.Concat(serveAll(t, m, opened, loaded), serveAll(t, m, opened, loaded))
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("keeping %d bytes, request %d: Open serves %d, Load %d", keep, i, got[i].ID, want[i].ID)
					}
				}
				if opened.cached > keep {
					t.Errorf("keeps %d bytes decoded; want at most %d", opened.cached, keep)
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
				// Not in the layout: read whole at once, and refused.
				if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %q; want the file and %q", err, tt.want)
				}
				return
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

// openWritten writes c and opens it with m.
func openWritten(t *testing.T, m *Matcher, c *Cassette) (*Index, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	x, err := Open(m, path)
	if err != nil {
		t.Fatal(err)
	}
	return x, path
}

// TestOpenKeepsTheCassetteItIndexed writes another cassette over the file
// after Open: the index serves the one it indexed.
func TestOpenKeepsTheCassetteItIndexed(t *testing.T) {
	m := &Matcher{}
	c := streamCassette(2)
	x, path := openWritten(t, m, c)
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

// TestOpenAfterAFailedWholeRead breaks one interaction: a miss, which
// reads the cassette whole, fails, and says where; the intact
// interactions are still served, and every miss after says the same.
func TestOpenAfterAFailedWholeRead(t *testing.T) {
	m := &Matcher{}
	path, c := edit(t, m, "        method: POST\n      response:", "      response:")
	x, err := Open(m, path)
	if err != nil {
		t.Fatal(err)
	}
	unknown := strings.Repeat("0", 32)
	for range 2 {
		if _, ok, err := x.Next(unknown); ok || err == nil || !strings.Contains(err.Error(), "line 3: interaction 0 has no request method") {
			t.Fatalf("a miss: %v, %v; want the broken interaction named", ok, err)
		}
		if _, err := x.Nearest(nil); err == nil {
			t.Fatal("Nearest on a cassette that cannot be read: no error")
		}
	}
	for _, in := range c.Interactions[1:] {
		got, ok, err := x.Next(m.Key(&in.Request))
		if err != nil || !ok || got == nil || got.ID != in.ID {
			t.Fatalf("interaction %d after the failed read: %v, %v, %v", in.ID, got, ok, err)
		}
	}
}

// TestOpenReadsWhileAMissReadsWhole takes an interaction to read as Next
// does, lets a miss read the cassette whole, then reads it: the file it
// read from must still be open.
func TestOpenReadsWhileAMissReadsWhole(t *testing.T) {
	m := &Matcher{}
	c := streamCassette(2)
	x, _ := openWritten(t, m, c)
	x.mu.Lock()
	e, file := x.byKey[m.Key(&c.Interactions[0].Request)][0], x.file // what Next holds when it unlocks
	x.mu.Unlock()
	if _, _, err := x.Next(strings.Repeat("f", 32)); err != nil {
		t.Fatal(err)
	}
	if _, err := x.read(file, e, false); err != nil {
		t.Fatalf("the read Next went on with: %v", err)
	}
}

// TestOpenServesNoHiddenInteraction hides an interaction in another's
// text, a double-quoted scalar that goes on over lines that look like an
// interaction: yaml.v3 reads one interaction, and so must Open.
func TestOpenServesNoHiddenInteraction(t *testing.T) {
	m := &Matcher{}
	hidden := Request{Method: "GET", URL: "https://evil.test/", Host: "h"}
	real := Request{Method: "GET", URL: "https://x.test/"}
	first := "version: 2\ninteractions:\n" +
		"    - id: 0\n      agentvcr_key: " + m.Key(&real) + "\n      request:\n        url: https://x.test/\n        method: GET\n" +
		"      response:\n        code: 200\n        body: |\n            hello\n"
	rest := "    - id: 1\n      agentvcr_key: " + m.Key(&hidden) + "\n      request:\n        url: https://evil.test/\n        host: h\n" +
		"        method: GET\n      response:\n        code: 201\n        status: end\"\n"
	tests := map[string]string{
		"in a body":                        strings.Replace(first, "body: |\n            hello\n", "body: \"start\n", 1) + rest,
		"in a chunk's field yaml.v3 skips": first + "      agentvcr_chunks:\n        - end: 5\n          after_ms: 0\n          x: \"start\n" + rest,
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Decode(strings.NewReader(text), path)
			if err != nil || len(c.Interactions) != 1 {
				t.Fatalf("yaml.v3 reads %v, %v; the test wants one interaction", c, err)
			}
			x, err := Open(m, path)
			if err != nil {
				t.Fatal(err)
			}
			if x.Len() != 1 {
				t.Errorf("Open indexes %d interactions; yaml.v3 reads 1", x.Len())
			}
			if in, ok, err := x.Next(m.Key(&hidden)); ok || err != nil {
				t.Fatalf("Open serves an interaction yaml.v3 does not see: %+v, %v", in, err)
			}
		})
	}
}

// FuzzOpenMatchesYAML mutates written cassettes: where yaml.v3 reads one,
// an index made by Open must hold as many interactions and serve each
// request what an index of yaml.v3's interactions serves.
func FuzzOpenMatchesYAML(f *testing.F) {
	f.Add(written(f, streamCassette(3)))
	for _, in := range trickyCassette().Interactions[:12] {
		f.Add(written(f, &Cassette{Interactions: []*Interaction{in, streamCassette(1).Interactions[0]}}))
	}
	m := &Matcher{}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := Decode(bytes.NewReader(data), "c.yaml")
		if err != nil || len(want.Interactions) == 0 {
			return // Open may serve the readable part of a broken cassette
		}
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		x, err := Open(m, path)
		if err != nil {
			t.Fatalf("yaml.v3 reads the cassette; Open fails: %v", err)
		}
		if x.Len() != len(want.Interactions) {
			t.Fatalf("Open indexes %d interactions; yaml.v3 reads %d", x.Len(), len(want.Interactions))
		}
		whole := NewIndex()
		for _, in := range want.Interactions {
			whole.Add(m, in)
		}
		seen := map[string]bool{}
		for _, in := range want.Interactions {
			key := m.Key(&in.Request)
			if seen[key] {
				continue
			}
			seen[key] = true
			w, _, _ := whole.Next(key)
			g, ok, err := x.Next(key)
			if err != nil || !ok || g.ID != w.ID || g.Response.Body != w.Response.Body || !reflect.DeepEqual(g.Chunks, w.Chunks) {
				t.Fatalf("request of interaction %d: Open serves %+v (%v, %v); yaml.v3's index %d", in.ID, g, ok, err, w.ID)
			}
		}
	})
}

// BenchmarkIndexNext serves each interaction of a 1,000-interaction
// cassette (the 6 KB streams of streamCassette) in turn from an index
// made by Open: kept decoded once served, and read again each time, as
// an index does past the 128 MB it keeps.
//
//	go test ./proxy/cassette -run '^$' -bench IndexNext
func BenchmarkIndexNext(b *testing.B) {
	const n = 1000
	c := streamCassette(n)
	path := filepath.Join(b.TempDir(), "model.yaml")
	if err := c.Write(path); err != nil {
		b.Fatal(err)
	}
	for _, keep := range []int64{keepDecoded, 0} {
		name := "kept"
		if keep == 0 {
			name = "read"
		}
		b.Run(name, func(b *testing.B) {
			x, err := Open(&Matcher{}, path)
			if err != nil {
				b.Fatal(err)
			}
			x.keep = keep
			i := 0
			for b.Loop() {
				if _, ok, err := x.Next(c.Interactions[i%n].Key); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i++
			}
		})
	}
}
