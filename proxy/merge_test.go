package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// countingUpstream answers each request with its path and how many
// requests came before it, so that two recordings of one request differ.
func countingUpstream(t *testing.T) *httptest.Server {
	var n atomic.Int64
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s #%d", r.URL.Path, n.Add(1))
	}))
	t.Cleanup(up.Close)
	return up
}

func get(t *testing.T, client *http.Client, url string) (outcome, body string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get(Header), string(b)
}

// bodies returns the cassette's response bodies in file order, and by id.
func bodies(t *testing.T, name string) ([]string, map[int]string) {
	t.Helper()
	c, err := cassette.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	byID := map[int]string{}
	for _, in := range c.Interactions {
		all = append(all, in.Response.Body)
		byID[in.ID] = in.Response.Body
	}
	return all, byID
}

// TestProxiesShareADirectory runs two proxies over one cassette
// directory, recording in turns: the cassette ends with what both
// recorded, each proxy's used ids name its own recordings, and a replay
// serves them all.
func TestProxiesShareADirectory(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeRecord} {
		t.Run(string(mode), func(t *testing.T) {
			up := countingUpstream(t)
			dir := t.TempDir()
			rule := Rule{Name: "web", URLPrefix: up.URL + "/"}
			p := map[string]*Proxy{}
			client := map[string]*http.Client{}
			for _, name := range []string{"a", "b"} {
				p[name], client[name] = front(t, up, mode, dir, rule)
			}
			recorded := map[string][]string{} // proxy -> bodies
			for round := range 3 {
				for _, name := range []string{"a", "b"} {
					for _, path := range []string{fmt.Sprintf("/%s/%d", name, round), "/same"} {
						outcome, body := get(t, client[name], up.URL+path)
						if outcome != "recorded" && !(mode == ModeAuto && path == "/same" && outcome == "replayed") {
							t.Fatalf("%s %s: %s", name, path, outcome)
						}
						if outcome == "recorded" {
							recorded[name] = append(recorded[name], body)
						}
					}
					if err := p[name].Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			all, byID := bodies(t, filepath.Join(dir, "web.yaml"))
			for name, want := range recorded {
				var used []string
				for _, id := range p[name].Used()["web"] {
					used = append(used, byID[id])
				}
				for _, body := range want {
					if !slices.Contains(all, body) {
						t.Errorf("%s recorded %q; the cassette lost it:\n%s", name, body, strings.Join(all, "\n"))
					}
				}
				if slices.Sort(used); !slices.Equal(used, slices.Sorted(slices.Values(want))) {
					t.Errorf("%s's used ids name %q; it recorded %q", name, used, want)
				}
			}
			if len(all) != len(recorded["a"])+len(recorded["b"]) {
				t.Errorf("the cassette holds %d recordings; %d were made:\n%s", len(all), len(recorded["a"])+len(recorded["b"]), strings.Join(all, "\n"))
			}

			_, replay := front(t, up, ModeReplay, dir, rule)
			for _, name := range []string{"a", "b"} {
				for round := range 3 {
					path := fmt.Sprintf("/%s/%d", name, round)
					if outcome, body := get(t, replay, up.URL+path); outcome != "replayed" || !strings.HasPrefix(body, path+" #") {
						t.Errorf("replay of %s: %s %q", path, outcome, body)
					}
				}
			}
		})
	}
}

// TestReRecordingReplaces re-records in mode record, in two proxies
// started on the same cassette: what the cassette held of the request
// before is gone, both new recordings stay, in the order they were
// written, and what was not re-recorded, or re-recorded in a scope that
// failed, stays.
func TestReRecordingReplaces(t *testing.T) {
	up := countingUpstream(t)
	dir := t.TempDir()
	rule := Rule{Name: "web", URLPrefix: up.URL + "/"}
	first, c := front(t, up, ModeAuto, dir, rule)
	_, x1 := get(t, c, up.URL+"/x")
	_, y1 := get(t, c, up.URL+"/y")
	if err := first.Flush(); err != nil {
		t.Fatal(err)
	}

	a, ca := front(t, up, ModeRecord, dir, rule)
	b, cb := front(t, up, ModeRecord, dir, rule)
	if err := a.BeginScope("fails"); err != nil {
		t.Fatal(err)
	}
	get(t, ca, up.URL+"/y")
	if _, err := a.EndScope("fails", false); err != nil {
		t.Fatal(err)
	}
	// a's recording is written first, then b's: b started before a
	// wrote, with the same cassette, and keeps what a re-recorded.
	_, xa := get(t, ca, up.URL+"/x")
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	_, xb := get(t, cb, up.URL+"/x")
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	all, _ := bodies(t, filepath.Join(dir, "web.yaml"))
	if want := []string{y1, xa, xb}; !slices.Equal(all, want) {
		t.Fatalf("the cassette holds %q; want %q (%q re-recorded)", all, want, x1)
	}
	_, replay := front(t, up, ModeReplay, dir, rule)
	for _, want := range []string{xa, xb} {
		if outcome, body := get(t, replay, up.URL+"/x"); outcome != "replayed" || body != want {
			t.Fatalf("replay of /x: %s %q; want %q", outcome, body, want)
		}
	}
}

// TestAFailedWriteIsTriedAgain breaks a cassette under a recording proxy:
// its write fails and says so, writes nothing over the file, and the
// next Flush, once the file is mended, writes what was recorded.
func TestAFailedWriteIsTriedAgain(t *testing.T) {
	up := countingUpstream(t)
	dir := t.TempDir()
	p, c := front(t, up, ModeAuto, dir, Rule{Name: "web", URLPrefix: up.URL + "/"})
	name := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(name, []byte("version: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, c, up.URL+"/x")
	if err := p.Flush(); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("Flush over a cassette of another version: %v", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "version: 3\n" {
		t.Fatalf("the cassette was written over: %q", b)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if all, _ := bodies(t, name); !slices.Equal(all, []string{body}) {
		t.Fatalf("the cassette holds %q; want %q", all, body)
	}
}
