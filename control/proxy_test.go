package control

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// handler is the control API of p and the mocks it was given, with
// token.
func handler(p *proxy.Proxy, token string) http.Handler {
	return New(token, p, p.Slack.(*slack.Mock), p.Fake.(*fakeai.Model))
}

// echo is an upstream TLS server that answers every request with its
// path and body.
func echo(t *testing.T) *httptest.Server {
	t.Helper()
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q,"echo":%q}`, r.URL.Path, b)
	}))
	t.Cleanup(up.Close)
	return up
}

// front puts a proxy in front of an upstream TLS server, with the given
// rules, and returns it and a client that goes through it and trusts only
// its CA.
func front(t *testing.T, upstream *httptest.Server, mode proxy.Mode, dir string, rules ...proxy.Rule) (*proxy.Proxy, *http.Client) {
	t.Helper()
	return frontWith(t, upstream, func(p *proxy.Proxy) { p.Mode, p.Dir, p.Rules = mode, dir, rules })
}

// frontWith is front with the proxy's configuration set by configure,
// before it starts. The proxy has both mocks, as `recorder proxy` gives
// them: a Slack mock and a scripted model whose failures only the control
// API reports.
func frontWith(t *testing.T, upstream *httptest.Server, configure func(*proxy.Proxy)) (*proxy.Proxy, *http.Client) {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := upstream.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.ResponseHeaderTimeout = 2 * time.Second
	p := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Upstream: tr, Slack: slack.New(), Fake: fakeai.NewModel(func(string) {})}
	configure(p)
	return p, serve(t, p)
}

// restart writes what old recorded and starts the next run: a proxy
// configured as old was, with its mocks, on its cassettes, changed by
// change.
func restart(t *testing.T, upstream *httptest.Server, old *proxy.Proxy, change func(*proxy.Proxy)) (*proxy.Proxy, *http.Client) {
	t.Helper()
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	return frontWith(t, upstream, func(p *proxy.Proxy) {
		p.Allow, p.PassthroughUnlisted, p.Rules, p.Mode, p.Dir = old.Allow, old.PassthroughUnlisted, old.Rules, old.Mode, old.Dir
		p.Timing, p.MaxRecord, p.Log, p.Slack, p.Fake, p.HoldTimeout, p.Classify = old.Timing, old.MaxRecord, old.Log, old.Slack, old.Fake, old.HoldTimeout, old.Classify
		change(p)
	})
}

// serve starts p, serves it on loopback for the test, and returns an
// agent's client that goes through it and trusts its CA.
func serve(t *testing.T, p *proxy.Proxy) *http.Client {
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

// post sends a POST through the agent's client and returns the response
// and its body.
func post(t *testing.T, hc *http.Client, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := hc.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// anthropicClient is the Anthropic SDK through hc, without retries.
func anthropicClient(hc *http.Client, base string) anthropic.Client {
	return anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
}

// recorder keeps the events a proxy's subscriber gets.
type recorder struct {
	mu     sync.Mutex
	events []proxy.Event
}

func (r *recorder) handle(_ context.Context, ev proxy.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// wait returns the events once one of type typ has come, or fails the
// test after 3 s.
func (r *recorder) wait(t *testing.T, typ proxy.EventType) []proxy.Event {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		evs := append([]proxy.Event(nil), r.events...)
		r.mu.Unlock()
		for _, e := range evs {
			if e.Type == typ {
				return evs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event; got %s", typ, types(evs))
		}
	}
}

// types lists the events' types, text pieces left out.
func types(evs []proxy.Event) string {
	var s []string
	for _, e := range evs {
		if e.Type != proxy.EventStream {
			s = append(s, string(e.Type))
		}
	}
	return strings.Join(s, ",")
}
