package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// countingListener counts the writes to the connections it accepts, and
// keeps what they wrote.
type countingListener struct {
	net.Listener
	writes atomic.Int64
	mu     sync.Mutex
	out    []byte
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return &countingConn{Conn: c, l: l}, err
}

// written returns what the connections wrote so far.
func (l *countingListener) written() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.out)
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.l.writes.Add(1)
	c.l.mu.Lock()
	c.l.out = append(c.l.out, b...)
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// tlsRecords counts the TLS records in b, which starts at a record's
// start, by their headers (RFC 8446, section 5.1): a type byte, two of
// version and two of length.
func tlsRecords(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for len(b) > 0 {
		if len(b) < 5 || b[0] < 20 || b[0] > 24 {
			t.Fatalf("not a TLS record: % x", b[:min(len(b), 5)])
		}
		size := 5 + int(b[3])<<8 + int(b[4])
		if len(b) < size {
			t.Fatalf("a TLS record of %d bytes cut at %d", size, len(b))
		}
		b = b[size:]
		n++
	}
	return n
}

// A replayed stream reaches the agent in a few writes and TLS records,
// not three a chunk, and with its chunks as they were recorded.
func TestAReplayedStreamIsWrittenInFewWrites(t *testing.T) {
	var events []string
	for i := range 50 {
		events = append(events, fmt.Sprintf("data: {\"delta\":\"word %d\"}\n\n", i))
	}
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer upstream.Close()
	dir := t.TempDir()
	rec, client := front(t, upstream, ModeRecord, dir, Rule{Name: "model", URLPrefix: upstream.URL + "/"})
	resp, err := client.Post(upstream.URL+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}

	p := &Proxy{CA: rec.CA, Allow: []string{upstream.URL}, Mode: ModeReplay, Dir: dir, Rules: rec.Rules}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(p)
	ln := &countingListener{Listener: srv.Listener}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	// A raw client reads the chunked framing itself: the chunks the
	// agent's parser would see.
	host := strings.TrimPrefix(upstream.URL, "https://")
	tc := tunnel(t, srv.Listener.Addr().String(), host, p)
	before, sent := ln.writes.Load(), len(ln.written())
	body := `{"stream":true}`
	fmt.Fprintf(tc, "POST /v1/messages HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
	tr := bufio.NewReader(tc)
	resp, err = http.ReadResponse(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get(Header) != string(OutcomeReplayed) || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("replay: %s, transfer encoding %v", resp.Header.Get(Header), resp.TransferEncoding)
	}
	// Read the chunked framing raw: the chunks the agent's parser sees
	// are the recorded ones.
	var chunks []string
	for {
		line, err := tr.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var size int
		fmt.Sscanf(strings.TrimSpace(line), "%x", &size)
		if size == 0 {
			break
		}
		data := make([]byte, size+2)
		if _, err := io.ReadFull(tr, data); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, string(data[:size]))
	}
	c, err := cassette.Load(filepath.Join(dir, "model.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := c.Interactions[0]
	var want []string
	for i, ch := range in.Chunks {
		start := 0
		if i > 0 {
			start = in.Chunks[i-1].End
		}
		want = append(want, in.Response.Body[start:ch.End])
	}
	if strings.Join(chunks, "") != strings.Join(events, "") || !slices.Equal(chunks, want) || len(want) < 2 {
		t.Fatalf("replayed chunks %q; recorded %q", chunks, want)
	}
	if n := ln.writes.Load() - before; n > 3 {
		t.Fatalf("the replayed stream took %d writes to the agent's connection; want at most 3", n)
	}
	if n := tlsRecords(t, ln.written()[sent:]); n > 3 {
		t.Fatalf("the replayed stream took %d TLS records; want at most 3", n)
	}
}

// prefixConn reads first what a bufio.Reader already holds.
type prefixConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// An upgraded connection (a WebSocket) through the proxy carries what the
// upstream sends at once, though the agent sends nothing: corking ends at
// the upgrade.
func TestAnUpgradedConnectionIsNotCorked(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "want an upgrade", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhello from upstream\n")
		rw.Flush()
		io.Copy(io.Discard, rw) // until the agent hangs up
	}))
	defer upstream.Close()
	p, _ := front(t, upstream, ModePassthrough, t.TempDir())
	srv := httptest.NewServer(p)
	defer srv.Close()
	tc := tunnel(t, srv.Listener.Addr().String(), strings.TrimPrefix(upstream.URL, "https://"), p)
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", strings.TrimPrefix(upstream.URL, "https://"))
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "hello from upstream\n" {
		t.Fatalf("after the upgrade the agent got %q, %v; want the upstream's first frame without sending anything", line, err)
	}
}

// tunnel opens a CONNECT tunnel through the proxy at addr to host, and a
// TLS client on it that trusts p's CA.
func tunnel(t *testing.T, addr, host string, p *Proxy) *tls.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.Cert)
	tc := tls.Client(&prefixConn{Conn: conn, r: br}, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc
}

// sseEventTimes reads an SSE response and returns when its head and each
// data line came, since start.
func sseEventTimes(t *testing.T, hc *http.Client, url string, start time.Time) (head time.Duration, at []time.Duration) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	head = time.Since(start)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			at = append(at, time.Since(start))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return head, at
}

// A stall fault on a replayed stream holds what comes after its point,
// not what comes before: the head and the first events reach the agent
// before the stall ends.
func TestAStallOnAReplayLetsTheEarlierEventsThrough(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 4 {
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer upstream.Close()
	rec, client := front(t, upstream, ModeRecord, t.TempDir(), Rule{Name: "model", URLPrefix: upstream.URL + "/"})
	if _, at := sseEventTimes(t, client, upstream.URL+"/v1/stream", time.Now()); len(at) != 4 {
		t.Fatalf("recorded %d events", len(at))
	}
	const stall = 800 * time.Millisecond
	for _, after := range []int{0, 2} {
		p, client := restart(t, upstream, rec, func(p *Proxy) { p.Mode = ModeReplay })
		p.AddFault(Fault{Kind: FaultStallStream, After: after, DelayMs: int(stall / time.Millisecond)})
		head, at := sseEventTimes(t, client, upstream.URL+"/v1/stream", time.Now())
		if len(at) != 4 || head >= stall {
			t.Fatalf("stall after %d: the head came at %v, events at %v", after, head, at)
		}
		for i := range after {
			if at[i] >= stall {
				t.Errorf("stall after %d: event %d came at %v, after the stall", after, i+1, at[i])
			}
		}
		if at[after] < stall {
			t.Errorf("stall after %d: event %d came at %v, before the stall ended", after, after+1, at[after])
		}
	}
}

// A request pipelined behind a chunked response does not hold back that
// response's end while it waits for its own upstream.
func TestAPipelinedRequestDoesNotHoldBackTheLastResponse(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(2 * time.Second)
			io.WriteString(w, "slow")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: two\n\n")
	}))
	defer upstream.Close()
	for _, mode := range []Mode{ModePassthrough, ModeRecord} {
		p, _ := frontWith(t, upstream, func(p *Proxy) {
			p.Mode, p.Dir, p.Rules = mode, t.TempDir(), []Rule{{Name: "all", URLPrefix: upstream.URL + "/"}}
			p.Upstream.(*http.Transport).ResponseHeaderTimeout = 10 * time.Second
		})
		srv := httptest.NewServer(p)
		host := strings.TrimPrefix(upstream.URL, "https://")
		tc := tunnel(t, srv.Listener.Addr().String(), host, p)
		start := time.Now()
		fmt.Fprintf(tc, "GET /stream HTTP/1.1\r\nHost: %s\r\n\r\nGET /slow HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		tc.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(tc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if took := time.Since(start); err != nil || string(b) != "data: one\n\ndata: two\n\n" || took > time.Second {
			t.Fatalf("%s: the first response %q, %v, whole after %v; the second request waits 2 s upstream", mode, b, err, took)
		}
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "slow" {
			t.Fatalf("%s: the second response %q", mode, b)
		}
		srv.Close()
		settle(t, p)
	}
}
