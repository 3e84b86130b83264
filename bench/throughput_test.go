package bench

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// jsonRequest is a 117-byte model request.
const jsonRequest = `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"Did deploy 42 go out? Say yes."}]}`

// sseEvents is a 50-event Anthropic stream of about 6 KB, each event its
// own chunk on the wire, as a model sends it.
func sseEvents() []string {
	events := []string{`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n",
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"}
	for i := 0; len(events) < 48; i++ {
		events = append(events, fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %02d of the answer \"}}\n\n", i))
	}
	return append(events, `event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`+"\n\n",
		`event: message_stop`+"\n"+`data: {"type":"message_stop"}`+"\n\n")
}

// loadRig is a local TLS upstream, and the clients that reach it directly
// and through agentvcr's proxy replaying what it recorded from it.
type loadRig struct {
	upstream *httptest.Server
	direct   func() *http.Client
	replay   func() *http.Client
}

func newLoadRig(b *testing.B) *loadRig {
	b.Helper()
	events := sseEvents()
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range events {
				io.WriteString(w, e)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Yes."}],"usage":{"input_tokens":12,"output_tokens":2}}`)
	}))
	b.Cleanup(upstream.Close)
	authority, err := ca.Load(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	upTransport := upstream.Client().Transport.(*http.Transport).Clone()
	p := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModeRecord, Dir: dir, Upstream: upTransport,
		Rules: []proxy.Rule{{Name: "model", Method: "POST", URLPrefix: upstream.URL + "/"}}}
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	via := func(h http.Handler) func() *http.Client {
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		return func() *http.Client {
			return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots},
				MaxIdleConnsPerHost: 64}}
		}
	}
	record := via(p)()
	for _, path := range []string{"/v1/messages", "/v1/stream"} {
		if _, err := fetch(record, upstream.URL+path); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		b.Fatal(err)
	}
	replay := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModeReplay, Dir: dir,
		Rules: []proxy.Rule{{Name: "model", Method: "POST", URLPrefix: upstream.URL + "/"}}}
	return &loadRig{
		upstream: upstream,
		direct: func() *http.Client {
			t := upstream.Client().Transport.(*http.Transport).Clone()
			t.MaxIdleConnsPerHost = 64
			return &http.Client{Transport: t}
		},
		replay: via(replay),
	}
}

// fetch posts the JSON request and reads the whole answer.
func fetch(c *http.Client, u string) (int, error) {
	resp, err := c.Post(u, "application/json", strings.NewReader(jsonRequest))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", u, resp.Status)
	}
	if out := resp.Header.Get(proxy.Header); err == nil && out != "" && out != string(proxy.OutcomeReplayed) && out != string(proxy.OutcomeRecorded) {
		err = fmt.Errorf("%s: %s, not replayed", u, out)
	}
	return int(n), err
}

// rate runs c workers, each on its own kept-alive connection, for d and
// returns the requests per second.
func rate(b *testing.B, client func() *http.Client, u string, c int, d time.Duration) float64 {
	b.Helper()
	clients := make([]*http.Client, c)
	for i := range clients {
		clients[i] = client()
		if _, err := fetch(clients[i], u); err != nil { // warm: the tunnel and the leaf certificate
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := fetch(cl, u); err != nil {
					failed.Store(err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, cl := range clients {
		cl.CloseIdleConnections()
	}
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n.Load()) / elapsed.Seconds()
}

// BenchmarkReplayThroughput is the load of a model gateway: a 117-byte
// JSON POST and a 50-event SSE stream, at 1, 16 and 64 concurrent
// kept-alive connections, sent directly to a local TLS upstream and
// through the proxy replaying it, interleaved three times. It reports
// the median requests per second of each and the ratio replay/direct
// (target >= 0.8), with the ratio's range. mitmproxy's server replay is
// the other baseline; the benchmark says when mitmdump is absent.
//
//	go test ./bench -run '^$' -bench ReplayThroughput -benchtime 1x
func BenchmarkReplayThroughput(b *testing.B) {
	if _, err := exec.LookPath("mitmdump"); err != nil {
		b.Log("mitmdump is not installed (Debian package mitmproxy): no mitmproxy baseline in this run")
	}
	rig := newLoadRig(b)
	for _, body := range []struct{ name, path string }{{"json", "/v1/messages"}, {"sse", "/v1/stream"}} {
		for _, c := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", body.name, c), func(b *testing.B) {
				u := rig.upstream.URL + body.path
				var direct, replay, ratio []float64
				for range 3 {
					d := rate(b, rig.direct, u, c, 700*time.Millisecond)
					r := rate(b, rig.replay, u, c, 700*time.Millisecond)
					direct, replay, ratio = append(direct, d), append(replay, r), append(ratio, r/d)
				}
				b.ReportMetric(median(direct), "direct-req/s")
				b.ReportMetric(median(replay), "replay-req/s")
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(slices.Min(ratio), "ratio-min")
				b.ReportMetric(slices.Max(ratio), "ratio-max")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
