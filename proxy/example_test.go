package proxy_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// A proxy in front of a model API: a test opens a scope, the agent's
// request goes live and is recorded, the scope ends as passed and its
// recording is written; the next run replays it. Package control serves
// the same calls over HTTP for tests in other languages.
func ExampleProxy() {
	dir, _ := os.MkdirTemp("", "agentvcr-example")
	defer os.RemoveAll(dir)
	model := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"content":[{"type":"text","text":"hello"}]}`)
	}))
	defer model.Close()

	authority, err := ca.Load(dir) // agentvcr's own CA, never goproxy's
	if err != nil {
		panic(err)
	}
	upstream := model.Client().Transport.(*http.Transport).Clone()
	upstream.Proxy = nil
	p := &proxy.Proxy{CA: authority, Allow: []string{model.URL}, Mode: proxy.ModeAuto, Dir: dir, Upstream: upstream,
		Rules: []proxy.Rule{{Name: "model", URLPrefix: model.URL + "/v1/"}}}
	front := httptest.NewServer(p)
	defer front.Close()
	// The agent: its HTTPS_PROXY is the proxy, and it trusts the CA.
	proxyURL, _ := url.Parse(front.URL)
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	agent := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	ask := func() string {
		resp, err := agent.Post(model.URL+"/v1/messages", "application/json", strings.NewReader(`{"prompt":"hi"}`))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.Header.Get(proxy.Header)
	}

	if err := p.BeginScope("greets"); err != nil {
		panic(err)
	}
	fmt.Println(ask())
	res, err := p.EndScope("greets", true)
	fmt.Printf("%+v %v\n", res, err)
	fmt.Println(ask())
	// Output:
	// recorded
	// {Missed:0 Recorded:1 Dropped:0 UnknownSlack:[] Unscripted:[] Unused:[]} <nil>
	// replayed
}
