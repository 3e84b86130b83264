package bench

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// BenchmarkRecording records distinct model requests through the proxy
// into one cassette and reports what the agent waits for each recording
// when the cassette holds 10, 1,000 and 10,000 interactions: the mean of
// the 50 requests that take it there, and the ratio of the last to the
// first (target <= 1.5: the cost of a recording does not grow with its
// cassette). Cassettes are written in the background; the time Flush
// takes at the end is reported too.
func BenchmarkRecording(b *testing.B) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d}}`, len(body))
	}))
	defer upstream.Close()
	authority, err := ca.Load(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	sizes := []int{10, 1000, 10000}
	perRecording := map[int]time.Duration{}
	var flush time.Duration
	for range b.N {
		tr := upstream.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = nil
		p := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModeRecord, Dir: b.TempDir(), Upstream: tr,
			Rules: []proxy.Rule{{Name: "warm", URLPrefix: upstream.URL + "/warm", Mode: proxy.ModePassthrough}, {Name: "model", URLPrefix: upstream.URL + "/"}}}
		srv := httptest.NewServer(p)
		c := trusting(srv.URL, authority.Cert.Raw)
		// Warm: the connection and the leaf certificate, not recorded.
		for range 20 {
			resp, err := c.Post(upstream.URL+"/warm", "application/json", strings.NewReader(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		n := 0
		for _, size := range sizes {
			var spent time.Duration
			for ; n < size; n++ {
				start := time.Now()
				resp, err := c.Post(upstream.URL+"/v1/messages", "application/json",
					strings.NewReader(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"question %d"}]}`, n)))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n >= size-50 {
					spent += time.Since(start)
				}
			}
			perRecording[size] += spent / time.Duration(min(50, size))
		}
		start := time.Now()
		if err := p.Flush(); err != nil {
			b.Fatal(err)
		}
		flush += time.Since(start)
		if got := p.Stats().Recorded; got != sizes[len(sizes)-1] {
			b.Fatalf("recorded %d", got)
		}
		c.CloseIdleConnections()
		srv.Close()
	}
	for _, size := range sizes {
		b.ReportMetric(float64(perRecording[size]/time.Duration(b.N))/float64(time.Microsecond), fmt.Sprintf("µs/recording@%d", size))
	}
	b.ReportMetric(float64(perRecording[sizes[len(sizes)-1]])/float64(perRecording[sizes[0]]), "ratio")
	b.ReportMetric(float64(flush/time.Duration(b.N))/float64(time.Millisecond), "flush-ms")
	b.ReportMetric(0, "ns/op")
}
