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

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

func req(method, rawURL, body string, headers ...string) Request {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	u, _ := url.Parse(rawURL)
	return Request{Method: method, URL: rawURL, Host: u.Host, Body: body, Headers: h}
}

func sampleCassette() *Cassette {
	return &Cassette{Interactions: []*Interaction{{
		ID:      0,
		Request: req("POST", "https://api.anthropic.com/v1/messages", `{"model":"claude","stream":true}`, "Content-Type", "application/json"),
		Response: Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"text/event-stream"}},
			Body: "event: a\ndata: {}\n\nevent: b\ndata: {}\n\n"},
		Rule:   "model",
		Chunks: []Chunk{{End: 19, After: 0}, {End: 38, After: 100}},
	}}}
}

func TestSaveLoadAndGoVCRReadsIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.yaml")
	c := sampleCassette()
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600", info.Mode().Perm())
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in := got.Interactions[0]
	if in.Rule != "model" || len(in.Chunks) != 2 || in.Chunks[1].After != 100 || in.Response.Body != c.Interactions[0].Response.Body {
		t.Fatalf("round trip: %+v", in)
	}
	theirs, err := vcr.Load(strings.TrimSuffix(path, ".yaml"))
	if err != nil {
		t.Fatalf("go-vcr cannot read our cassette: %v", err)
	}
	if len(theirs.Interactions) != 1 || theirs.Interactions[0].Request.URL != in.Request.URL || theirs.Interactions[0].Response.Code != 200 {
		t.Fatalf("go-vcr read %+v", theirs.Interactions)
	}
}

func TestRedactionNeverWritesCredentials(t *testing.T) {
	openai := "sk-proj-" + strings.Repeat("A", 40)
	slack := "xoxb-" + strings.Repeat("1", 12) + "-" + strings.Repeat("b", 24)
	c := &Cassette{Interactions: []*Interaction{
		{Request: req("POST", "https://api.openai.com/v1/chat/completions?api_key=plainkey123&model=x", `{"model":"gpt"}`,
			"Authorization", "Bearer "+openai, "Cookie", "sid=abc"),
			Response: Response{Code: 200, Headers: http.Header{"Set-Cookie": {"sid=abc; Path=/"}}, Body: `{"echo":"` + openai + `"}`}},
		{Request: req("POST", "https://slack.com/api/chat.postMessage", "token="+slack+"&channel=C0123&text=hi",
			"Content-Type", "application/x-www-form-urlencoded"),
			Response: Response{Code: 200, Body: `{"ok":true}`}},
	}}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, secret := range []string{openai, slack, "plainkey123", "sid=abc"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%q was written", secret)
		}
	}
	if !strings.Contains(string(b), "channel=C0123") || !strings.Contains(string(b), "model=x") {
		t.Errorf("redaction took more than credentials:\n%s", b)
	}

	// Two secrets run together: the Slack token's shape takes the start
	// of the GitHub token's; no part of either is written.
	github := "ghp_" + strings.Repeat("s", 36)
	c.Interactions[1].Response.Body = `{"ok":true,"text":"` + slack + github + `"}`
	runTogether := filepath.Join(t.TempDir(), "r.yaml")
	if err := c.Save(runTogether); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(runTogether)
	if strings.Contains(string(b), strings.Repeat("s", 12)) || strings.Contains(string(b), strings.Repeat("b", 12)) {
		t.Errorf("a part of a secret was written:\n%s", b)
	}

	// A secret where no rule looks: the scan of the bytes refuses.
	c.Interactions[0].Response.Status = "200 OK " + slack
	survivor := filepath.Join(t.TempDir(), "s.yaml")
	err := c.Save(survivor)
	if !errors.Is(err, ErrSecret) || strings.Contains(err.Error(), slack) {
		t.Fatalf("error %v; want ErrSecret without the value", err)
	}
	if _, err := os.Stat(survivor); !os.IsNotExist(err) {
		t.Fatal("a refused save wrote its file")
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, body, says string
	}{
		{"bad yaml", "version: 2\ninteractions:\n  - id: [\n", "line"},
		{"wrong version", "version: 1\ninteractions: []\n", "line 1: version 1 is not supported"},
		{"no method", "version: 2\ninteractions:\n  - id: 0\n    request:\n      url: https://x\n", "line 3: interaction 0 has no request method"},
		{"chunk outside body", "version: 2\ninteractions:\n  - id: 0\n    request: {method: GET, url: 'https://x'}\n    response: {body: abc}\n    agentvcr_chunks: [{end: 9}]\n", "chunk 0 ends at 9"},
		{"empty", "", "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			os.WriteFile(path, []byte(tt.body), 0o600)
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v; want the file and %q", err, tt.says)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	m := &Matcher{KeyHeaders: []string{"ai-language-model-id"}}
	base := req("POST", "https://ai-gateway.vercel.sh/v3/ai/language-model?b=2&a=1",
		`{"prompt":[{"role":"user","content":"hi"}],"id":"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b","at":"2026-11-29T12:00:00Z","ts":1790000000123}`,
		"ai-language-model-id", "xai/grok-4.5", "Authorization", "Bearer one")
	key := m.Key(&base)
	same := []Request{
		req("POST", "https://AI-GATEWAY.vercel.sh/v3/ai/language-model?a=1&b=2",
			`{"ts":1790000099999,"at":"2026-11-30T01:02:03.456Z","id":"00000000-1111-4222-8333-444444444444","prompt":[{"content":"hi","role":"user"}]}`,
			"ai-language-model-id", "xai/grok-4.5", "Authorization", "Bearer two"),
	}
	for _, r := range same {
		if k := m.Key(&r); k != key {
			t.Errorf("key differs for a request that differs only in changing values, order and credentials")
		}
	}
	other := req("POST", base.URL, base.Body, "ai-language-model-id", "openai/gpt")
	if k := m.Key(&other); k == key {
		t.Error("a different key header gave the same key")
	}
	vals := m.RequestValues(&base)
	if vals["uuid"][0] != "3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b" || vals["epoch-ms"][0] != "1790000000123" {
		t.Fatalf("values %v", vals)
	}
	tmpl := m.Template(`{"echo":"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b","new":"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"}`, vals)
	if tmpl != `{"echo":"<<uuid:1>>","new":"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"}` {
		t.Fatalf("template %s", tmpl)
	}
	if got := Fill(tmpl, m.RequestValues(&same[0])); got != `{"echo":"00000000-1111-4222-8333-444444444444","new":"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"}` {
		t.Fatalf("fill %s", got)
	}
}

func TestIndexOrderAndMiss(t *testing.T) {
	m := &Matcher{}
	var c Cassette
	added := NewIndex()
	for i, body := range []string{`{"messages":["a"]}`, `{"messages":["a"]}`, `{"messages":["a","b"],"model":"x"}`} {
		in := &Interaction{ID: i, Request: req("POST", "https://api.openai.com/v1/chat/completions", body), Response: Response{Code: 200, Body: fmt.Sprint(i)}}
		added.Add(m, in)
		c.Interactions = append(c.Interactions, in)
	}
	path := filepath.Join(t.TempDir(), "model.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	opened, err := Open(m, path)
	if err != nil {
		t.Fatal(err)
	}
	for name, x := range map[string]*Index{"added": added, "opened": opened} {
		t.Run(name, func(t *testing.T) {
			r := req("POST", "https://api.openai.com/v1/chat/completions", `{"messages":["a"]}`)
			key := m.Key(&r)
			for _, want := range []int{0, 1, 1} {
				in, ok, err := x.Next(key)
				if err != nil || !ok || in.ID != want || in.Response.Body != fmt.Sprint(want) {
					t.Fatalf("Next = %v, %v, %v; want id %d", in, ok, err, want)
				}
			}
			miss := req("POST", "https://api.openai.com/v1/chat/completions", `{"messages":["a","c"],"model":"x"}`)
			missKey, parts := m.Key(&miss), m.Parts(&miss)
			if _, ok, err := x.Next(missKey); ok || err != nil {
				t.Fatalf("a different request matched, or failed: %v", err)
			}
			got, err := x.Nearest(parts)
			if err != nil || got.NearestID != 2 || strings.Join(got.Differ, ",") != "body.messages" {
				t.Fatalf("nearest %+v, %v; want id 2 differing in body.messages", got, err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("version: 2\ninteractions:\n  - id: 0\n    request: {method: GET, url: 'https://x'}\n    response: {body: abc}\n    agentvcr_chunks: [{end: 3}]\n"))
	f.Add([]byte("version: 2\ninteractions: []\n"))
	f.Add([]byte("version: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(strings.NewReader(string(data)), "fuzz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for _, in := range c.Interactions {
			for _, ch := range in.Chunks {
				_ = in.Response.Body[:ch.End]
			}
		}
	})
}

func TestRedactURLFindsTokensAnywhereInTheURL(t *testing.T) {
	// Built here so that no token shape is in git.
	r := strings.Repeat
	tokens := map[string]string{
		"slack, percent-encoded in the path": "xox" + "b-1234567890123-" + r("a1B2", 6),
		"stripe":                             "sk_" + "live_" + r("Ab9", 10),
		"hugging face":                       "hf" + "_" + r("abcDEF", 6),
		"gitlab":                             "gl" + "pat-" + r("x9Y", 8),
		"telegram bot":                       "123456789:" + "AA" + r("H7k", 11),
	}
	urls := map[string]string{
		"slack, percent-encoded in the path": "https://api.example.com/v1/g/%78" + tokens["slack, percent-encoded in the path"][1:] + "/x",
		"stripe":                             "https://api.example.com/search?q=" + tokens["stripe"],
		"hugging face":                       "https://api.example.com/search?q=" + tokens["hugging face"],
		"gitlab":                             "https://gitlab.example.com/api?private=" + tokens["gitlab"],
		"telegram bot":                       "https://api.telegram.org/bot" + tokens["telegram bot"] + "/sendMessage",
		"discord webhook":                    "https://discord.com/api/webhooks/123456789012345678/" + r("Zz-9", 17),
	}
	tokens["discord webhook"] = r("Zz-9", 17)
	for name, raw := range urls {
		got := RedactURL(raw)
		decoded, err := url.PathUnescape(got)
		if err != nil {
			decoded = got
		}
		if strings.Contains(got, tokens[name]) || strings.Contains(decoded, tokens[name]) || !strings.Contains(decoded, Redacted) {
			t.Errorf("%s: RedactURL(%q) = %q", name, raw, got)
		}
	}
}

func TestPruneByAStaleUsedFileChangesNothing(t *testing.T) {
	// Two cassettes; the used ids are right for "a" and stale for "b" (b
	// has one recording, id 0): nothing is pruned, from either.
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		c := sampleCassette()
		if name == "a" {
			second := *c.Interactions[0]
			second.ID = 1
			c.Interactions = append(c.Interactions, &second)
		}
		if err := c.Save(filepath.Join(dir, name+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]byte{}
	for _, name := range []string{"a", "b"} {
		before[name], _ = os.ReadFile(filepath.Join(dir, name+".yaml"))
	}
	_, err := Prune(dir, map[string]map[int]bool{"a": {0: true}, "b": {99: true}}, false)
	if !errors.Is(err, ErrUnknownRecording) || !strings.Contains(err.Error(), "rule b, id 99") {
		t.Fatalf("error %v; want ErrUnknownRecording naming rule b, id 99", err)
	}
	for name, b := range before {
		if after, _ := os.ReadFile(filepath.Join(dir, name+".yaml")); string(after) != string(b) {
			t.Errorf("%s.yaml changed by a prune that failed", name)
		}
	}
	removed, err := Prune(dir, map[string]map[int]bool{"a": {0: true}}, false)
	if err != nil || removed["a"] != 1 {
		t.Fatalf("prune by the right ids: %v %v", removed, err)
	}
}

// TestWriteReadsBack writes an interaction per tricky string, the string
// in every place a string goes, and reads the cassette back: every
// interaction must be as it was written.
func TestWriteReadsBack(t *testing.T) {
	c := trickyCassette()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range c.Interactions {
		if got := back.Interactions[i]; !reflect.DeepEqual(got, in) {
			t.Errorf("%q does not read back:\n got %#v\nwant %#v", trickyStrings[i], got, in)
		}
	}
}

// TestWriteIsYAMLs checks that a cassette with no text that needs
// quoting is written byte for byte as yaml.v3 writes it, so that a
// cassette written again does not change.
func TestWriteIsYAMLs(t *testing.T) {
	c := streamCassette(3)
	c.Version = FormatVersion
	got, err := yaml.Marshal(encodeCassette(c))
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("written:\n%s\nyaml.v3:\n%s", got, want)
	}
}
