package control_test

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

	"github.com/agentvcr/agentvcr/control"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// A proxy in front of a model API, with its control API: a test in any
// language opens a scope, the agent's request goes live and is recorded,
// the scope ends as passed and its recording is written; the next run
// replays it.
func ExampleNew() {
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
	sm, scripted := slack.New(), fakeai.NewModel(func(string) {})
	p := &proxy.Proxy{CA: authority, Allow: []string{model.URL}, Mode: proxy.ModeAuto, Dir: dir, Upstream: upstream,
		Rules: []proxy.Rule{{Name: "model", URLPrefix: model.URL + "/v1/"}}, Slack: sm, Fake: scripted}
	front := httptest.NewServer(p)
	defer front.Close()
	control := httptest.NewServer(control.New("token", p, sm, scripted))
	defer control.Close()

	call := func(path, body string) string {
		req, _ := http.NewRequest("POST", control.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, b))
	}
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

	fmt.Println(call("/v1/scopes", `{"name":"greets"}`))
	fmt.Println(ask())
	fmt.Println(call("/v1/scopes/greets/end", `{"passed":true}`))
	fmt.Println(ask())
	// Output:
	// 204
	// recorded
	// 200 {"missed":0,"recorded":1}
	// replayed
}
