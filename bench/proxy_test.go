package bench

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// BenchmarkProxyLatency measures the latency each proxy adds to a request
// on a kept-alive connection, against the same local TLS upstream: bare
// goproxy MITM (with the same CA, so the TLS work is the same) and
// agentvcr's proxy in passthrough and in replay. It reports the added p50
// and p99 and their ratios to bare goproxy's (target <= 2).
func BenchmarkProxyLatency(b *testing.B) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","content":[{"type":"text","text":"ok"}]}`)
	}))
	defer upstream.Close()
	authority, err := ca.Load(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	upTransport := func() *http.Transport {
		t := upstream.Client().Transport.(*http.Transport).Clone()
		t.Proxy = nil
		return t
	}

	bare := goproxy.NewProxyHttpServer()
	bare.Tr = upTransport()
	bare.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: func(h string, _ *goproxy.ProxyCtx) (*tls.Config, error) {
			return authority.TLSConfig("127.0.0.1"), nil
		}}, host
	})
	ours := func(mode proxy.Mode) http.Handler {
		return &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: mode, Dir: b.TempDir(), Upstream: upTransport(),
			Rules: []proxy.Rule{{Name: "model", URLPrefix: upstream.URL + "/"}}}
	}
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	client := func(via http.Handler) (*http.Client, func()) {
		tlsConf := &tls.Config{RootCAs: roots}
		if via == nil {
			tlsConf = upstream.Client().Transport.(*http.Transport).TLSClientConfig
			return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}}, func() {}
		}
		srv := httptest.NewServer(via)
		u, _ := url.Parse(srv.URL)
		return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConf}}, srv.Close
	}
	measure := func(c *http.Client, n int) []time.Duration {
		lat := make([]time.Duration, n)
		for i := range lat {
			start := time.Now()
			resp, err := c.Post(upstream.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat[i] = time.Since(start)
		}
		slices.Sort(lat)
		return lat
	}
	pct := func(lat []time.Duration, p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)] }

	replay := ours(proxy.ModeAuto)
	clients := map[string]*http.Client{}
	for name, via := range map[string]http.Handler{"direct": nil, "goproxy": bare, "passthrough": ours(proxy.ModePassthrough), "replay": replay} {
		c, stop := client(via)
		defer stop()
		clients[name] = c
		measure(c, 50) // warm: connections, leaf certificates, the recording
	}
	n := 200 * b.N
	b.ResetTimer()
	lat := map[string][]time.Duration{}
	for _, name := range []string{"direct", "goproxy", "passthrough", "replay"} {
		lat[name] = measure(clients[name], n)
	}
	added := func(name string, p float64) float64 {
		return float64(pct(lat[name], p)-pct(lat["direct"], p)) / float64(time.Microsecond)
	}
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		base := added("goproxy", p.q)
		b.ReportMetric(base, "goproxy-added-"+p.name+"-µs")
		b.ReportMetric(added("passthrough", p.q), "passthrough-added-"+p.name+"-µs")
		b.ReportMetric(added("replay", p.q), "replay-added-"+p.name+"-µs")
		b.ReportMetric(added("passthrough", p.q)/base, "passthrough-"+p.name+"-ratio")
		b.ReportMetric(added("replay", p.q)/base, "replay-"+p.name+"-ratio")
	}
	b.ReportMetric(0, "ns/op")
}
