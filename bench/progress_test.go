package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// BenchmarkProgressLatency measures, through the proxy in passthrough, how
// late each SSE event of a streamed Anthropic answer reaches the client:
// with no subscriber (plain passthrough), and with a subscriber that gets
// every progress event (the parser at work). It reports the p50 and p99
// per-event delay of each, the added microseconds (target < 50) and the
// ratios.
func BenchmarkProgressLatency(b *testing.B) {
	const events = 100
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10}}}\n\n")
		for i := range events {
			fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%d\"}}\n\n", time.Now().UnixNano())
			w.(http.Flusher).Flush()
			if i%10 == 9 {
				time.Sleep(200 * time.Microsecond)
			}
		}
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":100}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer upstream.Close()
	authority, err := ca.Load(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tr := upstream.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = nil
	p := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModePassthrough, Upstream: tr}
	srv := httptest.NewServer(p)
	defer srv.Close()
	client := trusting(srv.URL, authority.Cert.Raw)

	stream := func(into *[]time.Duration) {
		resp, err := client.Post(upstream.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			i := strings.Index(line, `"text":"`)
			if i < 0 {
				continue
			}
			ns, _ := strconv.ParseInt(strings.TrimSuffix(line[i+8:], `"}}`), 10, 64)
			*into = append(*into, time.Duration(time.Now().UnixNano()-ns))
		}
	}
	var plain, observed []time.Duration
	var got int
	for range 5 {
		stream(&[]time.Duration{})
	}
	for b.Loop() {
		stream(&plain)
		unsubscribe := p.Subscribe(func(_ context.Context, ev proxy.Event) {
			if ev.Type == proxy.EventStream {
				got++
			}
		})
		stream(&observed)
		unsubscribe()
	}
	if got != len(observed) {
		b.Fatalf("the subscriber saw %d text events of %d", got, len(observed))
	}
	slices.Sort(plain)
	slices.Sort(observed)
	pct := func(d []time.Duration, q float64) float64 {
		return float64(d[int(float64(len(d)-1)*q)]) / float64(time.Microsecond)
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		b.ReportMetric(pct(plain, q.q), "plain-"+q.name+"-µs")
		b.ReportMetric(pct(observed, q.q), "observed-"+q.name+"-µs")
		b.ReportMetric(pct(observed, q.q)-pct(plain, q.q), "added-"+q.name+"-µs")
		b.ReportMetric(pct(observed, q.q)/pct(plain, q.q), q.name+"-ratio")
	}
	b.ReportMetric(0, "ns/op")
}
