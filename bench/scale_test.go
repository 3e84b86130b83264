package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// scaleRoleEnv makes the test binary start a replaying proxy on the
// cassettes of the directory it names, and report its start-up; with
// scaleServeEnv set as well, it then serves the proxy until its stdin
// closes, and reports its memory after.
const (
	scaleRoleEnv  = "AGENTVCR_BENCH_SCALE_DIR"
	scaleServeEnv = "AGENTVCR_BENCH_SCALE_SERVE"
)

type scaleStart struct {
	StartMs float64
	RSS     int64
	// Proxy and CA are where it serves, when it serves.
	Proxy string `json:",omitempty"`
	CA    []byte `json:",omitempty"`
}

// startProxy is the child's side: start a replaying proxy on dir, and
// print how long that took and the resident memory after it.
func startProxy(dir string) int {
	authority, err := ca.Load(filepath.Join(dir, "ca"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := &proxy.Proxy{CA: authority, Mode: proxy.ModeReplay, Dir: dir, Allow: []string{"https://api.anthropic.com"},
		Rules: []proxy.Rule{{Name: "model", Method: "POST", URLPrefix: "https://api.anthropic.com/"}}}
	start := time.Now()
	if err := p.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	took := time.Since(start)
	s := scaleStart{StartMs: float64(took.Microseconds()) / 1000, RSS: procStatus(os.Getpid(), "VmRSS")}
	if os.Getenv(scaleServeEnv) != "" {
		srv := httptest.NewServer(p)
		defer srv.Close()
		s.Proxy, s.CA = srv.URL, authority.Cert.Raw
	}
	line, _ := json.Marshal(s)
	fmt.Println(string(line))
	if s.Proxy != "" {
		io.Copy(io.Discard, os.Stdin)
		line, _ := json.Marshal(scaleStart{RSS: procStatus(os.Getpid(), "VmRSS")})
		fmt.Println(string(line))
	}
	runtime.KeepAlive(p) // its cassettes are what the memory holds
	return 0
}

// scaleRequest is the body of the i-th request of the scale cassette.
func scaleRequest(i int) string {
	return fmt.Sprintf(`{"model":"claude-haiku-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":%q},{"role":"user","content":"turn %d"}]}`,
		strings.Repeat("Summarize the incident timeline so far. ", 22), i)
}

// scaleCassette writes a model cassette of n interactions: each a 1 KB
// request and the 6 KB stream of sseEvents, in its chunks.
func scaleCassette(tb testing.TB, dir string, n int) {
	tb.Helper()
	events := sseEvents()
	var body strings.Builder
	var chunks []cassette.Chunk
	for i, e := range events {
		body.WriteString(e)
		chunks = append(chunks, cassette.Chunk{End: body.Len(), After: int64(i)})
	}
	m := &cassette.Matcher{}
	x := cassette.NewIndex()
	c := &cassette.Cassette{}
	for i := range n {
		req := scaleRequest(i)
		in := &cassette.Interaction{ID: i, Rule: "model", Chunks: chunks,
			Request:  cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Body: req, Headers: http.Header{"Content-Type": {"application/json"}}},
			Response: cassette.Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"text/event-stream"}}, Body: body.String()}}
		x.Add(m, in)
		c.Interactions = append(c.Interactions, in)
	}
	if err := c.Write(filepath.Join(dir, "model.yaml")); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReplayScale starts a replaying proxy, in a process of its own,
// on a cassette of 10, 1,000 and 10,000 interactions (a 1 KB request and
// a 6 KB, 50-chunk stream each), and reports its start-up time and its
// resident memory after it (targets at 10,000: 0.2 s and 80 MB), the best
// of 3 starts. Then it serves the three proxies, pinned to a core of
// their own as BenchmarkReplayThroughput does, with 16 concurrent
// requests at a time, each for the next interaction of its cassette in
// turn, so that at 10,000 most are served for the first time. The runs
// (1.5 s each) are interleaved five times, as this machine's speed drifts
// within seconds; it reports the median req/s,
// its ratio to the 10-interaction figure of the same round (target >=
// 0.8 at 10,000) with the range, and each proxy's memory after.
//
//	go test ./bench -run '^$' -bench ReplayScale -benchtime 1x
func BenchmarkReplayScale(b *testing.B) {
	sizes := []int{10, 1000, 10000}
	type scale struct {
		start, after scaleStart
		served       scaleStart
		stop         func() string
		rates        []float64
		ratios       []float64
	}
	runs := make([]*scale, len(sizes))
	for i, n := range sizes {
		s := &scale{}
		runs[i] = s
		dir := b.TempDir()
		scaleCassette(b, dir, n)
		for j := range 3 {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), scaleRoleEnv+"="+dir)
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("the proxy did not start: %v", err)
			}
			var st scaleStart
			if err := json.Unmarshal(out, &st); err != nil {
				b.Fatalf("the proxy said %q: %v", out, err)
			}
			if j == 0 || st.StartMs < s.start.StartMs {
				s.start = st
			}
		}
		s.stop, _ = startPinned(b, &s.served, scaleRoleEnv+"="+dir, scaleServeEnv+"=1")
	}
	for range 5 {
		for i, n := range sizes {
			s := runs[i]
			client := func() *http.Client { return trusting(s.served.Proxy, s.served.CA) }
			r := rate(b, client, "https://api.anthropic.com/v1/messages",
				func(i int64) string { return scaleRequest(int(i % int64(n))) }, 16, 1500*time.Millisecond)
			s.rates = append(s.rates, r)
			s.ratios = append(s.ratios, r/runs[0].rates[len(s.rates)-1])
		}
	}
	for i, n := range sizes {
		s := runs[i]
		if err := json.Unmarshal([]byte(s.stop()), &s.after); err != nil {
			b.Fatalf("the proxy of %d did not say its memory: %v", n, err)
		}
		b.Run(fmt.Sprintf("interactions=%d", n), func(b *testing.B) {
			b.ReportMetric(s.start.StartMs, "start-ms")
			b.ReportMetric(float64(s.start.RSS)/(1<<20), "rss-MB")
			b.ReportMetric(median(s.rates), "req/s")
			b.ReportMetric(median(s.ratios), "ratio-to-10")
			b.ReportMetric(slices.Min(s.ratios), "ratio-min")
			b.ReportMetric(slices.Max(s.ratios), "ratio-max")
			b.ReportMetric(float64(s.after.RSS)/(1<<20), "rss-after-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCassetteLoad reads a cassette of 1,000 recorded streams whole,
// as a recording run does at start: Load, which reads Write's layout by
// its own decoder, against yaml.v3 (cassette.Decode) on the same bytes.
//
//	go test ./bench -run '^$' -bench CassetteLoad -benchtime 5x
func BenchmarkCassetteLoad(b *testing.B) {
	dir := b.TempDir()
	scaleCassette(b, dir, 1000)
	path := filepath.Join(dir, "model.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var fast, yaml time.Duration
	for b.Loop() {
		start := time.Now()
		c, err := cassette.Load(path)
		fast += time.Since(start)
		if err != nil || len(c.Interactions) != 1000 {
			b.Fatal(err)
		}
		start = time.Now()
		c, err = cassette.Decode(bytes.NewReader(data), path)
		yaml += time.Since(start)
		if err != nil || len(c.Interactions) != 1000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fast.Milliseconds())/float64(b.N), "load-ms")
	b.ReportMetric(float64(yaml.Milliseconds())/float64(b.N), "yaml-ms")
	b.ReportMetric(yaml.Seconds()/fast.Seconds(), "x-yaml")
	b.ReportMetric(0, "ns/op")
}
