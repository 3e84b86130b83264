package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// gatewayProxy starts a proxy with the default allow list and rules, its
// upstream the stand-in server, and returns it and an agent's client.
func gatewayProxy(t *testing.T, up *fakeai.Server, mode Mode, dir string) (*Proxy, *http.Client) {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{CA: authority, Allow: DefaultAllow(), Rules: DefaultRules(), Mode: mode, Dir: dir, Upstream: up.Transport()}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(client.CloseIdleConnections)
	return p, client
}

// gatewayTurn sends what @ai-sdk/gateway sends for one streamed turn.
func gatewayTurn(t *testing.T, client *http.Client) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "https://ai-gateway.vercel.sh/v3/ai/language-model", strings.NewReader(
		`{"prompt":[{"role":"system","content":"You are the support agent."},{"role":"user","content":[{"type":"text","text":"Did the deploy go out?"}]}],`+
			`"tools":[{"type":"function","name":"lookup","inputSchema":{"type":"object"}}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("ai-language-model-specification-version", "3")
	req.Header.Set("ai-language-model-id", "anthropic/claude-fake")
	req.Header.Set("ai-language-model-streaming", "true")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("gateway turn: %d %v\n%s", resp.StatusCode, err, b)
	}
	return resp.Header.Get(Header), string(b)
}

func TestRecordAStandInGatewayAndReplayItOffline(t *testing.T) {
	up := fakeai.NewServer(t)
	up.Respond(fakeai.Agent{Name: "support", Tools: []string{"lookup"}}, fakeai.ToolCalls(fakeai.Call("lookup", map[string]string{"q": "deploy"})))
	dir := t.TempDir()
	p, client := gatewayProxy(t, up, ModeRecord, dir)
	var live recorder
	defer p.Subscribe(live.handle)()
	outcome, recorded := gatewayTurn(t, client)
	live.wait(t, EventDone)
	if outcome != "recorded" || !strings.Contains(recorded, `"type":"tool-call"`) {
		t.Fatalf("live: %s %q", outcome, recorded)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	up.Close() // offline from here

	p, client = gatewayProxy(t, up, ModeReplay, dir)
	var replayed recorder
	defer p.Subscribe(replayed.handle)()
	outcome, body := gatewayTurn(t, client)
	evs := replayed.wait(t, EventDone)
	if outcome != "replayed" || body != recorded {
		t.Fatalf("replay: %s, the stream differs:\n%s\nwant\n%s", outcome, body, recorded)
	}
	if types(evs) != types(live.events) || types(evs) != "request,model_request,response,tool_request,done" {
		t.Fatalf("replay events %s; live %s", types(evs), types(live.events))
	}
}
