package control

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// TestControlEvents is what a test in another language does: read the
// events over SSE, hold the reply, release it.
func TestControlEvents(t *testing.T) {
	up := echo(t)
	p, hc := front(t, up, proxy.ModeAuto, t.TempDir(), proxy.Rule{Name: "slack", URLPrefix: up.URL + "/api/", Mode: proxy.ModeMock})
	ctl := newControl(t, p, "tok")
	sm := p.Slack.(*slack.Mock)
	if code, _ := ctl.do("GET", "/v1/events?hold=stream_event", ""); code != http.StatusBadRequest {
		t.Fatalf("holding stream_event: %d", code)
	}
	events := ctl.events("?hold=reply")

	sm.AddChannel(slack.Channel{ID: "C0EVAL0001", Name: "eval"})
	sm.AddMessage("C0EVAL0001", slack.Message{TS: "1790000000.000100", User: "U0ALICE001", Text: "did it ship?"})
	answered := make(chan time.Time, 1)
	go func() {
		r, err := hc.PostForm(up.URL+"/api/chat.postMessage", map[string][]string{"token": {"xoxb-1"}, "channel": {"C0EVAL0001"}, "thread_ts": {"1790000000.000100"}, "text": {"Done: it shipped."}})
		if err == nil {
			r.Body.Close()
		}
		answered <- time.Now()
	}()
	var reply proxy.Event
	for ev := range events {
		if ev.Type == proxy.EventReply {
			reply = ev
			break
		}
	}
	if !reply.Held || reply.Text != "Done: it shipped." || reply.Channel != "C0EVAL0001" || reply.Thread != "1790000000.000100" || reply.Route != "slack" {
		t.Fatalf("reply %+v", reply)
	}
	select {
	case <-answered:
		t.Fatal("the agent had Slack's answer before the release")
	case <-time.After(150 * time.Millisecond):
	}
	release := func(id int64) int {
		code, _ := ctl.do("POST", fmt.Sprintf("/v1/events/%d/release", id), "")
		return code
	}
	if code := release(reply.ID); code != http.StatusNoContent {
		t.Fatalf("release: %d", code)
	}
	select {
	case <-answered:
	case <-time.After(3 * time.Second):
		t.Fatal("the release did not let the answer through")
	}
	if code := release(reply.ID); code != http.StatusNotFound {
		t.Fatalf("second release: %d", code)
	}
	if len(sm.Messages("C0EVAL0001")) != 2 {
		t.Fatalf("the mock does not have the reply: %+v %v", sm.Calls(""), sm.Messages("C0EVAL0001"))
	}
}

// flushHook is a ResponseWriter that calls a hook at each flush.
type flushHook struct {
	*httptest.ResponseRecorder
	flushes int
	hook    func(n int)
}

func (f *flushHook) Flush() {
	f.flushes++
	f.hook(f.flushes)
}

func TestEventStreamIsSubscribedBeforeItOpens(t *testing.T) {
	// An event made the moment the stream's opening line is out, as a
	// client that starts its request on seeing it makes one, is streamed.
	up := echo(t)
	p, hc := front(t, up, proxy.ModePassthrough, t.TempDir())
	streamed := make(chan struct{})
	w := &flushHook{ResponseRecorder: httptest.NewRecorder(), hook: func(n int) {
		switch n {
		case 1: // the opening line
			post(t, hc, up.URL+"/v1/opened", "{}")
		case 2: // the first event
			close(streamed)
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", "/v1/events", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() {
		(&api{p: p}).streamEvents(w, req)
		close(done)
	}()
	select {
	case <-streamed:
	case <-time.After(5 * time.Second):
		t.Fatal("the event made when the stream opened was never streamed")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream did not end when its request did")
	}
	if !strings.Contains(w.Body.String(), "event: request") {
		t.Fatalf("stream: %q", w.Body.String())
	}
}

// logLines is a log's output that says when a line with want is written.
type logLines struct {
	mu   sync.Mutex
	all  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(b)
	if strings.Contains(string(b), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(b), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// TestASlowEventReaderDoesNotStallTheAgent: a client opens the event
// stream, holding model requests, and stops reading (a real TCP
// connection with a small receive buffer). The agent's requests go on at
// their pace; once the stream is eventBuffer events behind it is dropped:
// its hold is released, the log says so, and the client, reading again,
// finds why before the stream ends. A client that reads keeps its stream.
func TestASlowEventReaderDoesNotStallTheAgent(t *testing.T) {
	up := echo(t)
	logs := &logLines{want: "events: dropped a stream", seen: make(chan struct{})}
	p, hc := frontWith(t, up, func(p *proxy.Proxy) {
		p.Mode, p.Dir = proxy.ModePassthrough, t.TempDir()
		p.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	hc.Timeout = 5 * time.Second // a stalled request fails the test
	ctl := newControl(t, p, "tok")

	// The client that reads: every event, as it comes.
	healthy := ctl.events("")
	var healthyCount atomic.Int64
	healthyDone, modelRequest := make(chan struct{}), make(chan struct{})
	go func() {
		for ev := range healthy {
			if healthyCount.Add(1) == 1 && ev.Type == proxy.EventRequest {
				close(modelRequest) // the first request is the held one
			}
		}
		close(healthyDone)
	}()

	// The client that stops reading once its stream is open.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ctl.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// Small, yet not so small that a window update waits for a probe
	// (Linux announces a window that opened by an MSS, 64 KiB on
	// loopback): the client reads the stream's end when it reads again.
	if err := conn.(*net.TCPConn).SetReadBuffer(256 << 10); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/events?hold=model_request&holdTimeoutMs=3600000 HTTP/1.1\r\nHost: control\r\nAuthorization: Bearer tok\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	stream, err := http.ReadResponse(bufio.NewReaderSize(conn, 64<<10), nil)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the stream did not open: %v %v", err, stream)
	}
	stalled := bufio.NewReaderSize(stream.Body, 64<<10)
	for {
		line, err := stalled.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream did not open: %v", err)
		}
		if strings.HasPrefix(line, ": agentvcr events") {
			break
		}
	}

	// A model request the stalled client holds, for up to an hour.
	held := make(chan error, 1)
	go func() {
		hc := &http.Client{Transport: hc.Transport} // no time limit
		resp, err := hc.Post(up.URL+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"claude-fake","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		held <- err
	}()
	select {
	case <-modelRequest:
	case <-time.After(10 * time.Second):
		t.Fatal("the model request did not reach the proxy")
	}

	// The agent's requests, four at a time, until the stream is dropped.
	var (
		sent    atomic.Int64
		slowest atomic.Int64 // ns
		wg      sync.WaitGroup
		failed  = make(chan error, 4)
	)
	stop := time.After(60 * time.Second)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-logs.seen:
					return
				case <-stop:
					failed <- fmt.Errorf("the stream was not dropped within 60 s and %d requests", sent.Load())
					return
				default:
				}
				start := time.Now()
				resp, err := hc.Get(fmt.Sprintf("%s/flood/%d/%d", up.URL, w, i))
				if err != nil {
					failed <- fmt.Errorf("request %d after %v: %w", sent.Load(), time.Since(start), err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				sent.Add(1)
				if d := int64(time.Since(start)); d > slowest.Load() {
					slowest.Store(d)
				}
			}
		})
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatalf("%v\nlog:\n%s", err, logs)
	}
	t.Logf("%d requests until the drop; the slowest took %v", sent.Load(), time.Duration(slowest.Load()))

	select {
	case err := <-held:
		if err != nil {
			t.Fatalf("the held model request: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dropped stream's hold was not released")
	}

	// Reading again, the client finds why, and the stream's end.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	rest, err := io.ReadAll(stalled)
	if err != nil {
		t.Fatalf("reading the dropped stream to its end: %v; %d bytes, the last:\n%s", err, len(rest), rest[max(0, len(rest)-300):])
	}
	if !bytes.Contains(rest, []byte(": agentvcr: dropped: this stream fell 4096 events behind")) {
		t.Fatalf("the dropped stream does not say why; its last bytes:\n%s", rest[max(0, len(rest)-500):])
	}

	// The client that read still has its stream.
	before := healthyCount.Load()
	resp, err := hc.Get(up.URL + "/after")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for healthyCount.Load() < before+3 {
		select {
		case <-healthyDone:
			t.Fatalf("the reading client's stream ended:\n%s", logs)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reading client got %d events of the last request; want 3", healthyCount.Load()-before)
		}
	}
	if n := strings.Count(logs.String(), "events: dropped a stream"); n != 1 {
		t.Fatalf("%d streams dropped; want the stalled one:\n%s", n, logs)
	}
}
