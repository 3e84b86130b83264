package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// scaleRoleEnv makes the test binary start a replaying proxy on the
// cassettes of the directory it names, and report its start-up.
const scaleRoleEnv = "AGENTVCR_BENCH_SCALE_DIR"

type scaleStart struct {
	StartMs float64
	RSS     int64
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
	line, _ := json.Marshal(scaleStart{StartMs: float64(took.Microseconds()) / 1000, RSS: procStatus(os.Getpid(), "VmRSS")})
	runtime.KeepAlive(p) // its cassettes are what the memory holds
	fmt.Println(string(line))
	return 0
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
		req := fmt.Sprintf(`{"model":"claude-haiku-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":%q},{"role":"user","content":"turn %d"}]}`,
			strings.Repeat("Summarize the incident timeline so far. ", 22), i)
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
// a 6 KB stream each), and reports its start-up time and resident memory
// after it (targets at 10,000: 0.2 s and 80 MB).
//
//	go test ./bench -run '^$' -bench ReplayScale -benchtime 1x
func BenchmarkReplayScale(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("interactions=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			scaleCassette(b, dir, n)
			var best scaleStart
			for i := range 3 {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), scaleRoleEnv+"="+dir)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("the proxy did not start: %v", err)
				}
				var s scaleStart
				if err := json.Unmarshal(out, &s); err != nil {
					b.Fatalf("the proxy said %q: %v", out, err)
				}
				if i == 0 || s.StartMs < best.StartMs {
					best = s
				}
			}
			b.ReportMetric(best.StartMs, "start-ms")
			b.ReportMetric(float64(best.RSS)/(1<<20), "rss-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}
