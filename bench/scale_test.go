package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// scaleOrigin is the origin of the scale cassette's requests: the proxy
// allows it, and records it under the origin's rule.
const scaleOrigin = "https://api.anthropic.com"

// scaleFile is the scale cassette's file: the origin's rule's.
const scaleFile = "origin-api.anthropic.com.yaml"

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
		in := &cassette.Interaction{ID: i, Rule: strings.TrimSuffix(scaleFile, ".yaml"), Chunks: chunks,
			Request:  cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Body: req, Headers: http.Header{"Content-Type": {"application/json"}}},
			Response: cassette.Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"text/event-stream"}}, Body: body.String()}}
		x.Add(m, in)
		c.Interactions = append(c.Interactions, in)
	}
	if err := c.Write(filepath.Join(dir, scaleFile)); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReplayScale starts bench/proxyonly, the replaying proxy in a
// program of its own, on a cassette of 10, 1,000 and 10,000 interactions
// (a 1 KB request and a 6 KB, 50-chunk stream each), and reports its
// start-up time and its resident memory after it (targets at 10,000:
// 0.2 s and 80 MB), the best of 3 starts. Then it serves the three
// proxies, pinned to a core of their own as BenchmarkReplayThroughput
// does, with 16 concurrent requests at a time, each for the next
// interaction of its cassette in turn, so that at 10,000 most are served
// for the first time in a while. The runs (1.5 s each) are interleaved
// five times, as this machine's speed drifts within seconds; it reports
// the median req/s, its ratio to the 10-interaction figure of the same
// round (target >= 0.9 at 10,000) with the range, and each proxy's peak
// memory while it served.
//
//	go test ./bench -run '^$' -bench ReplayScale -benchtime 1x
func BenchmarkReplayScale(b *testing.B) {
	pinClient(b)
	sizes := []int{10, 1000, 10000}
	type scale struct {
		startMs  float64
		startRSS int64
		served   *server
		loads    []load
		ratios   []float64
	}
	runs := make([]*scale, len(sizes))
	for i, n := range sizes {
		s := &scale{}
		runs[i] = s
		dir := b.TempDir()
		scaleCassette(b, dir, n)
		caDir := filepath.Join(dir, "ca")
		for j := range 3 {
			started, stop := proxyOnly(b, caDir, dir, scaleOrigin)
			rss := procStatus(started.pid, "VmRSS")
			stop()
			if j == 0 || started.startMs < s.startMs {
				s.startMs, s.startRSS = started.startMs, rss
			}
		}
		s.served, _ = proxyOnly(b, caDir, dir, scaleOrigin)
	}
	for range 5 {
		for i, n := range sizes {
			s := runs[i]
			client := func() *http.Client { return trusting(s.served.url, s.served.ca) }
			l := rate(b, client, scaleOrigin+"/v1/messages",
				func(i int64) string { return scaleRequest(int(i % int64(n))) }, 16, 1500*time.Millisecond, s.served.pid)
			s.loads = append(s.loads, l)
			s.ratios = append(s.ratios, l.rps/runs[0].loads[len(s.loads)-1].rps)
		}
	}
	for i, n := range sizes {
		s := runs[i]
		b.Run(fmt.Sprintf("interactions=%d", n), func(b *testing.B) {
			var rates []float64
			var peak int64
			for _, l := range s.loads {
				rates = append(rates, l.rps)
				peak = max(peak, l.rss)
			}
			b.ReportMetric(s.startMs, "start-ms")
			b.ReportMetric(float64(s.startRSS)/(1<<20), "rss-MB")
			b.ReportMetric(median(rates), "req/s")
			b.ReportMetric(median(s.ratios), "ratio-to-10")
			b.ReportMetric(slices.Min(s.ratios), "ratio-min")
			b.ReportMetric(slices.Max(s.ratios), "ratio-max")
			b.ReportMetric(float64(peak)/(1<<20), "rss-serving-MB")
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
	path := filepath.Join(dir, scaleFile)
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
