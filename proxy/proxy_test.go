package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/cassette"
	"github.com/agentvcr/agentvcr/proxy/wire"
)

// rig is an upstream TLS server, a proxy in front of it, and a client that
// trusts only the proxy's CA.
type rig struct {
	upstream *httptest.Server
	hits     atomic.Int64
	proxy    *Proxy
	client   *http.Client
	front    string // URL of the proxy
}

func newRig(t *testing.T, mode Mode, dir string) *rig {
	t.Helper()
	r := &rig{}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/messages", func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%q,"auth":%q}`, b, req.Header.Get("Authorization"))
	})
	mux.HandleFunc("/v1/stream", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			if i > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			fmt.Fprintf(w, "event: delta\ndata: {\"n\":%d}\n\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/v1/fail", func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, `{"type":"error","error":{"type":"overloaded_error"}}`, 529)
	})
	mux.HandleFunc("/v1/hang", func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-req.Context().Done():
		}
	})
	mux.HandleFunc("/v1/truncated", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: delta\ndata: {\"n\":0}\n\n")
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	mux.HandleFunc("/v1/reset", func(w http.ResponseWriter, req *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	r.upstream = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		mux.ServeHTTP(w, req)
	}))
	t.Cleanup(r.upstream.Close)

	r.proxy, r.client = front(t, r.upstream, mode, dir, Rule{Name: "model", URLPrefix: r.upstream.URL + "/v1/"})
	u, _ := r.client.Transport.(*http.Transport).Proxy(&http.Request{URL: mustParse(r.upstream.URL)})
	r.front = u.String()
	return r
}

// front puts a proxy in front of an upstream TLS server, with the given
// rules, and returns it and a client that goes through it and trusts only
// its CA.
func front(t *testing.T, upstream *httptest.Server, mode Mode, dir string, rules ...Rule) (*Proxy, *http.Client) {
	t.Helper()
	return frontWith(t, upstream, func(p *Proxy) { p.Mode, p.Dir, p.Rules = mode, dir, rules })
}

// frontWith is front with the proxy's configuration set by configure,
// before it starts.
func frontWith(t *testing.T, upstream *httptest.Server, configure func(*Proxy)) (*Proxy, *http.Client) {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := upstream.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.ResponseHeaderTimeout = 2 * time.Second
	p := &Proxy{CA: authority, Allow: []string{upstream.URL}, Upstream: tr}
	configure(p)
	return p, serve(t, p)
}

// serve starts p, serves it on loopback for the test, and returns an
// agent's client that goes through it and trusts its CA.
func serve(t *testing.T, p *Proxy) *http.Client {
	t.Helper()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.Cert)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(client.CloseIdleConnections)
	return client
}

// restart writes what old recorded and starts the next run: a proxy
// configured as old was, on its cassettes, changed by change.
func restart(t *testing.T, upstream *httptest.Server, old *Proxy, change func(*Proxy)) (*Proxy, *http.Client) {
	t.Helper()
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	return frontWith(t, upstream, func(p *Proxy) {
		p.Allow, p.PassthroughUnlisted, p.Rules, p.Mode, p.Dir = old.Allow, old.PassthroughUnlisted, old.Rules, old.Mode, old.Dir
		p.Timing, p.MaxRecord, p.Log, p.Slack, p.HoldTimeout, p.Classify = old.Timing, old.MaxRecord, old.Log, old.Slack, old.HoldTimeout, old.Classify
		change(p)
	})
}

// restart starts the rig's next run with change (see restart).
func (r *rig) restart(t *testing.T, change func(*Proxy)) {
	t.Helper()
	r.proxy, r.client = restart(t, r.upstream, r.proxy, change)
	u, _ := r.client.Transport.(*http.Transport).Proxy(&http.Request{URL: mustParse(r.upstream.URL)})
	r.front = u.String()
}

func (r *rig) post(t *testing.T, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", r.upstream.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestRecordThenReplayWithUpstreamGone(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, ModeAuto, dir)
	resp, body := r.post(t, "/v1/messages", `{"prompt":"hi","id":"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b"}`)
	if resp.Header.Get(Header) != "recorded" || !strings.Contains(body, "echo") {
		t.Fatalf("first request: %s %q", resp.Header.Get(Header), body)
	}
	// The upstream goes away; a new proxy reads the cassette from disk.
	if err := r.proxy.Flush(); err != nil {
		t.Fatal(err)
	}
	r.upstream.Close()
	hits := r.hits.Load()
	p2 := &Proxy{CA: r.proxy.CA, Allow: r.proxy.Allow, Rules: r.proxy.Rules, Dir: dir, Mode: ModeReplay}
	front := httptest.NewServer(p2)
	defer front.Close()
	proxyURL, _ := url.Parse(front.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL),
		TLSClientConfig: r.client.Transport.(*http.Transport).TLSClientConfig}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("POST", r.upstream.URL+"/v1/messages", strings.NewReader(`{"id":"00000000-1111-4222-8333-444444444444","prompt":"hi"}`))
	resp2, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	body2 := string(b2)
	// The recorded response echoed the request's UUID: the replay gives
	// this run's back.
	want := strings.Replace(body, "3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b", "00000000-1111-4222-8333-444444444444", 1)
	if resp2.Header.Get(Header) != "replayed" || body2 != want || r.hits.Load() != hits {
		t.Fatalf("replay: %s %q; want %q (upstream hits %d -> %d)", resp2.Header.Get(Header), body2, want, hits, r.hits.Load())
	}
	if resp2.Close {
		t.Fatal("a replayed response closed the connection")
	}
}

func TestReplayMissIs412AndNothingGoesLive(t *testing.T) {
	r := newRig(t, ModeAuto, t.TempDir())
	r.post(t, "/v1/messages", `{"prompt":"hi","model":"x"}`)
	r.restart(t, func(p *Proxy) { p.Mode = ModeReplay })
	hits := r.hits.Load()
	resp, body := r.post(t, "/v1/messages", `{"prompt":"bye","model":"x"}`)
	if resp.StatusCode != http.StatusPreconditionFailed || resp.Header.Get(Header) != "missed" || r.hits.Load() != hits {
		t.Fatalf("miss: %d %s, upstream hits %d -> %d", resp.StatusCode, resp.Header.Get(Header), hits, r.hits.Load())
	}
	if !strings.Contains(body, `"body.prompt"`) || strings.Contains(body, `"body.model"`) || !strings.Contains(body, "nearestUrl") {
		t.Fatalf("miss body: %s", body)
	}
	if m := r.proxy.Misses(); len(m) != 1 || m[0].Differ[0] != "body.prompt" {
		t.Fatalf("misses %+v", m)
	}
}

// TestReplayOfABrokenRecordingSaysWhere breaks one recording by hand
// after it was recorded. A replay reads a recording only when it serves
// it, so the proxy starts; the broken one, and a miss (which reads the
// whole cassette), answer 502 with the cassette and the line and go
// nowhere, and the other recording still replays.
func TestReplayOfABrokenRecordingSaysWhere(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, ModeAuto, dir)
	r.post(t, "/v1/messages", `{"prompt":"first"}`)
	r.post(t, "/v1/messages", `{"prompt":"second"}`)
	if err := r.proxy.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.Index(b, []byte("    - id: 1\n"))
	method := bytes.Index(b[second:], []byte("        method: POST\n"))
	if second < 0 || method < 0 {
		t.Fatalf("the cassette is not as recorded:\n%s", b)
	}
	line := bytes.Count(b[:second], []byte("\n")) + 1
	b = append(b[:second+method:second+method], b[second+method+len("        method: POST\n"):]...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r.restart(t, func(p *Proxy) { p.Mode = ModeReplay })
	hits := r.hits.Load()
	want := fmt.Sprintf("cassette %s: line %d: interaction 1 has no request method", path, line)
	// A miss reads the cassette whole, which fails: it says where, and
	// the intact recording still replays after it.
	for _, prompt := range []string{"unrecorded", "second"} {
		resp, body := r.post(t, "/v1/messages", `{"prompt":"`+prompt+`"}`)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, want) || r.hits.Load() != hits {
			t.Fatalf("%s: %d %q (want %q), upstream hits %d -> %d", prompt, resp.StatusCode, body, want, hits, r.hits.Load())
		}
	}
	if resp, body := r.post(t, "/v1/messages", `{"prompt":"first"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, "first") {
		t.Fatalf("the intact recording: %d %s", resp.StatusCode, body)
	}
	if st := r.proxy.Stats(); st.Missed != 2 || st.Replayed != 1 {
		t.Fatalf("stats %+v; want one replayed and two missed", st)
	}
}

// lockstep is an upstream that streams an Anthropic message in five
// chunks, one text delta each, and sends a chunk only once its agent has
// the one before (the test says so on acks), gap after that. A proxy that
// held a chunk back would stall the stream: the upstream gives up after
// 10 s and says which chunk its agent never got (stalled), so that a
// test fails on a proxy that buffers without measuring how late anything
// came.
type lockstep struct {
	gap     time.Duration
	acks    chan int
	stalled atomic.Int64 // the chunk whose agent did not get the one before; 0 for none
}

func newLockstep(gap time.Duration) *lockstep { return &lockstep{gap: gap, acks: make(chan int, 100)} }

// lockstepChunks are the chunks it streams.
var lockstepChunks = []string{
	`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}` + "\n\n" +
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" + lockstepDelta(0),
	lockstepDelta(1), lockstepDelta(2), lockstepDelta(3),
	lockstepDelta(4) + `event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}` + "\n\n" +
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n",
}

func lockstepDelta(i int) string {
	return fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%d \"}}\n\n", i)
}

func (l *lockstep) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i, chunk := range lockstepChunks {
		if i > 0 {
			select {
			case <-l.acks:
			case <-time.After(10 * time.Second):
				l.stalled.Store(int64(i))
				return
			}
			time.Sleep(l.gap) // the stream's own pace, which a realtime replay keeps
		}
		io.WriteString(w, chunk)
		w.(http.Flusher).Flush()
	}
}

// readDeltas reads a lockstep stream as its agent, telling acks of each
// text delta as it arrives, and returns how many came.
func readDeltas(t *testing.T, body io.Reader, acks chan<- int) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"text_delta"`) {
			acks <- n
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// stalls measures when the test's process could not run its goroutines
// (the machine busy with other work, a pause of the collector): a probe
// goroutine wakes every millisecond and notes when it ran. With
// GOMAXPROCS 1, the probe and the proxy share one processor, so what
// kept one from running kept the other too.
type stalls struct {
	mu    sync.Mutex
	ticks []time.Time
}

// watchStalls runs the probe, with GOMAXPROCS 1, until t ends.
func watchStalls(t *testing.T) *stalls {
	prev := runtime.GOMAXPROCS(1)
	s := &stalls{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.mu.Lock()
				s.ticks = append(s.ticks, time.Now()) // when it ran, not when its tick was due
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the ticker goroutine did not stop within 10 s")
		}
		runtime.GOMAXPROCS(prev)
	})
	return s
}

// during returns the longest time between a and b that the probe did not
// run, past its period.
func (s *stalls) during(a, b time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var longest time.Duration
	for i := 1; i < len(s.ticks); i++ {
		if s.ticks[i].After(a) && s.ticks[i-1].Before(b) {
			longest = max(longest, s.ticks[i].Sub(s.ticks[i-1])-time.Millisecond)
		}
	}
	if n := len(s.ticks); n > 0 && s.ticks[n-1].Before(b) {
		longest = max(longest, b.Sub(s.ticks[n-1])) // not run since
	}
	return longest
}

// Streams reach the agent as they were sent: live, each chunk as the
// upstream sends it; replayed in realtime, each at its recorded offset,
// never before, and late by no more than 80 ms past the time the process
// could not run; replayed fast, at once. That a chunk is not held back is
// shown by lockstep (the next chunk is sent, or released, only once the
// agent has the one before), not by when the test's goroutines ran; the
// offsets are the proxy's own, from its progress events, against the
// cassette's; and the time the process could not run is measured, not
// guessed (see stalls).
func TestStreamsArriveAsSent(t *testing.T) {
	probe := watchStalls(t)
	ls := newLockstep(100 * time.Millisecond)
	upstream := httptest.NewTLSServer(ls)
	defer upstream.Close()
	dir := t.TempDir()
	p, client := front(t, upstream, ModeAuto, dir, Rule{Name: "model", URLPrefix: upstream.URL + "/", Dialect: wire.Anthropic})
	stream := func(client *http.Client, outcome Outcome, acks chan<- int) {
		t.Helper()
		resp, err := client.Post(upstream.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-test","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if got := OutcomeOf(resp); got != outcome {
			t.Fatalf("X-Agentvcr %q; want %q", got, outcome)
		}
		if n := readDeltas(t, resp.Body, acks); n != 5 {
			t.Fatalf("%s: %d text deltas; want 5", outcome, n)
		}
	}
	stream(client, OutcomeRecorded, ls.acks)
	if i := ls.stalled.Load(); i != 0 {
		t.Fatalf("live: the agent did not get chunk %d of the stream within 10 s: the proxy held it back", i-1)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := cassette.Load(filepath.Join(dir, "model.yaml"))
	if err != nil || len(c.Interactions) != 1 || len(c.Interactions[0].Chunks) != 5 {
		t.Fatalf("cassette: %v, %+v", err, c)
	}
	offset := func(i int) time.Duration { return time.Duration(c.Interactions[0].Chunks[i].After) * time.Millisecond }

	// releases is when the proxy released each chunk of a replay, as its
	// stream events say, and when it could go on after (lockstep: once the
	// agent had the chunk before).
	type release struct{ at, resumed time.Time }
	replay := func(scale float64, lockstep bool) (request, response time.Time, rel []release) {
		t.Helper()
		rp, client := restart(t, upstream, p, func(p *Proxy) { p.Timing = Timing{Scale: scale} })
		got := make(chan int, 100)
		var mu sync.Mutex
		stalled := -1
		defer rp.Subscribe(func(_ context.Context, ev Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case EventRequest:
				request = ev.Time
			case EventResponse:
				response = ev.Time
			case EventStream:
				r := release{at: ev.Time}
				if lockstep && stalled < 0 && len(rel) > 0 {
					mu.Unlock()
					select {
					case <-got:
					case <-time.After(10 * time.Second):
						stalled = len(rel)
					}
					mu.Lock()
				}
				r.resumed = time.Now()
				rel = append(rel, r)
			}
		})()
		stream(client, OutcomeReplayed, got)
		mu.Lock()
		defer mu.Unlock()
		if stalled >= 0 {
			t.Fatalf("replay: the agent did not get chunk %d within 10 s of its release: the proxy held it back", stalled-1)
		}
		if len(rel) != 5 {
			t.Fatalf("replay: %d chunks released; want 5", len(rel))
		}
		return request, response, rel
	}

	// Realtime: chunk i is due at its recorded offset from the replay's
	// start, which comes after the request event and before the response
	// event. It is never released before; and it is released at most
	// 80 ms after it was due and the proxy could go on, past the time the
	// process could not run.
	request, response, rel := replay(1, true)
	for i, r := range rel {
		if early := request.Add(offset(i)).Sub(r.at); early > 0 {
			t.Errorf("realtime replay: chunk %d was released %v before its recorded offset %v", i, early, offset(i))
		}
		from := response.Add(offset(i))
		if i > 0 && rel[i-1].resumed.After(from) {
			from = rel[i-1].resumed
		}
		if late, stall := r.at.Sub(from), probe.during(from, r.at); late > 80*time.Millisecond+stall {
			t.Errorf("realtime replay: chunk %d was released %v after it was due (offset %v); the process could not run for %v of that", i, late, offset(i), stall)
		}
	}
	// Fast: the chunks go as fast as the proxy reads them.
	_, _, rel = replay(0, false)
	if took, stall := rel[4].at.Sub(rel[0].at), probe.during(rel[0].at, rel[4].at); took > (offset(4)-offset(0))/4+stall {
		t.Errorf("fast replay released its chunks over %v (the process could not run for %v of that); live, they came over %v", took, stall, offset(4)-offset(0))
	}
}

func TestCredentialsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, ModeAuto, dir)
	secret := "sk-proj-" + strings.Repeat("Z", 40)
	resp, body := r.post(t, "/v1/messages?api_key=plain-key-123", `{"prompt":"hi"}`, "Authorization", "Bearer "+secret)
	if resp.Header.Get(Header) != "recorded" || !strings.Contains(body, secret) {
		t.Fatalf("the agent must still get the live response: %q", body)
	}
	if err := r.proxy.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, "plain-key-123"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%q written to the cassette", s)
		}
	}
	// The redacted recording still matches the next run's request.
	r.restart(t, func(p *Proxy) { p.Mode = ModeReplay })
	resp, _ = r.post(t, "/v1/messages?api_key=another-key", `{"prompt":"hi"}`, "Authorization", "Bearer other")
	if resp.Header.Get(Header) != "replayed" {
		t.Fatalf("redacted recording did not match: %s", resp.Header.Get(Header))
	}
}

func TestRefusalsAndFailures(t *testing.T) {
	r := newRig(t, ModeAuto, t.TempDir())
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { w.Write([]byte("no")) }))
	defer other.Close()
	resp, err := r.client.Get(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "--allow "+other.URL) {
		t.Fatalf("unlisted origin: %d %q", resp.StatusCode, b)
	}

	resp, _ = r.post(t, "/v1/fail", `{}`)
	if resp.StatusCode != 529 || resp.Header.Get(Header) != "live" {
		t.Fatalf("overloaded: %d %s", resp.StatusCode, resp.Header.Get(Header))
	}
	if r.proxy.Stats().Recorded != 0 {
		t.Fatal("a 5xx response was recorded")
	}
	resp, body := r.post(t, "/v1/reset", `{}`)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "upstream") {
		t.Fatalf("reset: %d %q", resp.StatusCode, body)
	}
	resp, body = r.post(t, "/v1/hang", `{}`)
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(body, "timeout") {
		t.Fatalf("hang: %d %q", resp.StatusCode, body)
	}

	// A stream cut short reaches the agent as cut, and is not recorded.
	req, _ := http.NewRequest("POST", r.upstream.URL+"/v1/truncated", strings.NewReader(`{}`))
	resp, err = r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatal("a truncated stream read as whole")
	}
	if r.proxy.Stats().Recorded != 0 {
		t.Fatal("a truncated stream was recorded")
	}

	// A request the proxy cannot parse.
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.front, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "NOT A REQUEST\r\n\r\n")
	status, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.Contains(status, "400") {
		t.Fatalf("malformed request: %q", status)
	}
}

func TestNoCARefused(t *testing.T) {
	if err := (&Proxy{}).Start(); err != ErrBuiltinCA {
		t.Fatalf("error %v; want ErrBuiltinCA", err)
	}
}

func TestUnknownDialectRefused(t *testing.T) {
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{CA: authority, Dir: t.TempDir(), Rules: []Rule{{Name: "model", Dialect: "gemini"}}}
	if err := p.Start(); err == nil || !strings.Contains(err.Error(), `rule model: unknown dialect "gemini"`) {
		t.Fatalf("error %v", err)
	}
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestCustomValuesAndPassthrough(t *testing.T) {
	r := newRig(t, ModeAuto, t.TempDir())
	p, client := front(t, r.upstream, ModeAuto, t.TempDir(),
		Rule{Name: "model", URLPrefix: r.upstream.URL + "/v1/messages", Values: map[string]string{"request-id": `req_[a-z0-9]+`}})
	r.client = client
	r.post(t, "/v1/messages", `{"prompt":"hi","request":"req_abc123"}`)
	// The agent may have the whole body before the proxy has read its
	// end, which records it.
	for deadline := time.Now().Add(10 * time.Second); p.Stats().Recorded != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d after 10 s; want 1", p.Stats().Recorded)
		}
	}
	resp, body := r.post(t, "/v1/messages", `{"prompt":"hi","request":"req_zzz999"}`)
	if resp.Header.Get(Header) != "replayed" || !strings.Contains(body, "req_zzz999") {
		t.Fatalf("a custom changing value: %s %q", resp.Header.Get(Header), body)
	}

	// Passthrough streams each chunk as the upstream sends it: the
	// upstream sends the next only once the agent has the one before.
	ls := newLockstep(0)
	streaming := httptest.NewTLSServer(ls)
	defer streaming.Close()
	p, client = front(t, streaming, ModeAuto, t.TempDir(), Rule{Name: "stream", URLPrefix: streaming.URL + "/", Mode: ModePassthrough})
	resp, err := client.Post(streaming.URL+"/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if OutcomeOf(resp) != OutcomePassthrough {
		t.Fatalf("X-Agentvcr %q", OutcomeOf(resp))
	}
	if n := readDeltas(t, resp.Body, ls.acks); n != 5 || ls.stalled.Load() != 0 {
		t.Fatalf("passthrough: %d text deltas (want 5); the agent did not get chunk %d within 10 s", n, ls.stalled.Load()-1)
	}
	if st := p.Stats(); st.Passthrough != 1 || st.Recorded != 0 {
		t.Fatalf("stats %+v; want one passthrough, nothing recorded", st)
	}
}

func TestPassthroughUnlisted(t *testing.T) {
	r := newRig(t, ModeAuto, t.TempDir())
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { w.Write([]byte("tunnelled")) }))
	defer other.Close()
	r.restart(t, func(p *Proxy) { p.PassthroughUnlisted = true })
	// The tunnel is untouched: the client sees the upstream's own
	// certificate, not one of the proxy's.
	tr := r.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = other.Client().Transport.(*http.Transport).TLSClientConfig
	resp, err := (&http.Client{Transport: tr}).Get(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "tunnelled" || resp.Header.Get(Header) != "" {
		t.Fatalf("unlisted origin with passthrough: %q %q", b, resp.Header.Get(Header))
	}
}

// lines is a log writer that hands each line to a channel.
type lines chan string

func (l lines) Write(b []byte) (int, error) {
	l <- strings.TrimSpace(string(b))
	return len(b), nil
}

// waitLine returns the first line that holds want, or fails after 10 s.
func waitLine(t *testing.T, l lines, want string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line := <-l:
			if strings.Contains(line, want) {
				return line
			}
		case <-deadline:
			t.Fatalf("no log line with %q", want)
			return ""
		}
	}
}

func TestStreamRecordedWhenTheAgentHangsUpAfterTheLastEvent(t *testing.T) {
	// The agent reads to the last event and hangs up, as the SDKs do after
	// message_stop or [DONE]; the upstream ends its response only after.
	release := make(chan struct{})
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	logs := make(lines, 100)
	p, client := frontWith(t, upstream, func(p *Proxy) {
		p.Mode, p.Dir, p.Rules = ModeRecord, dir, []Rule{{Name: "model", URLPrefix: upstream.URL + "/"}}
		p.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})

	resp, err := client.Post(upstream.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "data: [DONE]" {
	}
	resp.Body.Close() // before the end of the body: the connection goes
	client.CloseIdleConnections()
	close(release)
	waitLine(t, logs, "msg=recorded")
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := cassette.Load(filepath.Join(dir, "model.yaml"))
	if err != nil || len(c.Interactions) != 1 || !strings.HasSuffix(c.Interactions[0].Response.Body, "data: [DONE]\n\n") {
		t.Fatalf("cassette: %v %v", c, err)
	}
}

func TestUnrecordedInteractionsAreLogged(t *testing.T) {
	r := newRig(t, ModeRecord, t.TempDir())
	logs := make(lines, 100)
	r.restart(t, func(p *Proxy) { p.Log = slog.New(slog.NewTextHandler(logs, nil)) })
	if resp, err := r.client.Get(r.upstream.URL + "/v1/fail"); err == nil {
		resp.Body.Close()
	}
	if line := waitLine(t, logs, "not recorded"); !strings.Contains(line, "/v1/fail") || !strings.Contains(line, "529") {
		t.Fatalf("log line %q", line)
	}
	if resp, err := r.client.Get(r.upstream.URL + "/v1/truncated"); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if line := waitLine(t, logs, "not recorded"); !strings.Contains(line, "/v1/truncated") || !strings.Contains(line, "did not arrive whole") {
		t.Fatalf("log line %q", line)
	}
}

func TestAllowedOriginWithoutRuleRecordsAndReplays(t *testing.T) {
	// An origin on the allow list that no rule covers follows the proxy's
	// mode: recorded in a cassette of its own, replayed, and in replay
	// nothing goes live.
	var hits atomic.Int64
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(req.Body)
		fmt.Fprintf(w, `{"echo":%q}`, b)
	}))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	p, client := front(t, upstream, ModeRecord, dir)
	resp, err := client.Post(upstream.URL+"/v1/things", "application/json", strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get(Header); got != "recorded" {
		t.Fatalf("X-Agentvcr %q; want recorded", got)
	}
	name := originRule(upstream.URL) + ".yaml"
	if _, err := cassette.Load(filepath.Join(dir, name)); err != nil {
		t.Fatalf("cassette %s: %v", name, err)
	}

	_, client = front(t, upstream, ModeReplay, dir)
	before := hits.Load()
	resp, err = client.Post(upstream.URL+"/v1/things", "application/json", strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get(Header) != "replayed" || !strings.Contains(string(body), `\"n\":1`) {
		t.Fatalf("replay: %s %s", resp.Header.Get(Header), body)
	}
	resp, err = client.Post(upstream.URL+"/v1/things", "application/json", strings.NewReader(`{"n":2}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPreconditionFailed || hits.Load() != before {
		t.Fatalf("a miss in replay: %d, %d upstream hits; want 412 and none", resp.StatusCode, hits.Load()-before)
	}
}

func TestOriginsAreChecked(t *testing.T) {
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"localhost:48443", "ftp://x", "https://", "https://api.example.com/v1", "https://user@api.example.com"} {
		p := &Proxy{CA: authority, Allow: []string{bad}, Dir: t.TempDir()}
		if err := p.Start(); err == nil || !strings.Contains(err.Error(), "origin") {
			t.Errorf("allow %q: %v; want an error that names the origin", bad, err)
		}
	}
	for _, good := range []string{"https://api.example.com", "http://localhost:48443", "https://API.example.com/"} {
		if _, err := ParseOrigin(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

// records decodes the JSON log records written to it.
type records struct {
	mu   sync.Mutex
	list []map[string]any
}

func (r *records) Write(b []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.list = append(r.list, m)
	r.mu.Unlock()
	return len(b), nil
}

// take returns the records so far with message msg, and forgets all.
func (r *records) take(msg string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, m := range r.list {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	r.list = nil
	return out
}

func TestEachExchangeIsLogged(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(upstream.Close)
	const key = "k3y-planted-in-the-query"
	dir := t.TempDir()
	get := func(client *http.Client, u string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	check := func(got []map[string]any, status float64, outcome string) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("%d exchange records; want 1", len(got))
		}
		g := got[0]
		if g["method"] != "GET" || g["status"] != status || g["outcome"] != outcome || g["level"] != "INFO" {
			t.Fatalf("exchange record %v; want GET %v %s", g, status, outcome)
		}
		if ms, ok := g["ms"].(float64); !ok || ms < 0 {
			t.Fatalf("exchange record %v: no ms", g)
		}
		if u, _ := g["url"].(string); !strings.HasPrefix(u, upstream.URL+"/v1/things") && !strings.HasPrefix(u, "https://127.0.0.1:9/") {
			t.Fatalf("exchange record %v: url", g)
		}
	}

	logs := &records{}
	rules := []Rule{{Name: "things", URLPrefix: upstream.URL + "/"}}
	p, client := frontWith(t, upstream, func(p *Proxy) {
		p.Mode, p.Dir, p.Rules, p.Log = ModeRecord, dir, rules, slog.New(slog.NewJSONHandler(logs, nil))
	})
	get(client, upstream.URL+"/v1/things?api_key="+key)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	all, _ := json.Marshal(logs.list)
	logs.mu.Unlock()
	if strings.Contains(string(all), key) {
		t.Fatalf("the query's key is in the log: %s", all)
	}
	check(logs.take("exchange"), 200, "recorded")
	get(client, "https://127.0.0.1:9/elsewhere")
	check(logs.take("exchange"), 403, "refused")

	_, client = restart(t, upstream, p, func(p *Proxy) { p.Mode = ModeReplay })
	for range 2 { // the second time, the URL is one the proxy redacted before
		get(client, upstream.URL+"/v1/things?api_key="+key)
		logs.mu.Lock()
		all, _ = json.Marshal(logs.list)
		logs.mu.Unlock()
		if strings.Contains(string(all), key) {
			t.Fatalf("the query's key is in the log: %s", all)
		}
		check(logs.take("exchange"), 200, "replayed")
	}
	get(client, upstream.URL+"/v1/things?other=1")
	logs.mu.Lock()
	w := logs.list
	logs.mu.Unlock()
	if len(w) != 2 || w[0]["msg"] != "missed: no recording matches" || w[0]["level"] != "WARN" {
		t.Fatalf("records %v; want a miss warning and its exchange", w)
	}
	check(logs.take("exchange"), 412, "missed")
}

func TestConfigurationIsReadOnceAtStart(t *testing.T) {
	// Start fills in defaults without writing them back, and a field
	// changed later changes nothing: the proxy keeps replaying, and
	// nothing goes live.
	r := newRig(t, ModeReplay, t.TempDir())
	p := r.proxy
	if p.HoldTimeout != 0 || p.MaxRecord != 0 || p.Slack != nil || p.Classify != nil {
		t.Fatalf("Start wrote defaults into the fields: %v %v %v %v", p.HoldTimeout, p.MaxRecord, p.Slack, p.Classify != nil)
	}
	p.Mode = ModeRecord
	p.Allow = nil
	resp, _ := r.post(t, "/v1/messages", `{"prompt":"hi"}`)
	if resp.StatusCode != http.StatusPreconditionFailed || resp.Header.Get(Header) != "missed" || r.hits.Load() != 0 {
		t.Fatalf("after changing Mode and Allow: %d %s, upstream hits %d; want the start's replay: 412 missed, none",
			resp.StatusCode, resp.Header.Get(Header), r.hits.Load())
	}
}

func TestShutdownTakesNoNewRequestsAndLetsThoseInFlightEnd(t *testing.T) {
	var fast atomic.Int64
	arrived, release := make(chan struct{}), make(chan struct{})
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/fast" {
			fast.Add(1)
			fmt.Fprint(w, "ok")
			return
		}
		fmt.Fprint(w, "one,")
		w.(http.Flusher).Flush()
		close(arrived)
		<-release
		fmt.Fprint(w, "two")
	}))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	p, client := front(t, upstream, ModeRecord, dir, Rule{Name: "all", URLPrefix: upstream.URL + "/"})
	get := func(c *http.Client, path string) (int, string, error) {
		resp, err := c.Get(upstream.URL + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	// An intercepted connection the agent keeps open.
	if code, body, err := get(client, "/fast"); code != 200 || body != "ok" || err != nil {
		t.Fatalf("/fast: %d %q %v", code, body, err)
	}
	other := &http.Client{Transport: client.Transport.(*http.Transport).Clone()}
	defer other.CloseIdleConnections()
	slow := make(chan string, 1)
	go func() {
		_, body, err := get(other, "/slow")
		if err != nil {
			body = err.Error()
		}
		slow <- body
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("/slow did not reach the upstream within 10 s")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Shutdown(ctx); err == nil || !strings.Contains(err.Error(), "1 exchanges still in flight") {
		t.Fatalf("Shutdown with /slow in flight: %v", err)
	}
	if code, body, _ := get(client, "/fast"); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopping") || fast.Load() != 1 {
		t.Fatalf("a request on an open connection after Shutdown: %d %q, upstream served /fast %d times", code, body, fast.Load())
	}
	close(release)
	select {
	case body := <-slow:
		if body != "one,two" {
			t.Fatalf("the exchange in flight got %q; want it whole", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the exchange in flight did not end within 10 s of its release")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if c, err := cassette.Load(filepath.Join(dir, "all.yaml")); err != nil || len(c.Interactions) != 2 {
		t.Fatalf("cassette: %v, %v; want /fast and /slow", c, err)
	}
}
